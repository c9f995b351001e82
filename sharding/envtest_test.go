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

package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var (
	env    *testenv.Environment
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	// The API server shards lists and watches for the rings sharded by it (Ranges).
	env = testenv.New(testenv.Options{Scheme: scheme, AuditLog: true, FeatureGates: map[string]bool{"ShardedListAndWatch": true}})
	os.Exit(env.Run(m))
}

// The lease timing of the shards in these tests: short, so that a takeover happens within
// seconds. The fence closes leaseDuration − margin (a fifth) = 2.4 s after a renewal started.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2500 * time.Millisecond
	retryPeriod   = 500 * time.Millisecond
	margin        = leaseDuration / 5
)

// shardAgent is the User-Agent of a shard's clients, by which the audit log tells its writes.
func shardAgent(name string) string { return "shard/" + name }

// sharderAgent is the reference sharder's User-Agent.
const sharderAgent = "reference-sharder"

// workload is a shard's business: it writes the main ConfigMap on every reconcile (an
// annotation), then keeps a child Secret that names the shard, and comes back at once, so that
// a shard writes its objects all the time and a second writer would show in the audit log.
type workload struct {
	client  client.Client
	applier *patch.Applier
	shard   string
	// latency is how long the reconcile waits, as for an external call, between its read
	// and its writes.
	latency time.Duration
	// guarded makes the write of the main object conditional on the uid read, as
	// patch.Helper's writes are: it never lands on an object created again under the name.
	guarded bool
}

