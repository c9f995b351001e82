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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/testing/faults"
)

// settledAudit waits until the garbage collector has caught up (nothing leaked, nothing
// wedged) or the timeout passes, and returns what the audit found last.
func (w *world) settledAudit(t *testing.T, namespaces ...string) audit {
	t.Helper()
	var a audit
	_ = poll(t.Context(), time.Minute, func(context.Context) (bool, error) {
		a = w.audit(t, true, namespaces...)
		return a.Leaked+a.Duplicated+a.Missing+a.Wedged == 0, nil
	})
	return a
}

// setReplicas changes the replicas of the Clusters names in namespace.
func (w *world) setReplicas(t *testing.T, namespace string, names []string, replicas int32) {
	t.Helper()
	for _, name := range names {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
		if err := w.admin.Patch(t.Context(), &appsv1alpha1.Cluster{ObjectMeta: metaName(namespace, name)}, patch); err != nil {
			t.Fatalf("failed to scale Cluster %s: %v", name, err)
		}
	}
}

// lostEdits counts the Clusters of want (name to replicas) whose spec does not hold the
// replicas the user last wrote, and the Clusters that exist but should not, or do not but should.
func (w *world) lostEdits(t *testing.T, namespace string, want map[string]int32) (int, []string) {
	t.Helper()
	var list appsv1alpha1.ClusterList
	if err := w.admin.List(t.Context(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("failed to list Clusters: %v", err)
	}
	lost, problems := 0, []string(nil)
	seen := map[string]bool{}
	for _, c := range list.Items {
		seen[c.Name] = true
		r, ok := want[c.Name]
		switch {
		case !ok:
			lost++
			problems = append(problems, fmt.Sprintf("Cluster %s exists but was deleted", c.Name))
		case c.Spec.Replicas != r:
			lost++
			problems = append(problems, fmt.Sprintf("Cluster %s has %d replicas, the user set %d", c.Name, c.Spec.Replicas, r))
		}
	}
	for name := range want {
		if !seen[name] {
			lost++
			problems = append(problems, fmt.Sprintf("Cluster %s is gone but was never deleted", name))
		}
	}
	return lost, problems
}

// faultStorm: Clusters are created, scaled and deleted while a fault plan fails a quarter of the
// operator's writes and slows its calls, and the DNS API fails one call in ten.
func faultStorm(t *testing.T, w *world) *result {
	n := w.sizes.StormClusters
	plan := faults.Plan{Seed: int64(w.seed >> 1), Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.20, Fault: faults.Conflict},
		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.InternalError},
		{Match: faults.Match{Verbs: faults.Reads}, Probability: 0.05, Latency: 20 * time.Millisecond},
		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.10, Latency: 50 * time.Millisecond},
	}}
	operator := w.inProcessOperator(t, plan)
	calls := operator.calls
	w.dns.SetFaults(clouddnstest.Faults{ErrorRate: 0.10, Latency: 2 * time.Millisecond})
	t.Cleanup(func() { w.dns.SetFaults(clouddnstest.Faults{}) })
	dnsBefore := w.dnsFailed.Load()
	ns := w.namespace(t, "storm")

	names := w.createClusters(t, ns, "c", n, 1)
	converge := w.waitConverged(t, ns)
	want := map[string]int32{}
	var scaled []string
	for i, name := range names {
		want[name] = 1
		if i%2 == 0 {
			scaled = append(scaled, name)
			want[name] = 3
		}
	}
	w.setReplicas(t, ns, scaled, 3)
	scale := w.waitConverged(t, ns)
	mid := w.audit(t, false, ns)
	lost, problems := w.lostEdits(t, ns, want)

	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)

	var conflicts, internal, delayed, writes int
	for _, c := range calls.Calls() {
		if c.IsWrite() {
			writes++
		}
		if c.Latency > 0 {
			delayed++
		}
		if c.Outcome == faults.Injected {
			switch {
			case apierrors.IsConflict(c.Err):
				conflicts++
			case apierrors.IsInternalError(c.Err):
				internal++
			}
		}
	}
	return &result{
		InProcess:   operator,
		Operations:  fmt.Sprintf("%d creates, %d scales, %d deletes; %d API writes by the operator", n, len(scaled), n, writes),
		Faults:      fmt.Sprintf("%d conflicts, %d 500s, %d delayed calls, %d DNS API failures", conflicts, internal, delayed, w.dnsFailed.Load()-dnsBefore),
		Convergence: fmt.Sprintf("create→Ready %s, scale %s, delete %s", secs(converge), secs(scale), secs(deletion)),
		Leaked:      final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + mid.Missing, Wedged: final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, final.Problems),
		Details: []string{
			fmt.Sprintf("%d Clusters of 1 replica created at once; every other one scaled to 3; all deleted.", n),
			"The operator runs in the test process, as a user of its own with the operator's roles, with its client wrapped by a seeded tenon fault plan: 20% of writes answered 409 Conflict, 5% 500 InternalError, 10% of writes delayed 50ms, 5% of reads 20ms; the DNS API answers 10% of calls 503.",
			fmt.Sprintf("Fault plan seed %d.", calls.Seed()),
		},
	}
}

