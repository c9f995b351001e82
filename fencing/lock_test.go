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

package fencing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

const me, other = "replica-a", "replica-b"

// fakeLock is a resourcelock.Interface in memory whose calls run hooks, so that a test can see
// the fence while a request is "in flight" and make requests take time or fail.
type fakeLock struct {
	record resourcelock.LeaderElectionRecord
	// during runs inside Create and Update, before they return err.
	during func()
	err    error
}

func (f *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r := f.record
	return &r, nil, f.err
}

func (f *fakeLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return f.Update(ctx, r)
}

func (f *fakeLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	if f.during != nil {
		f.during()
	}
	if f.err != nil {
		return f.err
	}
	f.record = r
	return nil
}

func (f *fakeLock) RecordEvent(string) {}
func (f *fakeLock) Identity() string   { return me }
func (f *fakeLock) Describe() string   { return "operators/cluster-operator" }

// newTestLock returns a Lock around a fakeLock, on a fake clock.
func newTestLock(t *testing.T, opts ...Option) (*Lock, *fakeLock, *clocktesting.FakePassiveClock) {
	t.Helper()
	inner := &fakeLock{}
	l, err := NewLock(inner, opts...)
	if err != nil {
		t.Fatalf("NewLock: %v", err)
	}
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l.clock = c
	return l, inner, c
}

// renewal is the record client-go writes to renew or acquire a lease of 15 seconds as holder.
func renewal(holder string) resourcelock.LeaderElectionRecord {
	return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: 15}
}

func TestCheckAllowsWritesOnlyWithinTheWindowAfterARenewalStarted(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		opts []Option
		// steps runs against the lock; then the clock is at the returned offset from the
		// start of the last renewal, and allowed is what Check must say.
		steps   func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock)
		allowed bool
	}{
		{
			name:    "the fence is closed before the first acquisition",
			steps:   func(*Lock, *fakeLock, *clocktesting.FakePassiveClock) {},
			allowed: false,
		},
		{
			name: "a create with this replica as holder opens the fence",
			steps: func(l *Lock, _ *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Create(ctx, renewal(me))
			},
			allowed: true,
		},
		{
			name: "the default window is the lease duration minus a fifth: open just before 12 s",
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(12*time.Second - time.Nanosecond))
			},
			allowed: true,
		},
		{
			name: "the default window is the lease duration minus a fifth: closed at 12 s",
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(12 * time.Second))
			},
			allowed: false,
		},
		{
			name: "a margin of 1 s keeps the fence open until 14 s",
			opts: []Option{Margin(time.Second)},
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(14*time.Second - time.Millisecond))
			},
			allowed: true,
		},
		{
			name: "a margin of 0 closes the fence at exactly the lease duration",
			opts: []Option{Margin(0)},
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(15 * time.Second))
			},
			allowed: false,
		},
		{
			name: "a renewal counts from its start, not from its response",
			steps: func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock) {
				f.during = func() { c.SetTime(c.Now().Add(5 * time.Second)) }
				_ = l.Update(ctx, renewal(me))
				// 5 s in flight plus 7 s: 12 s since the start.
				c.SetTime(c.Now().Add(7 * time.Second))
			},
			allowed: false,
		},
		{
			name: "a failed renewal does not move the start",
			steps: func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(10 * time.Second))
				f.err = errors.New("timeout")
				_ = l.Update(ctx, renewal(me))
				c.SetTime(c.Now().Add(2 * time.Second))
			},
			allowed: false,
		},
		{
			name: "each successful renewal moves the start",
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				for range 10 {
					_ = l.Update(ctx, renewal(me))
					c.SetTime(c.Now().Add(10 * time.Second))
				}
			},
			allowed: true,
		},
		{
			name: "a release closes the fence at once",
			steps: func(l *Lock, _ *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				_ = l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1})
			},
			allowed: false,
		},
		{
			name: "a release that fails closes the fence too",
			steps: func(l *Lock, f *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				f.err = errors.New("timeout")
				_ = l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1})
			},
			allowed: false,
		},
		{
			name: "a get that shows another holder closes the fence",
			steps: func(l *Lock, f *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				f.record = renewal(other)
				_, _, _ = l.Get(ctx)
			},
			allowed: false,
		},
		{
			name: "a get that shows this replica keeps the fence open",
			steps: func(l *Lock, _ *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				_, _, _ = l.Get(ctx)
			},
			allowed: true,
		},
		{
			name: "a renewal after the fence closed reopens it",
			steps: func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
				f.record = renewal(other)
				_, _, _ = l.Get(ctx)
				c.SetTime(c.Now().Add(time.Minute))
				_ = l.Update(ctx, renewal(me))
			},
			allowed: true,
		},
		{
			name: "a lease duration below the margin never opens the fence",
			opts: []Option{Margin(20 * time.Second)},
			steps: func(l *Lock, _ *fakeLock, _ *clocktesting.FakePassiveClock) {
				_ = l.Update(ctx, renewal(me))
			},
			allowed: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			l, f, c := newTestLock(t, tt.opts...)
			tt.steps(l, f, c)
			err := l.Check()
			if tt.allowed {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				var refused *RefusedError
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want a *RefusedError, got %v", err)
			}
		})
	}
}

