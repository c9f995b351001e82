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

package fencing_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{AuditLog: true})
	os.Exit(env.Run(m))
}

// Leader election timings of the test: short, so that a takeover takes seconds. The default
// margin is a fifth of the lease duration, so the fence closes 4.8 s after a renewal started.
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = time.Second
	leaseName     = "fencing-test"
)

// pausable is a leader election lock whose requests can be held, as if the process were paused
// while the rest of it ran on: while paused, Get, Create and Update wait until resumed, and
// ignore their context, so the leader elector never learns that its renewals stopped.
type pausable struct {
	resourcelock.Interface
	mu     sync.Mutex
	paused chan struct{} // non-nil while paused; closed on resume
}

func (p *pausable) wait() {
	p.mu.Lock()
	ch := p.paused
	p.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (p *pausable) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

func (p *pausable) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}

func (p *pausable) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	p.wait()
	return p.Interface.Get(ctx)
}

func (p *pausable) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	p.wait()
	return p.Interface.Create(ctx, r)
}

func (p *pausable) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	p.wait()
	return p.Interface.Update(ctx, r)
}

// replica is one operator replica: a user of its own, a fenced manager with leader election.
type replica struct {
	user  *testenv.User
	lock  *pausable
	fence *fencing.Lock
	mgr   manager.Manager
	// client writes through the fenced config, as the manager's client does.
	client client.Client
	cancel context.CancelFunc
	done   chan error
}

// newReplica builds a replica named name that competes for the Lease leaseName in ns; with
// fenced false, its requests do not go through the fence.
func newReplica(t *testing.T, name, ns string, fenced bool) *replica {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "replica"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "events"}, Verbs: []string{"*"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
		},
	}
	u := env.NewUser(t, name, testenv.Roles{role}, testenv.RoleNamespace(ns))
	inner, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, ns, leaseName,
		resourcelock.ResourceLockConfig{Identity: u.Name()}, u.Config(), renewDeadline)
	if err != nil {
		t.Fatalf("failed to build the lease lock: %v", err)
	}
	r := &replica{user: u, lock: &pausable{Interface: inner}}
	r.fence, err = fencing.NewLock(r.lock)
	if err != nil {
		t.Fatalf("failed to build the fencing lock: %v", err)
	}
	cfg := u.Config()
	if fenced {
		cfg.Wrap(r.fence.WrapTransport)
	}
	r.client, err = client.New(cfg, client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to build the fenced client: %v", err)
	}
	ld, rd, rp := leaseDuration, renewDeadline, retryPeriod
	r.mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                              env.Scheme(),
		Metrics:                             metricsOff,
		HealthProbeBindAddress:              "0",
		LeaderElection:                      true,
		LeaderElectionResourceLockInterface: r.fence,
		LeaseDuration:                       &ld,
		RenewDeadline:                       &rd,
		RetryPeriod:                         &rp,
	})
	if err != nil {
		t.Fatalf("failed to build the manager: %v", err)
	}
	return r
}

// start starts the replica's manager, and stops it when the test ends.
func (r *replica) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.mgr.Start(ctx) }()
	t.Cleanup(func() {
		if r.done == nil {
			return // stopped by the test
		}
		r.lock.resume()
		r.cancel()
		if err := <-r.done; err != nil {
			t.Errorf("manager of %s stopped with an error: %v", r.user.Name(), err)
		}
	})
}

// waitUntilStopped waits until the replica's manager stops by itself, and returns its error.
func (r *replica) waitUntilStopped(timeout time.Duration) error {
	defer r.cancel()
	select {
	case err := <-r.done:
		r.done = nil
		return err
	case <-time.After(timeout):
		return fmt.Errorf("the manager of %s still runs after %s", r.user.Name(), timeout)
	}
}

// write creates a ConfigMap through the replica's fenced client and returns the error.
func (r *replica) write(ctx context.Context, ns string, n int) error {
	return r.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: fmt.Sprintf("%s-%d", r.user.Name(), n),
	}})
}

// elected reports whether the manager's Elected channel is closed.
func elected(mgr manager.Manager) bool {
	select {
	case <-mgr.Elected():
		return true
	default:
		return false
	}
}