// crashLoop: the manager binary is killed with SIGKILL at random moments while Clusters are
// created and deleted, and started again each time.
func crashLoop(t *testing.T, w *world) *result {
	ns := w.namespace(t, "crash")
	log := &writes{}
	p := w.newProxy(t, "crash", w.user.Config(), log)
	want := map[string]int32{}
	var live []string
	created, deleted := 0, 0
	var lifetimes []time.Duration
	for kill := range w.sizes.Crashes {
		proc := w.startOperator(t, fmt.Sprintf("crash-%02d", kill), p)
		started := time.Now()
		for range w.sizes.CrashBatch {
			c := newCluster(ns, fmt.Sprintf("c-%d", created), int32(1+2*w.intn(2)))
			if err := w.admin.Create(t.Context(), c); err != nil {
				t.Fatalf("failed to create Cluster %s: %v", c.Name, err)
			}
			created++
			live = append(live, c.Name)
			want[c.Name] = c.Spec.Replicas
		}
		if len(live) > w.sizes.CrashBatch && w.intn(2) == 0 {
			i := w.intn(len(live))
			name := live[i]
			live = slices.Delete(live, i, i+1)
			delete(want, name)
			if err := w.admin.Delete(t.Context(), &appsv1alpha1.Cluster{ObjectMeta: metaName(ns, name)}); err != nil {
				t.Fatalf("failed to delete Cluster %s: %v", name, err)
			}
			deleted++
		}
		// The moment of the crash is the point of the scenario: wait a random time, then kill.
		timer := time.NewTimer(w.between(200*time.Millisecond, 3*time.Second))
		select {
		case <-timer.C:
		case <-proc.exited:
			t.Fatalf("operator %s exited by itself: %v\n%s", proc.name, proc.err, w.logs.tail(30))
		}
		proc.kill()
		lifetimes = append(lifetimes, time.Since(started))
	}
	w.startOperator(t, "crash-final", p)
	converge := w.waitConverged(t, ns)
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)

	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	slices.Sort(lifetimes)
	return &result{
		Operations:  fmt.Sprintf("%d creates, %d deletes, %d operator starts; %d API writes by the operator", created, deleted, w.sizes.Crashes+1, countWrites(log.list(), false)),
		Faults:      fmt.Sprintf("%d SIGKILLs, after %s to %s of life (median %s)", w.sizes.Crashes, secs(lifetimes[0]), secs(lifetimes[len(lifetimes)-1]), secs(lifetimes[len(lifetimes)/2])),
		Convergence: fmt.Sprintf("after the last restart %s, delete %s", secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, final.Problems),
		Details: []string{
			fmt.Sprintf("%d cycles: start the manager binary, create %d Clusters, delete a random one every other cycle, SIGKILL the manager 0.2–3s after its start (during cache sync, reconciles, DNS calls and cleanup alike).", w.sizes.Crashes, w.sizes.CrashBatch),
			"Then one more start, which must converge what every killed process left half-done: no second DNS record or child for a Cluster (a stale cache after a restart must not create twice), no record or entry left for a deleted Cluster.",
		},
	}
}

