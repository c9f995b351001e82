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

	"github.com/tenon-dev/tenon/testing/testenv"
)

// leaseName is the operator's leader election Lease in systemNamespace (cmd/main.go).
const leaseName = "cluster-operator.apps.tenon.dev"

// pauseRun is what one run of the paused-leader scenario, fenced or not, measured.
type pauseRun struct {
	pauses []time.Duration
	// late counts the writes the API server received from a replica after its lease passed to
	// the other replica and before it was started again; examples lists some.
	late     int
	examples []string
	// abandoned counts the write requests of that time the API server never had whole: the
	// client reset them before their end (a fenced body read refused on resume), so the API
	// server answered 500 with a stream error and acted on nothing. They are not writes.
	abandoned int
	// writes counts every write of the run, lease requests excluded.
	writes int
	// want are the Clusters of the run and their replicas, in namespace ns.
	want map[string]int32
	ns   string
	// What the run's operators did with them: the time to converge after the last pause and to
	// delete them all, the audits after each, and the user's edits lost.
	converge, deletion time.Duration
	mid, final         audit
	lost               int
	problems           []string
}

// pausedLeader: two replicas with leader election, each its own user; the leader is paused with
// SIGSTOP for longer than the lease while Clusters are created and scaled, the standby takes
// over and writes, and the old leader is resumed with SIGCONT. With --fenced-writes, the API
// server must receive no write from a replica after its lease passed on; without, the writes it
// receives are counted for comparison.
func pausedLeader(t *testing.T, w *world) *result {
	fenced := w.pauses(t, true, w.sizes.Pauses)
	unfenced := w.pauses(t, false, w.sizes.UnfencedPauses)
	t.Logf("paused leader: writes received after the lease passed on: fenced %d in %d pauses (%d more abandoned before their end), unfenced %d in %d %v",
		fenced.late, len(fenced.pauses), fenced.abandoned, unfenced.late, len(unfenced.pauses), unfenced.examples)
	if fenced.late > 0 {
		t.Errorf("%d writes of a fenced replica reached the API server after its lease passed on: %v", fenced.late, fenced.examples)
	}
	var lengths []time.Duration
	lengths = append(lengths, fenced.pauses...)
	lengths = append(lengths, unfenced.pauses...)
	return &result{
		Operations: fmt.Sprintf("%d Clusters created and scaled; %d API writes fenced, %d unfenced",
			len(fenced.want)+len(unfenced.want), fenced.writes, unfenced.writes),
		Faults: fmt.Sprintf("%d leaders SIGSTOPped past the lease with --fenced-writes (pauses %s); %d without",
			len(fenced.pauses), durations(fenced.pauses), len(unfenced.pauses)),
		Convergence: fmt.Sprintf("after the last pause %s, delete %s (fenced); %s, %s (unfenced)",
			secs(fenced.converge), secs(fenced.deletion), secs(unfenced.converge), secs(unfenced.deletion)),
		Leaked:     fenced.mid.Leaked + fenced.final.Leaked + unfenced.mid.Leaked + unfenced.final.Leaked,
		Duplicated: fenced.mid.Duplicated + fenced.final.Duplicated + unfenced.mid.Duplicated + unfenced.final.Duplicated + fenced.late,
		Lost:       fenced.lost + fenced.mid.Missing + unfenced.lost + unfenced.mid.Missing,
		Wedged:     fenced.mid.Wedged + fenced.final.Wedged + unfenced.mid.Wedged + unfenced.final.Wedged,
		Problems: slices.Concat(fenced.mid.Problems, fenced.problems, fenced.examples, fenced.final.Problems,
			unfenced.mid.Problems, unfenced.problems, unfenced.final.Problems),
		Details: []string{
			fmt.Sprintf("Two manager binaries with --leader-elect (lease %s, renew deadline %s, retry period %s), each as its own envtest user with the generated RBAC, so that kube-apiserver's audit log tells them apart. Each time: create %d Clusters, wait until the leader writes for them, SIGSTOP it, scale the earlier Clusters, wait until the standby took the lease over and wrote, keep the old leader stopped for at least the lease plus 0–8s (pauses %s, seed-chosen), SIGCONT it, wait until it exits (controller-runtime exits once it sees the lease lost), start it again as the standby.", pauseLease, pauseRenew, pauseRetry, w.sizes.PauseClusters, durations(lengths)),
			fmt.Sprintf("Invariant, from the API server's audit log: a replica's write requests received (auditID's requestReceivedTimestamp) after the other replica's first successful write of the Lease following the pause, until the replica was started again, lease requests excluded. Requests the client reset before their end are not counted: the API server never had them whole, answered 500 with a stream error and acted on nothing (with the fence, %d such requests). With --fenced-writes=true (tenon's fencing package, the default): %d in %d pauses (counted as duplicated). With --fenced-writes=false, for comparison, not an invariant: %d writes in %d pauses%s.", fenced.abandoned, fenced.late, len(fenced.pauses), unfenced.late, len(unfenced.pauses), examples(unfenced.examples)),
			"The fence refuses a write once the lease duration minus a fifth has passed since the start of the replica's last successful renewal, on its monotonic clock; the resumed leader's own renewal requests (409 Conflict, then a read) are let through and are not counted. The fence checks again each time the transport reads a write's body, so a write checked before the SIGSTOP and sent on resume is reset before its end. What the fence cannot cover — a pause between its last check and the bytes reaching the socket, bytes held by a partition — is in the fencing package's documentation; a SIGSTOP at such a moment would show here as a late write.",
		},
	}
}

