/*
Copyright 2026 The tenon Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package external_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
)

// The crash test: the example's Database reconciler against the API server, with a simulated
// cloud that loses responses, times out, fails, is slow and drifts, a cache that lags, and a
// process that is killed at every kind of step — before a write or a call to the cloud, after it
// and before the next (the status write included). Every case checks, after every round:
//
//   - never two instances for one Database (a blind second create would make one: the cloud of
//     most cases accepts a second instance of a name);
//   - no Insert, whatever its outcome, once the Database's deletion began;
//   - after a calm phase (no faults) while the Database lives: exactly one instance, running,
//     of the spec's tier, created with the password stored in the Database's Secret;
//   - after it is gone: no instance.
//
// TENON_EXTERNAL_SEED replays a run (each case's seed derives from it and the case's number);
// TENON_EXTERNAL_CASES sets the number of cases (default 24; make crash-external runs thousands);
// TENON_EXTERNAL_CASE=<n> runs case n alone. A failure prints the case's last events.

// crashCase is what one case found.
type crashCase struct {
	kills                                                                  map[string]int // by where: before or after a write or a call to the cloud
	lostResponses, timeouts, delayed, staleReads, drifts, creates, resizes int
	duplicates, leaks, createsAfterDeletion                                int
	stalledForAPerson                                                      int
}

func TestCrashesAtEveryStepLeaveExactlyOneInstanceWhileTheObjectLivesAndNoneAfter(t *testing.T) {
	seed := uint64(rand.Uint32())
	if s := os.Getenv("TENON_EXTERNAL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TENON_EXTERNAL_SEED=%q: %v", s, err)
		}
	}
	cases := 24
	if s := os.Getenv("TENON_EXTERNAL_CASES"); s != "" {
		var err error
		if cases, err = strconv.Atoi(s); err != nil || cases < 1 {
			t.Fatalf("TENON_EXTERNAL_CASES=%q: want a positive number", s)
		}
	}
	first := 0
	if s := os.Getenv("TENON_EXTERNAL_CASE"); s != "" {
		var err error
		if first, err = strconv.Atoi(s); err != nil || first < 0 {
			t.Fatalf("TENON_EXTERNAL_CASE=%q: want a case number", s)
		}
		cases = 1
	}
	ns := env.Namespace(t)
	api, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		total    crashCase
		failures []string
	)
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				found, err := runCrashCase(t.Context(), api, ns, seed, i)
				mu.Lock()
				total.add(found)
				if err != nil {
					failures = append(failures, fmt.Sprintf("case %d: %v", i, err))
				}
				mu.Unlock()
			}
		})
	}
	for i := range cases {
		work <- first + i
	}
	close(work)
	wg.Wait()

	summary := fmt.Sprintf("external crash test: seed %d, %d cases: %s, %d lost responses, %d timeouts, %d creates delivered late, %d stale reads, "+
		"%d drifts, %d creates, %d resizes, %d stalls a person resolved; %d duplicates, %d leaks, %d creates after deletion began",
		seed, cases, killSummary(total.kills), total.lostResponses, total.timeouts, total.delayed, total.staleReads, total.drifts, total.creates, total.resizes,
		total.stalledForAPerson, total.duplicates, total.leaks, total.createsAfterDeletion)
	if len(failures) == 0 {
		t.Log(summary)
	} else {
		slices.Sort(failures)
		t.Errorf("%s\n%s\nreplay with TENON_EXTERNAL_SEED=%d TENON_EXTERNAL_CASES=%d", summary, strings.Join(failures, "\n"), seed, cases)
	}
}

// killSummary says how many kills happened where.
func killSummary(kills map[string]int) string {
	n, wheres := 0, make([]string, 0, len(kills))
	for where, k := range kills {
		n += k
		wheres = append(wheres, fmt.Sprintf("%d %s", k, where))
	}
	slices.Sort(wheres)
	return fmt.Sprintf("%d kills (%s)", n, strings.Join(wheres, ", "))
}

func (c *crashCase) add(o crashCase) {
	if c.kills == nil {
		c.kills = map[string]int{}
	}
	for where, n := range o.kills {
		c.kills[where] += n
	}
	c.lostResponses += o.lostResponses
	c.timeouts += o.timeouts
	c.delayed += o.delayed
	c.staleReads += o.staleReads
	c.drifts += o.drifts
	c.creates += o.creates
	c.resizes += o.resizes
	c.duplicates += o.duplicates
	c.leaks += o.leaks
	c.createsAfterDeletion += o.createsAfterDeletion
	c.stalledForAPerson += o.stalledForAPerson
}

// crashRun is the state of one case.
type crashRun struct {
	ctx   context.Context
	api   client.WithWatch
	rng   *rand.Rand
	cloud *Cloud
	// idempotent: the Resource's IdempotentCreate, true when the cloud honours request ids or
	// refuses a second name.
	idempotent bool
	db         *Database
	name       string // the instance's name

	// chaos turns faults and kills on.
	chaos bool
	// deleting: the Database's deletion began.
	deleting bool
	found    crashCase
	proc     *process
	// trace records what happened, for the failure message.
	trace []string
	// history holds the versions of the Database seen, by resourceVersion, for stale reads.
	history []*Database
}

// process is one run of the controller: killed, it is replaced by a new one.
type process struct {
	dead  bool
	floor int // the oldest version of history its cache may still show
	r     *DatabaseReconciler
}

func runCrashCase(ctx context.Context, api client.WithWatch, ns string, seed uint64, i int) (crashCase, error) {
	run, err := crashCaseRun(ctx, api, ns, seed, i)
	if err != nil {
		trace := run.trace[max(0, len(run.trace)-60):]
		err = fmt.Errorf("%w\n          last events:\n          %s", err, strings.Join(trace, "\n          "))
	}
	return run.found, err
}

func crashCaseRun(ctx context.Context, api client.WithWatch, ns string, seed uint64, i int) (run *crashRun, err error) {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	opts := cloudOptions{}
	idempotent := true
	switch mode := rng.IntN(4); mode {
	case 0, 1:
		opts.honourRequestIDs = true
	case 2:
		opts.uniqueNames = true
	default:
		idempotent = false
	}
	run = &crashRun{ctx: ctx, api: api, rng: rng, cloud: NewCloud(opts), idempotent: idempotent}
	run.logf("cloud %+v, idempotent creates %t", opts, idempotent)
	run.cloud.fault = run.fault

	run.db = &Database{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("db-%d", i)}, Spec: DatabaseSpec{Tier: "small"}}
	if err := api.Create(ctx, run.db); err != nil {
		return run, err
	}
	run.name = "db-" + string(run.db.UID)
	run.restart()

	// Chaos while the Database lives, then either calm until it is available and a check that
	// it has exactly one instance, or a deletion in the middle of the chaos.
	deleteInChaos := rng.IntN(2) == 0
	deleteAt := 5 + rng.IntN(40)
	run.chaos = true
	for round := range 45 {
		if deleteInChaos && round == deleteAt {
			if err := run.delete(); err != nil {
				return run, err
			}
		}
		if err := run.round(); err != nil {
			return run, fmt.Errorf("round %d: %w", round, err)
		}
	}
	run.chaos = false
	if !run.deleting {
		if err := run.calm(); err != nil {
			return run, err
		}
		if err := run.delete(); err != nil {
			return run, err
		}
		run.chaos = true
		for round := range 20 {
			if err := run.round(); err != nil {
				return run, fmt.Errorf("deletion round %d: %w", round, err)
			}
		}
		run.chaos = false
	}
	if err := run.calm(); err != nil {
		return run, err
	}
	return run, nil
}

func (c *crashRun) logf(format string, args ...any) {
	c.trace = append(c.trace, fmt.Sprintf(format, args...))
}

// round does one thing: reconcile (most often), let the cloud's time pass, drift, change the
// spec, or restart the process; then checks the invariants.
func (c *crashRun) round() error {
	switch p := c.rng.Float64(); {
	case p < 0.6:
		_ = c.reconcile()
	case p < 0.85:
		c.logf("tick")
		c.cloud.Tick()
	case p < 0.89 && c.chaos:
		c.found.drifts++
		if c.rng.IntN(2) == 0 {
			c.logf("drift: deleted behind the back: %t", c.cloud.DeleteBehindTheBack(c.name))
		} else {
			c.logf("drift: resized behind the back: %t", c.cloud.ResizeBehindTheBack(c.name, "huge"))
		}
	case p < 0.94 && !c.deleting:
		if err := c.resize(); err != nil {
			return err
		}
	default:
		c.logf("restart")
		c.restart()
	}
	return c.check()
}

// calm runs without faults until the Database is available with its spec's tier, or gone, and
// checks the outcome. A create stalled with an unknown outcome is resolved as the documentation
// tells a person to: check the cloud, then remove the annotation.
func (c *crashRun) calm() error {
	for range 80 {
		c.restart() // a fresh process forgets the Lifecycle's backoff, which runs on the wall clock
		reconcileErr := c.reconcile()
		if err := c.check(); err != nil {
			return err
		}
		db := &Database{}
		err := c.api.Get(c.ctx, client.ObjectKeyFromObject(c.db), db)
		if apierrors.IsNotFound(err) {
			if n := len(c.instances()); n > 0 {
				c.found.leaks += n
				return fmt.Errorf("the Database is gone and left %d instances: %+v", n, c.instances())
			}
			return nil
		}
		if err != nil {
			return err
		}
		ready := conditions.Get(db, DatabaseReady)
		switch {
		case db.DeletionTimestamp != nil:
		case ready != nil && ready.Reason == string(external.ReasonCreateOutcomeUnknown):
			if err := c.resolveUnknownOutcome(db); err != nil {
				return err
			}
			continue
		case reconcileErr == nil && conditions.IsTrue(db, DatabaseReady) && conditions.IsCurrent(db, DatabaseReady) && conditions.IsReady(db):
			return c.checkAvailable(db)
		}
		c.cloud.Tick()
	}
	return fmt.Errorf("did not settle without faults in 80 rounds")
}

// resolveUnknownOutcome is the person of ReasonCreateOutcomeUnknown.
func (c *crashRun) resolveUnknownOutcome(db *Database) error {
	if c.idempotent {
		return fmt.Errorf("stalled with an unknown create outcome although creates are idempotent")
	}
	// A careful person waits longer than a request can be on its way before looking.
	c.cloud.Deliver()
	if n := len(c.instances()); n > 0 {
		c.logf("the person finds the instance: the next reconcile adopts it")
		return nil
	}
	c.found.stalledForAPerson++
	c.logf("the person removes the annotation")
	delete(db.Annotations, external.AnnotationPrefix+"database")
	return c.api.Update(c.ctx, db)
}

// checkAvailable checks a Database that settled: one instance, running, of its tier, with the
// password of its Secret.
func (c *crashRun) checkAvailable(db *Database) error {
	in := c.instances()
	if len(in) != 1 {
		return fmt.Errorf("available with %d instances, want exactly 1: %+v", len(in), in)
	}
	if in[0].State != stateRunning || in[0].Tier != db.Spec.Tier {
		return fmt.Errorf("available with instance %+v, want RUNNING of tier %s", in[0], db.Spec.Tier)
	}
	var secret corev1.Secret
	if err := c.api.Get(c.ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.Name + "-admin"}, &secret); err != nil {
		return err
	}
	if string(secret.Data["password"]) != in[0].Password {
		return fmt.Errorf("the instance's password is not the one stored in Secret %s", secret.Name)
	}
	return nil
}

// check checks what must hold after every round.
func (c *crashRun) check() error {
	if n := len(c.instances()); n > 1 {
		c.found.duplicates += n - 1
		return fmt.Errorf("%d instances for one Database: %+v", n, c.instances())
	}
	if c.found.createsAfterDeletion > 0 {
		return fmt.Errorf("%d Inserts after the deletion began", c.found.createsAfterDeletion)
	}
	return nil
}

func (c *crashRun) instances() []Instance {
	var out []Instance
	for _, in := range c.cloud.Instances() {
		if in.Name == c.name {
			out = append(out, in)
		}
	}
	return out
}

// reconcile runs one reconcile in the current process, and returns its error; a kill ends the
// process.
func (c *crashRun) reconcile() (err error) {
	defer func() {
		if v := recover(); v != nil {
			k, ok := v.(killed)
			if !ok {
				panic(v)
			}
			if c.found.kills == nil {
				c.found.kills = map[string]int{}
			}
			c.found.kills[k.where]++
			c.logf("  killed %s", k.where)
			c.restart()
			err = errors.New("killed")
		}
	}()
	c.logf("reconcile")
	res, err := c.proc.r.Reconcile(c.ctx, reconcileRequest(c.db))
	db := &Database{}
	_ = c.api.Get(c.ctx, client.ObjectKeyFromObject(c.db), db)
	ready := conditions.Get(db, DatabaseReady)
	if ready == nil {
		ready = &metav1.Condition{}
	}
	var deleting string
	if d := conditions.Get(db, conditions.Deleting); d != nil {
		deleting = "; deleting: " + d.Message
	}
	c.logf("  -> %v, %v; %s %s %q; %s; instances %+v%s", res.RequeueAfter, err, ready.Status, ready.Reason, ready.Message,
		db.Annotations[external.AnnotationPrefix+"database"], c.instances(), deleting)
	return err
}

// restart starts a new process: a new reconciler, whose cache starts from the latest version.
func (c *crashRun) restart() {
	p := &process{floor: max(len(c.history)-1, 0)}
	p.r = NewDatabaseReconciler(c.client(p), c.api, c.cloud)
	p.r.database.IdempotentCreate = c.idempotent
	c.proc = p
}

// delete deletes the Database. A create held up in the network arrives first: one that arrives
// after the deletion step observed nothing leaks, a window no client can close (see the package
// documentation), which this test does not open.
func (c *crashRun) delete() error {
	c.cloud.Deliver()
	c.deleting = true
	c.logf("delete")
	return client.IgnoreNotFound(c.api.Delete(c.ctx, c.db))
}

// resize changes the Database's tier.
func (c *crashRun) resize() error {
	tiers := []string{"small", "medium", "large"}
	patch := []byte(fmt.Sprintf(`{"spec":{"tier":%q}}`, tiers[c.rng.IntN(len(tiers))]))
	c.found.resizes++
	c.logf("spec: %s", patch)
	return client.IgnoreNotFound(c.api.Patch(c.ctx, c.db.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)))
}

// fault is the cloud's fault hook: it counts Inserts after the deletion began and, in chaos,
// injects faults and kills.
func (c *crashRun) fault(call cloudCall) cloudFault {
	f := c.chooseFault(call)
	if call.Method != "Get" && call.Method != "Operation" || f != faultNone {
		c.logf("  cloud %s %s: fault %d", call.Method, call.Name, f)
	}
	return f
}

func (c *crashRun) chooseFault(call cloudCall) cloudFault {
	if call.Method == "Insert" {
		c.found.creates++
		if c.deleting {
			c.found.createsAfterDeletion++
		}
	}
	if !c.chaos {
		return faultNone
	}
	p := c.rng.Float64()
	if call.Method == "Get" || call.Method == "Operation" {
		switch {
		case p < 0.02:
			return c.kill(faultCrashBefore)
		case p < 0.05:
			c.found.lostResponses++
			return faultLoseResponse
		case p < 0.08:
			c.found.timeouts++
			return faultTimeoutBefore
		}
		return faultNone
	}
	// Calls that change something get more faults, the crash after the call most of all.
	switch {
	case p < 0.06:
		return c.kill(faultCrashBefore)
	case p < 0.16:
		return c.kill(faultCrashAfter)
	case p < 0.22:
		c.found.lostResponses++
		return faultLoseResponse
	case p < 0.27:
		c.found.timeouts++
		return faultTimeoutBefore
	case p < 0.42 && call.Method == "Insert":
		c.found.delayed++
		return faultDelayed
	case p < 0.46:
		return faultOperationFails
	case p < 0.48:
		return faultOperationInvalid
	case p < 0.52:
		return faultOperationSlow
	}
	return faultNone
}

func (c *crashRun) kill(f cloudFault) cloudFault {
	c.proc.dead = true
	return f
}

// client is the process's client of the API server: reads of the Database may return an older
// version than the latest (never older than the process already read: a cache does not go back),
// and in chaos each write may kill the process before or after it is sent. A dead process
// sends nothing more.
func (c *crashRun) client(p *process) client.Client {
	errDead := errors.New("the process is dead")
	write := func(send func() error) error {
		if p.dead {
			return errDead
		}
		if c.chaos {
			switch x := c.rng.Float64(); {
			case x < 0.04:
				p.dead = true
				panic(killed{where: "before a write"})
			case x < 0.08:
				_ = send() // sent, and the process dies before it reads the answer
				p.dead = true
				panic(killed{where: "after a write"})
			}
		}
		return send()
	}
	return interceptor.NewClient(c.api, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if p.dead {
				return errDead
			}
			db, ok := obj.(*Database)
			if !ok {
				return cl.Get(ctx, key, obj, opts...)
			}
			if err := cl.Get(ctx, key, db, opts...); err != nil {
				return err
			}
			c.remember(db)
			// A cache shows a version between the oldest this process may still see and the
			// latest, more often the latest.
			idx := len(c.history) - 1
			if c.chaos && c.rng.IntN(2) == 0 && idx > p.floor {
				idx = p.floor + c.rng.IntN(idx-p.floor+1)
			}
			if idx < 0 || c.history[idx].UID != db.UID {
				return nil
			}
			if idx < len(c.history)-1 {
				c.found.staleReads++
			}
			p.floor = idx
			*db = *c.history[idx].DeepCopy()
			return nil
		},
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return write(func() error { return cl.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return write(func() error { return c.remembered(obj, cl.Update(ctx, obj, opts...)) })
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return write(func() error { return c.remembered(obj, cl.Patch(ctx, obj, patch, opts...)) })
		},
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return write(func() error { return cl.Delete(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return write(func() error { return c.remembered(obj, cl.SubResource(sub).Patch(ctx, obj, patch, opts...)) })
		},
		SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return write(func() error { return c.remembered(obj, cl.SubResource(sub).Update(ctx, obj, opts...)) })
		},
	})
}

// remembered records the Database a write returned, and returns err.
func (c *crashRun) remembered(obj client.Object, err error) error {
	if db, ok := obj.(*Database); ok && err == nil {
		c.remember(db)
	}
	return err
}

// remember adds db to the history when it is newer than the last version there.
func (c *crashRun) remember(db *Database) {
	rv, err := strconv.ParseInt(db.ResourceVersion, 10, 64)
	if err != nil || db.UID != c.db.UID {
		return
	}
	if n := len(c.history); n > 0 {
		last, _ := strconv.ParseInt(c.history[n-1].ResourceVersion, 10, 64)
		if rv <= last {
			return
		}
	}
	c.history = append(c.history, db.DeepCopy())
}