// apiServerRestart: kube-apiserver is stopped while Clusters converge and started again; the
// operator must recover by itself.
func apiServerRestart(t *testing.T, w *world) *result {
	ctx := t.Context()
	n := w.sizes.RestartClusters
	ns := w.namespace(t, "restart")
	log := &writes{}
	p := w.newProxy(t, "restart", w.user.Config(), log)
	proc := w.startOperator(t, "restart", p)
	before := w.createClusters(t, ns, "before", n, 3)

	// Stop it mid-convergence.
	timer := time.NewTimer(w.between(300*time.Millisecond, 1500*time.Millisecond))
	<-timer.C
	stopped := time.Now()
	if err := env.StopAPIServer(ctx); err != nil {
		t.Fatalf("failed to stop kube-apiserver: %v", err)
	}
	down := time.NewTimer(w.sizes.Downtime)
	<-down.C
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatalf("failed to start kube-apiserver again: %v", err)
	}
	back := time.Now()
	// StartAPIServer returns once RBAC authorizes again.
	w.restarting(stopped, back)

	after := w.createClusters(t, ns, "after", n, 1)
	w.setReplicas(t, ns, before, 5)
	converge := w.waitConverged(t, ns)
	restarts := 0
	if !proc.running() {
		restarts++
		t.Errorf("the operator exited during the API server restart: %v", proc.err)
	}
	want := map[string]int32{}
	for _, name := range before {
		want[name] = 5
	}
	for _, name := range after {
		want[name] = 1
	}
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	failed := 0
	for _, wr := range log.list() {
		if wr.Status >= 500 {
			failed++
		}
	}
	return &result{
		Operations:  fmt.Sprintf("%d creates, %d scales, %d deletes; %d API writes by the operator", 2*n, n, 2*n, countWrites(log.list(), false)),
		Faults:      fmt.Sprintf("kube-apiserver stopped, kept down %s, started: %s from stop to ready (RBAC and the garbage collector included); %d operator writes failed with 5xx; operator restarts: %d", secs(w.sizes.Downtime), secs(back.Sub(stopped)), failed, restarts),
		Convergence: fmt.Sprintf("after the API server was back %s, delete %s", secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + restarts + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, final.Problems),
		Details: []string{
			fmt.Sprintf("%d Clusters of 3 replicas created; 0.3–1.5s later kube-apiserver is stopped (etcd keeps running), kept down, and started again with the same flags and certificates; then %d more Clusters are created and the first %d scaled to 5.", n, n, n),
			"The manager binary runs without leader election here: with --leader-elect, an outage longer than --leader-elect-renew-deadline (10s by default) makes the leader give up its lease and exit, by design, and its Deployment restarts it.",
			"The operator process must still be the same process at the end (counted as lost otherwise).",
		},
	}
}

