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

package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The ring of the sharded scenario, its most shards, the Lease timings of its shards, the
// User-Agent of the reference sharder, by which the audit log tells the sharder's writes, and the
// ring's labels.
const (
	ringName                           = "cluster-operator"
	ringShards                         = 4
	shardLease, shardRenew, shardRetry = 4 * time.Second, 3 * time.Second, 500 * time.Millisecond
	sharderAgent                       = "reference-sharder"
	shardLabelKey                      = sharding.ShardLabelPrefix + ringName
	drainLabelKey                      = sharding.DrainLabelPrefix + ringName
)

// ring is the operator run as shards, each a manager binary with --controller-ring, each its own
// user behind its own proxy, and the reference sharder of testing/sharder in this process.
type ring struct {
	w       *world
	ns      string
	sharder *sharder.Sharder
	users   map[string]*testenv.User
	proxies map[string]*proxy
	procs   map[string]*process
	log     *writes
}

func shardName(i int) string { return fmt.Sprintf("shard-%d", i) }

// ringNames returns count names of Clusters in ns, ring-0, ring-1, ... but for names skipped so
// that every shard of the full ring holds at least one: otherwise the steps that add or stop
// shard-3 could move nothing (with 12 Clusters, about one namespace in 27 leaves a shard empty).
func ringNames(ns string, count int) []string {
	shards := make([]string, ringShards)
	for i := range shards {
		shards[i] = shardName(i)
	}
	missing := sets.New(shards...)
	clusters := appsv1alpha1.GroupVersion.WithKind("Cluster").GroupKind()
	var names []string
	for i := 0; len(names) < count; i++ {
		name := fmt.Sprintf("ring-%d", i)
		shard := sharder.ShardFor(shards, clusters, client.ObjectKey{Namespace: ns, Name: name})
		if missing.Has(shard) || count-len(names) > missing.Len() {
			names = append(names, name)
			missing.Delete(shard)
		}
	}
	return names
}

// ringResources are the kinds of the ring, as config/sharding's ControllerRing lists them:
// Clusters, and the StatefulSets, Services and ConfigMaps they control.
var ringResources = []sharder.Resource{{
	Object:     &appsv1alpha1.Cluster{},
	Controlled: []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}},
}}

// newClusterSharder returns the reference sharder of the ring (ringResources) for the Clusters of
// ns, with its own User-Agent, by which the audit log tells its writes. Its client watches, so that it labels a new child as soon as it appears, as the
// production sharder's webhook does at admission, rather than in its next pass: a child missing
// from its shard's cache costs that shard writes.
func newClusterSharder(t *testing.T, ns string, syncPeriod time.Duration) *sharder.Sharder {
	t.Helper()
	cfg := rest.CopyConfig(env.Config())
	cfg.UserAgent = sharderAgent
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("failed to create the sharder's client: %v", err)
	}
	s, err := sharder.New(c, sharder.Options{
		Ring:           ringName,
		LeaseNamespace: systemNamespace,
		Namespaces:     []string{ns},
		Resources:      ringResources,
		SyncPeriod:     syncPeriod,
	})
	if err != nil {
		t.Fatalf("failed to create the sharder: %v", err)
	}
	return s
}

// runSharder runs s until the test ends.
func runSharder(t *testing.T, s *sharder.Sharder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the sharder stopped with an error: %v", err)
		}
	})
}

func newRing(t *testing.T, w *world, ns string) *ring {
	t.Helper()
	s := newClusterSharder(t, ns, 100*time.Millisecond)
	runSharder(t, s)
	r := &ring{w: w, ns: ns, sharder: s, users: map[string]*testenv.User{}, proxies: map[string]*proxy{}, procs: map[string]*process{}, log: &writes{}}
	rbac := filepath.Join(moduleDir, "config", "rbac")
	for i := range ringShards {
		name := shardName(i)
		r.users[name] = env.NewUser(t, name,
			testenv.RoleFiles{filepath.Join(rbac, "role.yaml"), filepath.Join(rbac, "leader_election_role.yaml")},
			testenv.RoleNamespace(systemNamespace))
		r.proxies[name] = newProxy(t, name, r.users[name].Config(), r.log)
	}
	return r
}