func (w *workload) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := w.client.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.latency > 0 {
		timer := time.NewTimer(w.latency)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctrl.Result{}, ctx.Err()
		}
	}
	body := fmt.Sprintf(`{"metadata":{"annotations":{"test.tenon.dev/written-by":%q,"test.tenon.dev/at":%q}}}`,
		w.shard, time.Now().Format(time.RFC3339Nano))
	if w.guarded {
		// A uid in a patch is a precondition: the API server refuses the patch with a conflict
		// when the object's uid differs.
		body = fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{"test.tenon.dev/written-by":%q,"test.tenon.dev/at":%q}}}`,
			cm.UID, w.shard, time.Now().Format(time.RFC3339Nano))
	}
	if err := w.client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	child := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + "-child"},
		Data:       map[string][]byte{"shard": []byte(w.shard)},
	}
	if _, err := w.applier.Apply(ctx, child, patch.OwnedBy(cm)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: 20 * time.Millisecond}, nil
}

// runningShard is a shard's manager, running.
type runningShard struct {
	name  string
	stop  context.CancelFunc
	done  chan error
	stall *stall
	// ranges and cache are the shard's in a ring sharded by the API server.
	ranges *sharding.Ranges
	cache  cache.Cache
}

// stall makes the requests for the shard's Lease hang, ignoring their context, until released:
// the shard's renewal loop is stuck as in a paused process, while its controllers go on.
type stall struct {
	mu      sync.Mutex
	stalled bool
	release chan struct{}
}

func newStall() *stall { return &stall{release: make(chan struct{})} }

func (s *stall) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = true
}

// end lets the hanging requests fail, and reports whether the stall had started.
func (s *stall) end() (started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled {
		s.stalled = false
		close(s.release)
		return true
	}
	return false
}

func (s *stall) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		s.mu.Lock()
		stalled, release := s.stalled, s.release
		s.mu.Unlock()
		if stalled {
			<-release
			return nil, errors.New("stalled")
		}
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// shardOptions vary a shard.
type shardOptions struct {
	latency time.Duration
	// unfenced runs the shard with plain leader election on its Lease: a negative control.
	unfenced bool
	// customize, when set, changes the manager's options before the shard's.
	customize func(*manager.Options)
	// setup, when set, adds the shard's controllers instead of the workload's.
	setup func(mgr manager.Manager, shard sharding.Shard, cfg *rest.Config) error
	// tolerateStopError accepts an error from the manager's Start when the test ends.
	tolerateStopError bool
	// guarded makes the workload's writes of the main object conditional on its uid.
	guarded bool
	// ranges, when set, runs the shard in a ring sharded by the API server (sharding.Ranges)
	// instead of the sharder's: its Namespace is the test's.
	ranges *sharding.RangeOptions
}

// startShard runs shard name of the ring in ns, with the workload's controller unless so
// sets up others, and stops it when the test ends.
func startShard(t *testing.T, ns, name string, so shardOptions) *runningShard {
	t.Helper()
	shard, err := sharding.New(ring, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config())
	cfg.UserAgent = shardAgent(name)
	st := newStall()
	leaderCfg := rest.CopyConfig(env.Config())
	leaderCfg.Wrap(st.wrap)
	// A scheme of its own: with a LeaderElectionConfig, controller-runtime's manager.New adds
	// types to the scheme it is given, while other shards and the sharder read theirs.
	own := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(own); err != nil {
		t.Fatal(err)
	}
	opts := manager.Options{
		Scheme:                  own,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		LeaderElectionNamespace: ns,
		LeaderElectionConfig:    leaderCfg,
		LeaseDuration:           ptr.To(leaseDuration),
		RenewDeadline:           ptr.To(renewDeadline),
		RetryPeriod:             ptr.To(retryPeriod),
	}
	if so.customize != nil {
		so.customize(&opts)
	}
	if so.unfenced {
		lock, err := sharding.ForManager(rest.CopyConfig(cfg), &opts, shard)
		if err != nil {
			t.Fatal(err)
		}
		_ = lock // the fence of a config this shard does not use
	} else if _, err := sharding.ForManager(cfg, &opts, shard); err != nil {
		t.Fatal(err)
	}
	var ranges *sharding.Ranges
	if so.ranges != nil {
		ro := *so.ranges
		ro.Namespace = ns
		if ranges, err = sharding.NewRanges(shard, ro); err != nil {
			t.Fatal(err)
		}
		if err := ranges.SelectCache(&opts.Cache, &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
	} else if err := shard.SelectCache(&opts.Cache, &corev1.ConfigMap{}, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ranges != nil {
		if err := ranges.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	setup := so.setup
	if setup == nil {
		setup = func(mgr manager.Manager, shard sharding.Shard, _ *rest.Config) error {
			w := &workload{client: mgr.GetClient(), applier: patch.NewApplier(mgr.GetClient(), "shard-test", patch.ApplierOptions{}), shard: name, latency: so.latency, guarded: so.guarded}
			var r reconcile.Reconciler
			var err error
			if ranges != nil {
				r, err = ranges.Reconciler(mgr.GetClient(), &corev1.ConfigMap{}, w)
			} else {
				r, err = shard.Reconciler(mgr.GetClient(), &corev1.ConfigMap{}, w)
			}
			if err != nil {
				return err
			}
			return ctrl.NewControllerManagedBy(mgr).Named("shard").
				WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
				For(&corev1.ConfigMap{}, builder.WithPredicates(shard.Predicate(predicate.GenerationChangedPredicate{}))).
				Owns(&corev1.Secret{}).
				Complete(r)
		}
	}
	if err := setup(mgr, shard, cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningShard{name: name, stop: cancel, done: make(chan error, 1), stall: st, ranges: ranges, cache: mgr.GetCache()}
	go func() { s.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stalled := st.end()
		cancel()
		// A shard whose renewals stalled lost its Lease, and its manager says so.
		if err := <-s.done; err != nil && !stalled && !so.tolerateStopError {
			t.Errorf("shard %s stopped with an error: %v", name, err)
		}
	})
	return s
}

// startSharder runs the reference sharder for the ring's ConfigMaps (main) and Secrets
// (controlled) in ns, with its wall clock skewed by skew.
func startSharder(t *testing.T, ns string, clk clock.PassiveClock, moveWithoutDrain bool) *sharder.Sharder {
	t.Helper()
	cfg := rest.CopyConfig(env.Config())
	cfg.UserAgent = sharderAgent
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sharder.New(c, sharder.Options{
		Ring:             ring,
		LeaseNamespace:   ns,
		Namespaces:       []string{ns},
		Resources:        []sharder.Resource{{Object: &corev1.ConfigMap{}, Controlled: []client.Object{&corev1.Secret{}}}},
		Clock:            clk,
		SyncPeriod:       50 * time.Millisecond,
		MoveWithoutDrain: moveWithoutDrain,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the sharder stopped with an error: %v", err)
		}
	})
	return s
}

// skewedClock is the real clock, off by an offset that the test sets when the skew matters:
// a taker whose clock is ahead past the bound may take a shard's Lease or slices before the
// test has spread the objects over both shards, which is not what the test is about.
type skewedClock struct{ offset atomic.Int64 }

func (c *skewedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// skew puts the clock ahead of the real one by d.
func (c *skewedClock) skew(d time.Duration) { c.offset.Store(int64(d)) }

// createObjects creates n main ConfigMaps in ns, named object-0, object-1, ... but for names
// skipped so that the ring of shard-a and shard-b places at least one on each: the ring places
// objects by their namespace's random name, and 8 consecutive names all land on one of two shards
// in about one test of 128, where a shard joining would move nothing.
func createObjects(t *testing.T, ns string, n int) []string {
	t.Helper()
	shards := []string{"shard-a", "shard-b"}
	missing := sets.New(shards...)
	configMaps := schema.GroupKind{Kind: "ConfigMap"}
	var names []string
	for i := 0; len(names) < n; i++ {
		name := fmt.Sprintf("object-%d", i)
		shard := sharder.ShardFor(shards, configMaps, client.ObjectKey{Namespace: ns, Name: name})
		if !missing.Has(shard) && n-len(names) <= missing.Len() {
			continue
		}
		missing.Delete(shard)
		if err := env.Client().Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// spread waits until shard-a and shard-b are both available to s and every object of names is
// assigned, and checks that each shard holds one (createObjects chose the names for that).
func spread(t *testing.T, g Gomega, s *sharder.Sharder, ns string, names []string) []string {
	t.Helper()
	ctx := t.Context()
	g.Eventually(func(g Gomega) {
		shards, err := s.Shards(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		available := map[string]bool{}
		for _, sh := range shards {
			available[sh.Name] = sh.State.Available()
		}
		g.Expect(available).To(HaveKeyWithValue("shard-a", true))
		g.Expect(available).To(HaveKeyWithValue("shard-b", true))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		held := holders(ctx, g, ns, names)
		g.Expect(held).NotTo(ContainElement(BeEmpty()), "objects not assigned yet")
		g.Expect(held).To(ContainElements("shard-a", "shard-b"), "the ring placed all of %d objects on one shard", len(names))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	return names
}

// holders returns the shard label of each main object in ns.
func holders(ctx context.Context, g Gomega, ns string, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
		out[name] = cm.Labels[shardLabel]
	}
	return out
}

// writtenByHolders checks that every object in ns was last written by the shard that holds it.
func writtenByHolders(ctx context.Context, g Gomega, ns string, names []string) {
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
		g.Expect(cm.Labels[shardLabel]).NotTo(BeEmpty(), "%s is not assigned", name)
		g.Expect(cm.Annotations["test.tenon.dev/written-by"]).To(Equal(cm.Labels[shardLabel]), "%s is not written by its shard yet", name)
	}
}

// violations returns the successful writes by shards to the ring's objects in ns (main
// ConfigMaps and their child Secrets) that no epoch of the writing shard covers (see
// sharder.Epochs). Events and Leases are not the ring's objects and are not checked.
func violations(t *testing.T, events testenv.AuditEvents, moves []sharder.Move, ns string, shards []string) []string {
	t.Helper()
	// The sharder's successful writes to each main object, in order, are its moves of it.
	sharderWrites := map[client.ObjectKey][]time.Time{}
	for _, e := range events {
		if e.UserAgent == sharderAgent && e.Resource == "configmaps" && e.Namespace == ns && e.IsWrite() && e.Code < 300 {
			key := client.ObjectKey{Namespace: ns, Name: e.Name}
			sharderWrites[key] = append(sharderWrites[key], e.Received)
		}
	}
	epochs, err := sharder.Epochs(moves, schema.GroupKind{Kind: "ConfigMap"}, sharderWrites)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("TENON_SHARD_DEBUG") != "" {
		counts := events.Count(func(e testenv.AuditEvent) string { return e.UserAgent + " " + e.Verb + " " + e.Resource })
		t.Logf("audit: %v", counts)
		t.Logf("moves: %v", moves)
		t.Logf("epochs: %v", epochs)
	}
	var out []string
	for _, e := range events {
		shard, ok := strings.CutPrefix(e.UserAgent, "shard/")
		if !ok || !slices.Contains(shards, shard) || e.Namespace != ns || !e.IsWrite() || e.Code >= 300 {
			continue
		}
		object := client.ObjectKey{Namespace: ns, Name: e.Name}
		switch e.Resource {
		case "configmaps":
		case "secrets":
			object.Name = strings.TrimSuffix(e.Name, "-child")
		default:
			continue
		}
		if !sharder.Covered(epochs[object], shard, e.Received) {
			out = append(out, fmt.Sprintf("%s %s %s/%s by %s, received %s, completed %s; epochs of %s: %v",
				e.Verb, e.Resource, e.Namespace, e.Name, shard, e.Received.Format(time.RFC3339Nano), e.Completed.Format(time.RFC3339Nano), object.Name, epochs[object]))
		}
	}
	return out
}

// mark takes a mark in the audit log.
func mark(t *testing.T) testenv.AuditMark {
	t.Helper()
	m, err := env.AuditLog().Mark(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// between returns the requests the audit log holds between two marks.
func between(t *testing.T, from, to testenv.AuditMark) testenv.AuditEvents {
	t.Helper()
	events, err := env.AuditLog().Between(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// When a shard joins, the sharder drains the objects the ring now assigns to it: the old shard
// acknowledges after its reconcile in flight, so no object is written by both. Moving the
// objects without the drain (the negative control) lets the old shard's reconciles in flight
// write after the new shard took over, which the checker must catch.
func TestAShardJoiningTakesObjectsOverWithoutTwoWriters(t *testing.T) {
	for _, tc := range []struct {
		name             string
		moveWithoutDrain bool
	}{
		{name: "with the drain"},
		{name: "moved without a drain (negative control)", moveWithoutDrain: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			start := mark(t)
			s := startSharder(t, ns, clock.RealClock{}, tc.moveWithoutDrain)
			// A reconcile of shard a spends most of its time between its read and its writes,
			// as one that calls an external system does.
			startShard(t, ns, "shard-a", shardOptions{latency: 150 * time.Millisecond})
			names := createObjects(t, ns, 8)
			g.Eventually(func(g Gomega) { writtenByHolders(ctx, g, ns, names) }).WithTimeout(30 * time.Second).Should(Succeed())

			startShard(t, ns, "shard-b", shardOptions{})
			g.Eventually(func(g Gomega) {
				g.Expect(holders(ctx, g, ns, names)).To(ContainElement("shard-b"), "no object moved to shard-b")
				writtenByHolders(ctx, g, ns, names)
			}).WithTimeout(30 * time.Second).Should(Succeed())
			end := mark(t)

			moves := s.Moves()
			found := violations(t, between(t, start, end), moves, ns, []string{"shard-a", "shard-b"})
			if tc.moveWithoutDrain {
				g.Expect(found).NotTo(BeEmpty(), "the checker missed two writers")
				return
			}
			g.Expect(slices.ContainsFunc(moves, func(m sharder.Move) bool { return m.Drain })).To(BeTrue(), "nothing was drained")
			g.Expect(found).To(BeEmpty(), "writes outside the writer's epochs")
		})
	}
}

// A shard whose renewals hang (its process paused, its connection to the API server stuck) goes
// on reconciling; the sharder takes its Lease over at renewTime + 2 × leaseDuration by its own
// clock and moves its objects without a drain. The fence must have stopped the shard's writes
// by then, for any skew of the sharder's clock below leaseDuration + margin. Past that bound,
// and without the fence, the stalled shard writes after the takeover (negative controls).
func TestATakeoverFindsTheStalledShardFenced(t *testing.T) {
	takeoverCases(t, "the sharder's clock", takeover)
}

// takeoverCases runs a takeover of a stalled shard (run, with the taker's clock skewed and the
// stalled shard fenced or not) in each case of the clock-skew bound, leaseDuration + margin: in
// step, ahead within it, ahead past it, and without the fence. The last two are negative controls,
// in which the checker must find the stalled shard's writes after the takeover. clock names the
// taker's clock in the cases' names.
func takeoverCases(t *testing.T, clock string, run func(t *testing.T, g Gomega, skew time.Duration, unfenced bool) []string) {
	t.Helper()
	bound := leaseDuration + margin
	for _, tc := range []struct {
		name           string
		skew           time.Duration
		unfenced       bool
		wantViolations bool
	}{
		{name: clock + " in step", skew: 0},
		{name: clock + " ahead, within the bound", skew: bound - 1100*time.Millisecond},
		{name: clock + " ahead past the bound (negative control)", skew: bound + 900*time.Millisecond, wantViolations: true},
		{name: "a shard without the fence (negative control)", skew: 0, unfenced: true, wantViolations: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			// A negative control depends on a reconcile being in flight in the window it opens,
			// which a loaded machine may miss: it gets three tries to show the second writer.
			attempts := 1
			if tc.wantViolations {
				attempts = 3
			}
			var found []string
			for range attempts {
				if found = run(t, g, tc.skew, tc.unfenced); len(found) > 0 {
					break
				}
			}
			if tc.wantViolations {
				g.Expect(found).NotTo(BeEmpty(), "the checker missed the stalled shard's writes after the takeover, %d times", attempts)
				return
			}
			g.Expect(found).To(BeEmpty(), "writes outside the writer's epochs")
		})
	}
}

// takeover runs shards a and b with the sharder's clock skewed by skew, stalls a's renewals
// until the sharder took its Lease over and b holds every object, and returns the writes
// outside their writer's epochs.
func takeover(t *testing.T, g Gomega, skew time.Duration, unfenced bool) []string {
	t.Helper()
	ctx := t.Context()
	ns := env.Namespace(t)
	start := mark(t)
	clk := &skewedClock{}
	s := startSharder(t, ns, clk, false)
	// Reconciles with a latency are in flight when the takeover comes.
	a := startShard(t, ns, "shard-a", shardOptions{latency: 150 * time.Millisecond, unfenced: unfenced})
	startShard(t, ns, "shard-b", shardOptions{})
	names := spread(t, g, s, ns, createObjects(t, ns, 8))
	g.Eventually(func(g Gomega) {
		g.Expect(holders(ctx, g, ns, names)).To(ContainElements("shard-a", "shard-b"))
		writtenByHolders(ctx, g, ns, names)
	}).WithTimeout(30 * time.Second).Should(Succeed())

	clk.skew(skew)
	a.stall.start()
	g.Eventually(func(g Gomega) {
		g.Expect(holders(ctx, g, ns, names)).To(HaveEach("shard-b"))
		writtenByHolders(ctx, g, ns, names)
	}).WithTimeout(30 * time.Second).Should(Succeed())
	shards, err := s.Shards(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(shards).To(ContainElement(And(
		HaveField("Name", "shard-a"), HaveField("State", sharder.Dead))), "the sharder did not take shard-a's Lease over")
	end := mark(t)
	return violations(t, between(t, start, end), s.Moves(), ns, []string{"shard-a", "shard-b"})
}

// A shard that stops releases its Lease after its controllers stopped; the sharder moves its
// objects at once, without a drain, and no object is written by two.
func TestAShardThatStopsHandsItsObjectsOver(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	start := mark(t)
	s := startSharder(t, ns, clock.RealClock{}, false)
	a := startShard(t, ns, "shard-a", shardOptions{latency: 50 * time.Millisecond})
	startShard(t, ns, "shard-b", shardOptions{})
	names := spread(t, g, s, ns, createObjects(t, ns, 8))
	g.Eventually(func(g Gomega) {
		g.Expect(holders(ctx, g, ns, names)).To(ContainElements("shard-a", "shard-b"))
		writtenByHolders(ctx, g, ns, names)
	}).WithTimeout(30 * time.Second).Should(Succeed())

	a.stop()
	g.Expect(<-a.done).To(Succeed(), "shard-a did not stop cleanly")
	a.done <- nil // for the cleanup
	g.Eventually(func(g Gomega) {
		g.Expect(holders(ctx, g, ns, names)).To(HaveEach("shard-b"))
		writtenByHolders(ctx, g, ns, names)
	}).WithTimeout(30 * time.Second).Should(Succeed())
	end := mark(t)
	g.Expect(violations(t, between(t, start, end), s.Moves(), ns, []string{"shard-a", "shard-b"})).To(BeEmpty())
}

// Children follow their controller: the sharder assigns each child Secret to its owner's shard.
func TestChildrenShareTheirOwnersShard(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	s := startSharder(t, ns, clock.RealClock{}, false)
	startShard(t, ns, "shard-a", shardOptions{})
	startShard(t, ns, "shard-b", shardOptions{})
	names := spread(t, g, s, ns, createObjects(t, ns, 8))
	g.Eventually(func(g Gomega) {
		owners := holders(ctx, g, ns, names)
		g.Expect(owners).To(ContainElements("shard-a", "shard-b"))
		for _, name := range names {
			child := &corev1.Secret{}
			g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-child"}, child)).To(Succeed())
			g.Expect(child.Labels[shardLabel]).To(Equal(owners[name]), "the child of %s", name)
			g.Expect(string(child.Data["shard"])).To(Equal(owners[name]), "the child of %s was not applied by its owner's shard", name)
		}
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