func TestAReleaseClosesTheFenceBeforeItIsSent(t *testing.T) {
	g := NewWithT(t)
	l, f, _ := newTestLock(t)
	g.Expect(l.Update(context.Background(), renewal(me))).To(Succeed())
	var during error
	f.during = func() { during = l.Check() }
	g.Expect(l.Update(context.Background(), resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1})).To(Succeed())
	g.Expect(during).To(HaveOccurred(), "a write checked while the release is in flight must be refused")
}

func TestARenewalIsNotTrustedWhileInFlight(t *testing.T) {
	g := NewWithT(t)
	l, f, _ := newTestLock(t)
	var during error
	f.during = func() { during = l.Check() }
	g.Expect(l.Create(context.Background(), renewal(me))).To(Succeed())
	g.Expect(during).To(HaveOccurred(), "the first acquisition opens the fence only once it succeeded")
	g.Expect(l.Check()).To(Succeed())
}

func TestRefusedErrorNamesTheLeaseTheHolderAndTheTimeSinceTheRenewal(t *testing.T) {
	tests := []struct {
		name    string
		steps   func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock)
		want    RefusedError
		message string
	}{
		{
			name:    "never acquired",
			steps:   func(*Lock, *fakeLock, *clocktesting.FakePassiveClock) {},
			want:    RefusedError{Lease: "operators/cluster-operator", Identity: me},
			message: "write refused by the fence of lease operators/cluster-operator: this replica (replica-a) has not acquired it (holder: none known)",
		},
		{
			name: "another replica holds it and this one never did",
			steps: func(l *Lock, f *fakeLock, _ *clocktesting.FakePassiveClock) {
				f.record = renewal(other)
				_, _, _ = l.Get(context.Background())
			},
			want:    RefusedError{Lease: "operators/cluster-operator", Identity: me, Holder: other},
			message: "write refused by the fence of lease operators/cluster-operator: this replica (replica-a) has not acquired it (holder: replica-b)",
		},
		{
			name: "the fence closed by time",
			steps: func(l *Lock, _ *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(context.Background(), renewal(me))
				c.SetTime(c.Now().Add(17200 * time.Millisecond))
			},
			want:    RefusedError{Lease: "operators/cluster-operator", Identity: me, Holder: me, SinceRenewal: 17200 * time.Millisecond, Window: 12 * time.Second},
			message: "write refused by the fence of lease operators/cluster-operator: this replica (replica-a) last renewed it 17.2s ago, writes are allowed for 12s after a renewal (holder: replica-a)",
		},
		{
			name: "the lease passed to another replica",
			steps: func(l *Lock, f *fakeLock, c *clocktesting.FakePassiveClock) {
				_ = l.Update(context.Background(), renewal(me))
				c.SetTime(c.Now().Add(3 * time.Second))
				f.record = renewal(other)
				_, _, _ = l.Get(context.Background())
			},
			want:    RefusedError{Lease: "operators/cluster-operator", Identity: me, Holder: other, SinceRenewal: 3 * time.Second, Window: 12 * time.Second},
			message: "write refused by the fence of lease operators/cluster-operator: this replica (replica-a) last renewed it 3s ago, writes are allowed for 12s after a renewal (holder: replica-b)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			l, f, c := newTestLock(t)
			tt.steps(l, f, c)
			var refused *RefusedError
			g.Expect(errors.As(l.Check(), &refused)).To(BeTrue())
			g.Expect(*refused).To(Equal(tt.want), cmp.Diff(tt.want, *refused))
			g.Expect(refused.Error()).To(Equal(tt.message), cmp.Diff(tt.message, refused.Error()))
			g.Expect(refused.Fenced()).To(BeTrue())
		})
	}
}

func TestNewLockRefusesANilLockAndANegativeMargin(t *testing.T) {
	tests := []struct {
		name string
		lock resourcelock.Interface
		opts []Option
		want string
	}{
		{"a nil lock", nil, nil, "failed to build a fencing lock: the leader election lock is nil"},
		{"a negative margin", &fakeLock{}, []Option{Margin(-time.Second)}, "failed to build a fencing lock: the margin -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			l, err := NewLock(tt.lock, tt.opts...)
			g.Expect(l).To(BeNil())
			g.Expect(err).To(MatchError(tt.want))
		})
	}
}