// start runs shard i.
func (r *ring) start(t *testing.T, i int) {
	t.Helper()
	name := shardName(i)
	r.procs[name] = r.w.startOperator(t, name, r.proxies[name],
		"--controller-ring="+ringName, "--shard-name="+name, "--leader-election-namespace="+systemNamespace,
		"--leader-elect-lease-duration="+shardLease.String(), "--leader-elect-renew-deadline="+shardRenew.String(),
		"--leader-elect-retry-period="+shardRetry.String())
}

// waitHeld waits until the ring is the given shards, the sharder is done with it (a pass of its
// own moves nothing), and every Cluster is assigned to one of the shards and none is draining;
// it returns how long that took.
func (r *ring) waitHeld(t *testing.T, shards ...int) time.Duration {
	t.Helper()
	start := time.Now()
	want := make([]string, len(shards))
	for i, s := range shards {
		want[i] = shardName(s)
	}
	var last string
	if err := poll(t.Context(), r.w.sizes.Timeout, func(ctx context.Context) (bool, error) {
		members, err := r.sharder.Shards(ctx)
		if err != nil {
			return false, err
		}
		var available []string
		for _, m := range members {
			if m.State.Available() {
				available = append(available, m.Name)
			}
		}
		slices.Sort(available)
		if !slices.Equal(available, slices.Sorted(slices.Values(want))) {
			last = fmt.Sprintf("the ring is %v", available)
			return false, nil
		}
		moved := len(r.sharder.Moves())
		if err := r.sharder.Sync(ctx); err != nil {
			return false, err
		}
		if len(r.sharder.Moves()) != moved {
			last = "the sharder is moving Clusters"
			return false, nil
		}
		var list appsv1alpha1.ClusterList
		if err := r.w.admin.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
			return false, err
		}
		for _, c := range list.Items {
			if _, draining := c.Labels[drainLabelKey]; draining || !slices.Contains(want, c.Labels[shardLabelKey]) {
				last = fmt.Sprintf("Cluster %s is on %q (draining: %t)", c.Name, c.Labels[shardLabelKey], draining)
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the Clusters were not all on %v within %s: %s: %v\n%s", want, r.w.sizes.Timeout, last, err, r.w.logs.tail(30))
	}
	return time.Since(start)
}

// shardedRing: the operator runs as a ring of shards with the reference sharder while Clusters
// are created and scaled: the ring grows from 2 to 3 and 4 shards (drains), a shard is stopped
// with SIGTERM (its Lease released), one is killed with SIGKILL and one stopped with SIGSTOP past
// its Lease (the sharder takes their Leases over), and the Clusters are deleted while the ring
// grows again. The API server's audit log is the witness: every write to a Cluster and to its
// children must come from the shard that held the Cluster at that moment.
func shardedRing(t *testing.T, w *world) *result {
	ctx := t.Context()
	ns := w.namespace(t, "sharded")
	before := w.mark(t)
	r := newRing(t, w, ns)
	r.start(t, 0)
	r.start(t, 1)

	want := map[string]int32{}
	names := ringNames(ns, w.sizes.ShardedClusters)
	w.createNamedClusters(t, ns, names, 1)
	for _, name := range names {
		want[name] = 1
	}
	half := len(names) / 2
	scale := func(names []string, replicas int32) {
		w.setReplicas(t, ns, names, replicas)
		for _, name := range names {
			want[name] = replicas
		}
	}
	var steps []string
	step := func(what string, held time.Duration) {
		converged := w.waitConverged(t, ns)
		steps = append(steps, fmt.Sprintf("%s: held %s, converged %s", what, secs(held), secs(converged)))
	}
	step("2 shards", r.waitHeld(t, 0, 1))

	// Grow to 3, then 4, while Clusters are scaled: the sharder drains what it moves.
	r.start(t, 2)
	scale(names[:half], 3)
	step("3 shards", r.waitHeld(t, 0, 1, 2))
	r.start(t, 3)
	scale(names[half:], 3)
	step("4 shards", r.waitHeld(t, 0, 1, 2, 3))

	// SIGTERM: the shard releases its Lease after its controllers stopped.
	r.procs[shardName(3)].stop(t)
	scale(names[:half], 1)
	step("shard-3 stopped (SIGTERM)", r.waitHeld(t, 0, 1, 2))

	// SIGKILL: the Lease stays until the sharder takes it over.
	r.procs[shardName(2)].kill()
	scale(names[half:], 1)
	step("shard-2 killed (SIGKILL)", r.waitHeld(t, 0, 1))

	// SIGSTOP past the Lease: the sharder takes it over while the shard sleeps; resumed, its
	// fence refuses its writes, and it exits when its renewal finds the Lease taken.
	paused := r.procs[shardName(1)]
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("failed to stop shard-1: %v", err)
	}
	t.Cleanup(func() { _ = paused.cmd.Process.Signal(syscall.SIGCONT) })
	scale(names[:half], 3)
	held := r.waitHeld(t, 0)
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("failed to resume shard-1: %v", err)
	}
	timer := time.NewTimer(time.Minute)
	select {
	case <-paused.exited:
		timer.Stop()
	case <-timer.C:
		t.Fatalf("shard-1 did not exit within a minute of resuming after its Lease was taken over\n%s", w.logs.tail(30))
	}
	step("shard-1 stopped past its Lease (SIGSTOP), then resumed", held)

	// Back to 3 shards: the restarted ones rejoin once the sharder's hold on their Leases ends.
	r.start(t, 1)
	r.start(t, 2)
	step("shard-1 and shard-2 back", r.waitHeld(t, 0, 1, 2))
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)

	// Delete every Cluster while the ring grows to 4 again: once a drain has begun.
	drains := len(r.drains())
	r.start(t, 3)
	if err := poll(ctx, w.sizes.Timeout, func(context.Context) (bool, error) { return len(r.drains()) > drains, nil }); err != nil {
		t.Fatalf("the sharder drained nothing after shard-3 joined: %v\n%s", err, w.logs.tail(30))
	}
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	after := w.mark(t)

	// Events: each transition of a Cluster's conditions recorded once, whichever shards held it,
	// the deletion's included.
	transitions, repeated := repeatedTransitions(w.clusterEvents(t, ns))
	if len(repeated) > 0 {
		t.Errorf("%d of %d condition transitions were recorded in an Event more than once: %v", len(repeated), transitions, firstN(repeated, 5))
	}
	// The DNS API: each Cluster's record created once and its deletion begun once, whichever
	// shards held the Cluster. A write a handover repeated finds the record as it asks (a create
	// refused with 409, a record already being deleted) and changes nothing; one that changed
	// something twice (a record created again after its deletion, a value put back) is a second
	// writer's.
	dnsWrites, dnsChanges, dnsRepeated := 0, 0, []string(nil)
	written := w.dns.Writes()
	for _, name := range names {
		record := clusterRecord(ns, name)
		got := written[record]
		dnsWrites += got.Requests
		dnsChanges += got.Changes
		if got.Changes != 2 {
			dnsRepeated = append(dnsRepeated, fmt.Sprintf("DNS record %s changed %d times in %d writes, not twice (created, deleted)", record, got.Changes, got.Requests))
		}
	}
	if len(dnsRepeated) > 0 {
		t.Errorf("%d of %d DNS records were not created and deleted once each: %v", len(dnsRepeated), len(names), firstN(dnsRepeated, 5))
	}

	events, err := env.AuditLog().Between(before, after)
	if err != nil {
		t.Fatalf("failed to read the audit log: %v", err)
	}
	// The audit log names each shard by its user.
	users := make(map[string]string, ringShards)
	for name, u := range r.users {
		users[u.Name()] = name
	}
	moves := r.sharder.Moves()
	outside, checked, outsideProblems := writesOutsideEpochs(events, moves, ns, users)
	if outside > 0 {
		t.Errorf("%d writes came from a shard that did not hold the Cluster: %v", outside, outsideProblems)
	}
	forced := 0
	for _, m := range moves {
		if !m.Controlled && !m.Drain && m.From != "" {
			forced++
		}
	}
	return &result{
		Operations: fmt.Sprintf("%d Clusters created, scaled 5 times and deleted; %d writes by the shards checked against the Clusters' epochs, %d condition transitions recorded in Events; %d writes to the DNS API, %d of which changed a record",
			len(names), checked, transitions, dnsWrites, dnsChanges),
		Faults: fmt.Sprintf("ring 2→3→4 shards, SIGTERM, SIGKILL, SIGSTOP past the Lease, back to 3, delete during a rebalance to 4; %d drains, %d moves off a dead shard",
			len(r.drains()), forced),
		Convergence: strings.Join(steps, "; ") + fmt.Sprintf("; delete %s", secs(deletion)),
		Audited: fmt.Sprintf("The API server's audit log recorded %s by the shards' users, each checked against its Cluster's epoch: %d outside one.",
			plural(checked, "write"), outside),
		Leaked: mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated + outside + len(repeated) + len(dnsRepeated), Lost: lost + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, outsideProblems, firstN(repeated, 5), firstN(dnsRepeated, 5), final.Problems),
		Details: []string{
			fmt.Sprintf("The manager binary as shards of a ring (--controller-ring, Lease %s, renew deadline %s, retry period %s), each its own user behind its own proxy, and the reference sharder of testing/sharder for the Clusters and the StatefulSets, Services and ConfigMaps they control, labelling new children from a watch.", shardLease, shardRenew, shardRetry),
			"Every successful write of a shard to a Cluster (its status included), its StatefulSet, Services and ConfigMaps and its directory entry is checked against the audit log: the API server must have received it after the sharder's write that assigned the Cluster to that shard, and before the sharder's next assignment of the Cluster. A drain's acknowledgement ends a shard's epoch before the sharder's next assignment; a SIGTERM releases the Lease after the controllers stopped; a SIGKILLed or SIGSTOPped shard's Lease is taken over by the sharder at renewTime + 2 × the Lease duration, after its fence closed. Events are checked apart: each condition transition of a Cluster, its deletion's included, must be recorded once, whichever shards held it; and each Cluster's DNS record must have been created once and its deletion begun once (writes that changed nothing, such as a create refused because the record exists, are counted but allowed).",
		},
	}
}