// Leader election timings of the paused-leader scenario, as in the failover scenario.
const pauseLease, pauseRenew, pauseRetry = 8 * time.Second, 6 * time.Second, time.Second

// pauses runs n pauses of the leader of two new replicas, fenced or not, and checks the audit
// log for writes of a replica after its lease passed on.
func (w *world) pauses(t *testing.T, fenced bool, n int) pauseRun {
	t.Helper()
	ctx := t.Context()
	kind := map[bool]string{true: "fenced", false: "unfenced"}[fenced]
	run := pauseRun{ns: w.namespace(t, "paused-"+kind), want: map[string]int32{}}
	if n == 0 {
		return run
	}
	before, err := env.AuditLog().Mark(ctx)
	if err != nil {
		t.Fatalf("failed to mark the audit log: %v", err)
	}
	log := &writes{}
	args := []string{"--leader-elect", "--leader-election-namespace=" + systemNamespace,
		"--leader-elect-lease-duration=" + pauseLease.String(), "--leader-elect-renew-deadline=" + pauseRenew.String(),
		"--leader-elect-retry-period=" + pauseRetry.String(), fmt.Sprintf("--fenced-writes=%t", fenced)}
	rbac := filepath.Join(moduleDir, "config", "rbac")
	users := map[string]*testenv.User{}
	proxies := map[string]*proxy{}
	procs := map[string]*process{}
	replicas := []string{kind + "-a", kind + "-b"}
	for _, r := range replicas {
		users[r] = env.NewUser(t, r,
			testenv.RoleFiles{filepath.Join(rbac, "role.yaml"), filepath.Join(rbac, "leader_election_role.yaml")},
			testenv.RoleNamespace(systemNamespace))
		proxies[r] = newProxy(t, r, users[r].Config(), log)
		procs[r] = w.startOperator(t, r, proxies[r], args...)
	}
	other := func(r string) string {
		if r == replicas[0] {
			return replicas[1]
		}
		return replicas[0]
	}

	// periods are, per pause, the old leader, and when it was stopped and started again.
	type period struct {
		replica       string
		paused, rerun time.Time
	}
	var periods []period
	var earlier []string
	for i := range n {
		leader := w.waitLeader(t, log, time.Time{}, "")
		names := w.createClusters(t, run.ns, fmt.Sprintf("pause%d", i), w.sizes.PauseClusters, 1)
		for _, name := range names {
			run.want[name] = 1
		}
		mark := time.Now()
		if err := poll(ctx, time.Minute, func(context.Context) (bool, error) {
			return slices.ContainsFunc(log.list(), func(wr write) bool {
				return wr.Replica == leader && !wr.lease() && wr.Start.After(mark) && wr.ok()
			}), nil
		}); err != nil {
			t.Fatalf("leader %s wrote nothing for a minute: %v\n%s", leader, err, w.logs.tail(30))
		}

		planned := pauseLease + w.between(0, 8*time.Second)
		p := period{replica: leader, paused: time.Now()}
		stopped := procs[leader]
		if err := stopped.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("failed to stop %s: %v", leader, err)
		}
		// Whatever happens next, the process must not stay stopped.
		t.Cleanup(func() { _ = stopped.cmd.Process.Signal(syscall.SIGCONT) })
		// Work for the new leader, and events the old one will see when it resumes.
		scaled := int32(3 + 2*(i%2))
		w.setReplicas(t, run.ns, earlier, scaled)
		for _, name := range earlier {
			run.want[name] = scaled
		}
		next := w.waitLeader(t, log, p.paused, leader)
		if next != other(leader) {
			t.Fatalf("while %s was stopped, %s took the lease", leader, next)
		}
		acquired := firstLeaseWriteAfter(log.list(), next, p.paused)
		if err := poll(ctx, time.Minute, func(context.Context) (bool, error) {
			return slices.ContainsFunc(log.list(), func(wr write) bool {
				return wr.Replica == next && !wr.lease() && wr.Start.After(acquired) && wr.ok()
			}), nil
		}); err != nil {
			t.Fatalf("the new leader %s wrote nothing for a minute: %v\n%s", next, err, w.logs.tail(30))
		}
		// The pause is the fault: it lasts at least the planned length.
		if wait := time.Until(p.paused.Add(planned)); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				t.Fatalf("stopped during a pause: %v", ctx.Err())
			}
		}
		if err := stopped.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatalf("failed to resume %s: %v", leader, err)
		}
		run.pauses = append(run.pauses, time.Since(p.paused))
		timer := time.NewTimer(time.Minute)
		select {
		case <-stopped.exited:
			timer.Stop()
		case <-timer.C:
			t.Fatalf("%s still runs a minute after it was resumed without the lease\n%s", leader, w.logs.tail(30))
		}
		p.rerun = time.Now()
		periods = append(periods, p)
		procs[leader] = w.startOperator(t, leader, proxies[leader], args...)
		earlier = append(earlier, names...)
	}
	run.converge = w.waitConverged(t, run.ns)
	run.mid = w.settledAudit(t, run.ns)
	run.lost, run.problems = w.lostEdits(t, run.ns, run.want)
	w.deleteAll(t, run.ns)
	run.deletion = w.waitGone(t, run.ns)
	run.final = w.settledAudit(t, run.ns)
	// The next run's replicas compete for the same Lease: these release it and exit.
	for _, r := range replicas {
		procs[r].stop(t)
	}

	after, err := env.AuditLog().Mark(ctx)
	if err != nil {
		t.Fatalf("failed to mark the audit log: %v", err)
	}
	events, err := env.AuditLog().Between(before, after)
	if err != nil {
		t.Fatalf("failed to read the audit log: %v", err)
	}
	for _, r := range replicas {
		run.writes += len(events.ByUser(users[r].Name()).Writes().Filter(func(e testenv.AuditEvent) bool { return !isLease(e) }))
	}
	for _, p := range periods {
		takeover := firstAuditedLeaseWrite(events.ByUser(users[other(p.replica)].Name()), p.paused)
		if takeover.IsZero() {
			t.Fatalf("the audit log has no takeover by %s after %s", other(p.replica), p.paused.Format(time.StampMicro))
		}
		for _, e := range events.ByUser(users[p.replica].Name()).Writes() {
			if isLease(e) || e.Received.Before(takeover) || e.Received.After(p.rerun) {
				continue
			}
			if e.Abandoned() {
				run.abandoned++
				continue
			}
			run.late++
			if len(run.examples) < 10 {
				run.examples = append(run.examples, fmt.Sprintf("%s %s %s/%s received %s after the takeover (code %d)",
					p.replica, e.Verb, e.Resource, e.Name, e.Received.Sub(takeover).Round(time.Millisecond), e.Code))
			}
		}
	}
	return run
}

// isLease reports whether e is a request for the operator's leader election Lease.
func isLease(e testenv.AuditEvent) bool {
	return e.APIGroup == "coordination.k8s.io" && e.Resource == "leases" && e.Namespace == systemNamespace
}

// firstAuditedLeaseWrite returns when the API server received the first successful write of
// the Lease in events after since: a takeover.
func firstAuditedLeaseWrite(events testenv.AuditEvents, since time.Time) time.Time {
	for _, e := range events.Writes() {
		if isLease(e) && e.Name == leaseName && e.Code < 300 && e.Received.After(since) {
			return e.Received
		}
	}
	return time.Time{}
}

// examples returns ": " and the examples joined, or nothing when there are none.
func examples(es []string) string {
	if len(es) == 0 {
		return ""
	}
	return ": " + strings.Join(es, "; ")
}