// leaderFailover: two replicas with leader election; the leader is killed with SIGKILL while it
// works, several times; the other must take over, and the two must never write at the same time.
func leaderFailover(t *testing.T, w *world) *result {
	const lease, renew, retry = 8 * time.Second, 6 * time.Second, time.Second
	ns := w.namespace(t, "failover")
	log := &writes{}
	args := []string{"--leader-elect", "--leader-election-namespace=" + systemNamespace,
		"--leader-elect-lease-duration=" + lease.String(), "--leader-elect-renew-deadline=" + renew.String(), "--leader-elect-retry-period=" + retry.String()}
	proxies := map[string]*proxy{}
	procs := map[string]*process{}
	for _, r := range []string{"replica-a", "replica-b"} {
		proxies[r] = w.newProxy(t, r, w.user.Config(), log)
		procs[r] = w.startOperator(t, r, proxies[r], args...)
	}
	other := func(r string) string {
		if r == "replica-a" {
			return "replica-b"
		}
		return "replica-a"
	}

	want := map[string]int32{}
	var takeovers, sinceRenewal []time.Duration
	for term := range w.sizes.Failovers {
		leader := w.waitLeader(t, log, time.Time{}, "")
		names := w.createClusters(t, ns, fmt.Sprintf("term%d", term), w.sizes.FailoverClusters, 1)
		for _, name := range names {
			want[name] = 1
		}
		// Kill the leader while it works: once it has written something for this term's Clusters.
		mark := time.Now()
		if err := poll(t.Context(), time.Minute, func(context.Context) (bool, error) {
			return slices.ContainsFunc(log.list(), func(wr write) bool {
				return wr.Replica == leader && !wr.lease() && wr.Start.After(mark) && wr.ok()
			}), nil
		}); err != nil {
			t.Fatalf("leader %s wrote nothing for a minute: %v\n%s", leader, err, w.logs.tail(30))
		}
		lastRenewal := lastLeaseWrite(log.list(), leader)
		killed := time.Now()
		procs[leader].kill()
		next := w.waitLeader(t, log, killed, leader)
		if next != other(leader) {
			t.Fatalf("after %s was killed, %s took over", leader, next)
		}
		acquired := firstLeaseWriteAfter(log.list(), next, killed)
		takeovers = append(takeovers, acquired.Sub(killed))
		sinceRenewal = append(sinceRenewal, acquired.Sub(lastRenewal))
		procs[leader] = w.startOperator(t, leader, proxies[leader], args...)
	}
	converge := w.waitConverged(t, ns)
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)

	overlaps, overlapProblems := overlappingWrites(log.list())
	if overlaps > 0 {
		t.Errorf("%d writes were sent by a replica that did not hold the lease: %v", overlaps, overlapProblems)
	}
	maxTakeover := slices.Max(takeovers)
	// The standby sees the last renewal at its next try, and takes over at its first try after
	// the lease expired; client-go waits between 1× and 2.2× RetryPeriod between tries
	// (wait.JitterUntil with factor 1.2). One second more for scheduling on a busy machine.
	if bound := lease + time.Duration(2*2.2*float64(retry)) + time.Second; maxTakeover > bound {
		t.Errorf("a takeover took %s after the kill, more than the lease duration and two jittered retry periods (%s)", secs(maxTakeover), secs(bound))
	}
	return &result{
		Operations:  fmt.Sprintf("%d creates, %d deletes; %d API writes by the leaders, %d lease writes", len(want), len(want), countWrites(log.list(), false), countWrites(log.list(), true)),
		Faults:      fmt.Sprintf("%d leaders SIGKILLed; takeover after the kill %s (max %s); after the last renewal %s", w.sizes.Failovers, durations(takeovers), secs(maxTakeover), durations(sinceRenewal)),
		Convergence: fmt.Sprintf("after the last failover %s, delete %s", secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated + overlaps, Lost: lost + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, overlapProblems, final.Problems),
		Details: []string{
			fmt.Sprintf("Two manager binaries with --leader-elect (lease %s, renew deadline %s, retry period %s), each behind its own recording proxy. %d times: create %d Clusters, wait until the leader writes for them, SIGKILL it, wait for the other to take over, start the killed one again as the standby.", lease, renew, retry, w.sizes.Failovers, w.sizes.FailoverClusters),
			"Every write of either replica is checked against the lease: a write sent by a replica while the last lease write before it was the other replica's counts as duplicated. A killed leader cannot release its lease, so the standby takes over once the lease has expired: client-go's standby notices the last renewal at its next poll and the expiry at the poll after it, so at least the lease duration and at most the lease duration plus two jittered retry periods after the leader's last renewal (client-go's jitter factor is 1.2, so each poll comes between 1× and 2.2× the retry period after the one before: up to 4.4 retry periods for the two). The scenario fails beyond the lease duration plus two retry periods plus 2s after the kill.",
			"A leader that is paused (SIGSTOP, a long garbage-collection pause, a partition) rather than killed is the paused-leader scenario: client-go's leader election has no fencing, so without tenon's fence a resumed leader sends writes for a moment before its renewal fails and controller-runtime stops it.",
		},
	}
}