// drains returns the sharder's drains of Clusters so far.
func (r *ring) drains() []sharder.Move {
	var out []sharder.Move
	for _, m := range r.sharder.Moves() {
		if m.Drain && !m.Controlled {
			out = append(out, m)
		}
	}
	return out
}

// writesOutsideEpochs returns how many successful writes of the shards to the ring's objects in
// ns and to the directory entries no epoch of the writing shard covers (see sharder.Epochs), and
// how many writes it checked. users maps the shards' users to the shards. The sharder's
// successful writes to each Cluster, in order, are its moves of it, as the sharder recorded them.
func writesOutsideEpochs(events testenv.AuditEvents, moves []sharder.Move, ns string, users map[string]string) (outside, checked int, problems []string) {
	sharderWrites := map[client.ObjectKey][]time.Time{}
	for _, e := range events {
		if e.UserAgent == sharderAgent && e.Resource == "clusters" && e.Subresource == "" && e.Namespace == ns && e.IsWrite() && e.Code < 300 {
			key := client.ObjectKey{Namespace: ns, Name: e.Name}
			sharderWrites[key] = append(sharderWrites[key], e.Received)
		}
	}
	epochs, err := sharder.Epochs(moves, appsv1alpha1.GroupVersion.WithKind("Cluster").GroupKind(), sharderWrites)
	if err != nil {
		return 1, 0, []string{err.Error()}
	}
	for _, e := range events {
		shard, ok := users[e.User]
		if !ok || !e.IsWrite() || e.Code >= 300 {
			continue
		}
		cluster, ok := clusterOf(e, ns)
		if !ok {
			continue
		}
		checked++
		key := client.ObjectKey{Namespace: ns, Name: cluster}
		if !sharder.Covered(epochs[key], shard, e.Received) {
			outside++
			if len(problems) < 10 {
				problems = append(problems, fmt.Sprintf("%s %s %s/%s by %s at %s, outside its epochs of Cluster %s: %v", e.Verb, e.Resource, e.Namespace, e.Name, shard,
					e.Received.Format("15:04:05.000"), cluster, epochs[key]))
			}
		}
	}
	return outside, checked, problems
}

// clusterOf returns the Cluster of ns whose object e wrote: the Cluster itself, its
// StatefulSet, Services and configuration, or its directory entry.
func clusterOf(e testenv.AuditEvent, ns string) (string, bool) {
	switch {
	case e.Namespace == ns && e.Resource == "clusters", e.Namespace == ns && e.Resource == "statefulsets":
		return e.Name, true
	case e.Namespace == ns && e.Resource == "services":
		return strings.TrimSuffix(e.Name, "-peers"), true
	case e.Namespace == ns && e.Resource == "configmaps":
		return strings.TrimSuffix(e.Name, "-config"), true
	case e.Namespace == directoryNamespace && e.Resource == "configmaps":
		return strings.CutPrefix(e.Name, ns+".")
	}
	return "", false
}