func TestAPausedLeaderCannotWriteOnceItsFenceClosedAndTheStandbyTakesOver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	a, b := newReplica(t, "replica-a", ns, true), newReplica(t, "replica-b", ns, true)
	before, err := env.AuditLog().Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	a.start(t)
	g.Eventually(func() bool { return elected(a.mgr) }).WithTimeout(30 * time.Second).Should(BeTrue())
	b.start(t)
	n := 0
	g.Expect(a.write(ctx, ns, n)).To(Succeed(), "the leader writes")

	// The standby never acquired the lease: its writes are refused, with the leader named.
	var refused *fencing.RefusedError
	g.Eventually(func() error { n++; return b.write(ctx, ns, n) }).Should(WithTransform(func(err error) string {
		if errors.As(err, &refused) {
			return refused.Holder
		}
		return fmt.Sprint(err)
	}, Equal(a.user.Name())), "the standby is refused, and knows who leads")

	// The leader stops renewing, as if paused. Until its fence closes it still writes.
	a.lock.pause()
	pausedAt := time.Now()
	n++
	g.Expect(a.write(ctx, ns, n)).To(Succeed(), "the fence is still open just after the last renewal")
	// lastAllowed is when the last write that passed the fence was checked, at the latest.
	var lastAllowed time.Time
	g.Eventually(func() error {
		n++
		start := time.Now()
		err := a.write(ctx, ns, n)
		if err == nil {
			lastAllowed = start
		}
		return err
	}).WithTimeout(leaseDuration).WithPolling(20 * time.Millisecond).Should(HaveOccurred())
	err = a.write(ctx, ns, n+1)
	g.Expect(errors.As(err, &refused)).To(BeTrue(), "got %v", err)
	g.Expect(refused.Lease).To(Equal(ns + "/" + leaseName))
	g.Expect(refused.Holder).To(Equal(a.user.Name()), "the paused leader has not seen the takeover")
	g.Expect(refused.Window).To(Equal(leaseDuration - leaseDuration/5))
	g.Expect(refused.SinceRenewal).To(BeNumerically(">=", refused.Window))
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassFenced))
	g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "a fenced write is not a 409")
	g.Expect(lastAllowed.Sub(pausedAt)).To(BeNumerically("<", refused.Window), "the fence closes within the window after the last renewal, which was before the pause")

	// The standby takes over and writes; the old leader keeps trying and is refused.
	g.Eventually(func() bool { return elected(b.mgr) }).WithTimeout(3 * leaseDuration).Should(BeTrue())
	g.Eventually(func() error { n++; return b.write(ctx, ns, n) }).Should(Succeed(), "the new leader writes")
	refusedAfter := 0
	for range 20 {
		n++
		if err := a.write(ctx, ns, n); err != nil {
			g.Expect(errors.As(err, &refused)).To(BeTrue(), "got %v", err)
			refusedAfter++
		}
	}
	g.Expect(refusedAfter).To(Equal(20), "every write of the old leader after the takeover is refused")

	// The API server's audit log: no write of the old leader arrived after the standby's
	// first renewal as holder.
	after, err := env.AuditLog().Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	events, err := env.AuditLog().Between(before, after)
	g.Expect(err).NotTo(HaveOccurred())
	takeover := firstLeaseWrite(events.ByUser(b.user.Name()))
	g.Expect(takeover.IsZero()).To(BeFalse(), "the audit log has the standby's takeover")
	writesA := events.ByUser(a.user.Name()).Writes()
	var late []string
	allowedAfterPause := 0
	for _, e := range writesA {
		if e.Received.After(pausedAt) {
			allowedAfterPause++
		}
		if !e.Received.Before(takeover) {
			late = append(late, fmt.Sprintf("%s %s/%s at %s", e.Verb, e.Resource, e.Name, e.Received.Format(time.RFC3339Nano)))
		}
	}
	g.Expect(late).To(BeEmpty(), "writes of the old leader received after the takeover at %s:\n%s", takeover.Format(time.RFC3339Nano), cmp.Diff([]string(nil), late))
	g.Expect(allowedAfterPause).To(BeNumerically(">=", 1), "the old leader wrote after the pause, while its fence was open")

	// Resumed, the old leader finds out and stops, as controller-runtime makes it.
	a.lock.resume()
	g.Expect(a.waitUntilStopped(3 * leaseDuration)).To(MatchError("leader election lost"))
}

// The same scenario without the fence shows what it prevents: the paused leader writes after
// the takeover.
func TestWithoutTheFenceAPausedLeaderWritesAfterTheTakeover(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	a, b := newReplica(t, "unfenced-a", ns, false), newReplica(t, "unfenced-b", ns, true)
	a.start(t)
	g.Eventually(func() bool { return elected(a.mgr) }).WithTimeout(30 * time.Second).Should(BeTrue())
	b.start(t)
	a.lock.pause()
	g.Eventually(func() bool { return elected(b.mgr) }).WithTimeout(3 * leaseDuration).Should(BeTrue())
	before, err := env.AuditLog().Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for n := range 5 {
		g.Expect(a.write(ctx, ns, n)).To(Succeed(), "nothing stops the old leader")
	}
	after, err := env.AuditLog().Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	events, err := env.AuditLog().Between(before, after)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events.ByUser(a.user.Name()).Writes()).To(HaveLen(5), "the API server accepted its writes after the takeover")
	a.lock.resume()
	g.Expect(a.waitUntilStopped(3 * leaseDuration)).To(MatchError("leader election lost"))
}

// firstLeaseWrite returns when the API server received the first successful write of the Lease
// in events: the replica's acquisition.
func firstLeaseWrite(events testenv.AuditEvents) time.Time {
	for _, e := range events.Writes() {
		if e.APIGroup == coordinationv1.GroupName && e.Resource == "leases" && e.Name == leaseName && e.Code < 300 {
			return e.Received
		}
	}
	return time.Time{}
}

// metricsOff turns the managers' metrics listeners off: tests run side by side.
var metricsOff = metricsserver.Options{BindAddress: "0"}