// waitLeader waits until a replica other than old ("" for any) writes the lease after since and
// returns it: the replica of the last such successful lease write. A renewal of old that was in
// flight when it was stopped or killed can succeed after since; it does not make old the leader
// that took over.
func (w *world) waitLeader(t *testing.T, log *writes, since time.Time, old string) string {
	t.Helper()
	var leader string
	if err := poll(t.Context(), time.Minute, func(context.Context) (bool, error) {
		for _, wr := range slices.Backward(log.list()) {
			if wr.lease() && wr.ok() && wr.Start.After(since) && wr.Replica != old {
				leader = wr.Replica
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no replica took the lease within a minute: %v\n%s", err, w.logs.tail(30))
	}
	return leader
}

func lastLeaseWrite(ws []write, replica string) time.Time {
	var last time.Time
	for _, wr := range ws {
		if wr.Replica == replica && wr.lease() && wr.ok() && wr.Start.After(last) {
			last = wr.Start
		}
	}
	return last
}

func firstLeaseWriteAfter(ws []write, replica string, after time.Time) time.Time {
	var first time.Time
	for _, wr := range ws {
		if wr.Replica == replica && wr.lease() && wr.ok() && wr.Start.After(after) && (first.IsZero() || wr.Start.Before(first)) {
			first = wr.Start
		}
	}
	return first
}

// overlappingWrites counts the writes (other than to the lease) that a replica sent while it did
// not hold the lease: when the last successful lease write that started before it was another
// replica's, or there was none.
func overlappingWrites(ws []write) (int, []string) {
	var leases []write
	for _, wr := range ws {
		if wr.lease() && wr.ok() {
			leases = append(leases, wr)
		}
	}
	slices.SortFunc(leases, func(a, b write) int { return a.Start.Compare(b.Start) })
	n, problems := 0, []string(nil)
	for _, wr := range ws {
		if wr.lease() {
			continue
		}
		holder := ""
		for _, l := range leases {
			if l.Start.After(wr.Start) {
				break
			}
			holder = l.Replica
		}
		if holder != wr.Replica {
			n++
			if len(problems) < 10 {
				problems = append(problems, fmt.Sprintf("%s %s %s at %s while %q held the lease", wr.Replica, wr.Method, wr.Path, wr.Start.Format(time.StampMicro), holder))
			}
		}
	}
	return n, problems
}

func countWrites(ws []write, lease bool) int {
	n := 0
	for _, wr := range ws {
		if wr.lease() == lease {
			n++
		}
	}
	return n
}

// namespaceDeletion: a namespace full of Clusters is deleted while the DNS API is down; it must
// wait, say why on every Cluster, and finish once the API is back.
func namespaceDeletion(t *testing.T, w *world) *result {
	ctx := t.Context()
	n := w.sizes.NamespaceClusters
	ns := w.namespace(t, "doomed")
	p := w.newProxy(t, "namespace", w.user.Config(), &writes{})
	w.startOperator(t, "namespace", p)
	w.createClusters(t, ns, "c", n, 1)
	converge := w.waitConverged(t, ns)
	recordsBefore := w.recordsIn(ns)

	w.dns.SetFaults(clouddnstest.Faults{Down: true})
	t.Cleanup(func() { w.dns.SetFaults(clouddnstest.Faults{}) })
	if err := w.admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metaName("", ns)}); err != nil {
		t.Fatalf("failed to delete namespace %s: %v", ns, err)
	}
	deleted := time.Now()
	var sample string
	waiting := 0
	if err := poll(ctx, w.sizes.Timeout, func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		waiting = 0
		for i := range list.Items {
			c := &list.Items[i]
			d := conditions.Get(c, conditions.Deleting)
			if c.DeletionTimestamp != nil && d != nil && strings.Contains(d.Message, "dns-record") && strings.Contains(strings.ToLower(d.Message), "unavailable") {
				waiting++
				sample = fmt.Sprintf("Deleting=%s %s: %s", d.Status, d.Reason, d.Message)
			}
		}
		return waiting == n, nil
	}); err != nil {
		t.Fatalf("%d of %d Clusters said why they wait: %v (last: %s)\n%s", waiting, n, err, sample, w.logs.tail(30))
	}
	explained := time.Since(deleted)
	var nsObj corev1.Namespace
	if err := w.admin.Get(ctx, client.ObjectKey{Name: ns}, &nsObj); err != nil || nsObj.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace %s should wait in Terminating while the DNS API is down: %v %s", ns, err, nsObj.Status.Phase)
	}
	recordsWhileDown := w.recordsIn(ns)
	if recordsWhileDown != recordsBefore {
		t.Errorf("%d DNS records while the API was down, %d before: the cleanup must wait, not skip", recordsWhileDown, recordsBefore)
	}

	w.dns.SetFaults(clouddnstest.Faults{})
	up := time.Now()
	if err := poll(ctx, w.sizes.Timeout, func(ctx context.Context) (bool, error) {
		err := w.admin.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatalf("namespace %s did not finish terminating: %v\n%s", ns, err, w.logs.tail(30))
	}
	finished := time.Since(up)
	final := w.settledAudit(t, ns)
	return &result{
		Operations:  fmt.Sprintf("%d creates, 1 namespace deletion", n),
		Faults:      fmt.Sprintf("DNS API down (every call 503) from the deletion until every Cluster explained why it waits (%s)", secs(explained)),
		Convergence: fmt.Sprintf("create→Ready %s; namespace gone %s after the DNS API was back", secs(converge), secs(finished)),
		Leaked:      final.Leaked, Duplicated: final.Duplicated, Wedged: final.Wedged,
		Problems: final.Problems,
		Details: []string{
			fmt.Sprintf("%d Ready Clusters with %d DNS records; the DNS API goes down; the namespace is deleted. The namespace waited in Terminating with all %d records still in place, and every Cluster said why, e.g. %q.", n, recordsBefore, recordsWhileDown, sample),
			"Once the API was back, the finalizers deleted every record and released their Clusters, and the namespace controller finished.",
		},
	}
}

// recordsIn counts the DNS records of Clusters in namespace.
func (w *world) recordsIn(namespace string) int {
	n := 0
	for _, rec := range w.dns.Records() {
		if ns, _, ok := recordCluster(rec.Name); ok && ns == namespace {
			n++
		}
	}
	return n
}
