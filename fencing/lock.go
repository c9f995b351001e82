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
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// Lock is a leader election lock that remembers when this replica last renewed its lease, and
// fences writes with it: [Lock.Check] allows a write only while less than the lease duration
// minus the [Margin] has passed since the start of the last renewal that succeeded with this
// replica as the holder. Give it to the manager as
// manager.Options.LeaderElectionResourceLockInterface, and fence the manager's requests with
// [Lock.WrapTransport].
//
// Lock implements resourcelock.Interface by calling the lock it wraps:
//
//   - Create and Update that write this replica as the holder take the time on the monotonic
//     clock before they call the wrapped lock, and make it the last renewal when the call
//     succeeds; one that fails changes nothing, although the API server may have accepted it
//     (the fence then closes earlier than it had to, never later).
//   - Create and Update that write another holder, or none (the release of
//     LeaderElectionReleaseOnCancel), close the fence before they call the wrapped lock.
//   - Get that returns another holder, or none, closes the fence: the lease passed on.
//   - RecordEvent, Identity and Describe are the wrapped lock's.
//
// A Lock is safe for concurrent use. Its zero value is not usable: build it with [NewLock].
type Lock struct {
	inner  resourcelock.Interface
	opts   lockOptions
	clock  clock.PassiveClock
	suffix leasePaths

	mu sync.Mutex
	// renewed is the monotonic time at which the last renewal with this replica as the holder
	// started; zero while the fence is closed.
	renewed time.Time
	// duration is the lease duration that renewal wrote.
	duration time.Duration
	// holder is the holder of the lease as this replica last wrote or read it.
	holder string
	// lastRenewed is the start of the last successful renewal, also after the fence closed,
	// for the error message.
	lastRenewed time.Time
}

var _ resourcelock.Interface = (*Lock)(nil)

// NewLock returns a Lock around lock, which is usually the Lease lock that controller-runtime's
// leaderelection.NewResourceLock or client-go's resourcelock.New build. The fence starts
// closed: it opens with the first successful acquisition.
//
// NewLock returns an error when lock is nil or the [Margin] is negative.
func NewLock(lock resourcelock.Interface, opts ...Option) (*Lock, error) {
	if lock == nil {
		return nil, errors.New("failed to build a fencing lock: the leader election lock is nil")
	}
	o := newLockOptions(opts)
	if o.margin < 0 {
		return nil, fmt.Errorf("failed to build a fencing lock: the margin %s is negative", o.margin)
	}
	return &Lock{inner: lock, opts: o, clock: clock.RealClock{}, suffix: newLeasePaths(lock.Describe())}, nil
}

// Get implements resourcelock.Interface: it returns the wrapped lock's record, and closes the
// fence when the record names another holder or none.
func (l *Lock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	record, raw, err := l.inner.Get(ctx)
	if err == nil && record != nil {
		l.mu.Lock()
		l.holder = record.HolderIdentity
		if record.HolderIdentity != l.inner.Identity() {
			l.renewed = time.Time{}
		}
		l.mu.Unlock()
	}
	return record, raw, err
}

// Create implements resourcelock.Interface: see [Lock] for when it opens or closes the fence.
func (l *Lock) Create(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	return l.write(record, func() error { return l.inner.Create(ctx, record) })
}

// Update implements resourcelock.Interface: see [Lock] for when it opens or closes the fence.
func (l *Lock) Update(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	return l.write(record, func() error { return l.inner.Update(ctx, record) })
}

// write sends record with send, opening or closing the fence around it.
func (l *Lock) write(record resourcelock.LeaderElectionRecord, send func() error) error {
	mine := record.HolderIdentity == l.inner.Identity()
	if !mine {
		// A release or a handover: this replica must stop writing before the others may start.
		l.mu.Lock()
		l.renewed = time.Time{}
		l.mu.Unlock()
	}
	// Taken before the request: the other replicas start their lease timers when they see this
	// renewal, which is after the API server accepted it, which is after now.
	start := l.clock.Now()
	if err := send(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder = record.HolderIdentity
	if mine && start.After(l.renewed) {
		l.renewed, l.lastRenewed = start, start
		l.duration = time.Duration(record.LeaseDurationSeconds) * time.Second
	}
	return nil
}

// RecordEvent implements resourcelock.Interface with the wrapped lock's RecordEvent.
func (l *Lock) RecordEvent(event string) { l.inner.RecordEvent(event) }

// Identity implements resourcelock.Interface with the wrapped lock's Identity.
func (l *Lock) Identity() string { return l.inner.Identity() }

// Describe implements resourcelock.Interface with the wrapped lock's Describe, such as
// "namespace/name" for a Lease lock.
func (l *Lock) Describe() string { return l.inner.Describe() }

// Check returns nil when this replica may write now: its last renewal with itself as the holder
// started less than the lease duration minus the [Margin] ago, on its monotonic clock. Otherwise
// it returns a [*RefusedError]. Check reads only memory; it sends no request.
func (l *Lock) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Read the clock under the lock, so that a renewal that completes meanwhile is not compared
	// with an older time.
	now := l.clock.Now()
	window := l.window()
	if !l.renewed.IsZero() && now.Sub(l.renewed) < window {
		return nil
	}
	refused := &RefusedError{Lease: l.inner.Describe(), Identity: l.inner.Identity(), Holder: l.holder, Window: window}
	if !l.lastRenewed.IsZero() {
		refused.SinceRenewal = now.Sub(l.lastRenewed)
	}
	return refused
}

// window returns how long after the start of a renewal writes are allowed: the lease duration
// minus the margin, 0 before the first renewal. l.mu must be held.
func (l *Lock) window() time.Duration {
	margin := l.opts.margin
	if !l.opts.marginSet {
		margin = l.duration / defaultMarginDivisor
	}
	return max(l.duration-margin, 0)
}

// leasePaths are the ends of the URL paths of the requests for the lock's Lease, which the fence
// lets through so that the lock can renew and acquire the lease through a fenced transport too.
type leasePaths struct {
	// collection is the Leases of the namespace (a create), object the Lease itself.
	collection, object string
}

// newLeasePaths returns the paths of the Lease that describe names as "namespace/name", and no
// paths for any other lock.
func newLeasePaths(describe string) leasePaths {
	namespace, name, ok := strings.Cut(describe, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return leasePaths{}
	}
	collection := "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases"
	return leasePaths{collection: collection, object: collection + "/" + name}
}
