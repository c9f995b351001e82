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
	"fmt"
	"time"
)

// RefusedError is the error of a write that the fence refused: this replica cannot be sure it
// still holds the lease, because it never acquired it or because its last renewal started too
// long ago. Nothing was sent to the API server.
//
// It is not an API status error: it is not a 409 Conflict (the object did not change) and
// apierrors predicates report false for it. tenon's requeue.Classify reports it as
// requeue.ClassFenced, a quiet requeue, through its Fenced method; wrapped with %w (as
// client-go wraps transport errors in a *url.Error) it stays one.
type RefusedError struct {
	// Lease is the lease as the lock describes it: "namespace/name" for a Lease lock.
	Lease string

	// Identity is this replica's holder identity.
	Identity string

	// Holder is the holder of the lease as this replica last wrote or read it: Identity when
	// the fence closed by time, another replica's identity when the lease passed on, and empty
	// when no replica holds it or this replica has not read it yet.
	Holder string

	// SinceRenewal is how long ago, on this replica's monotonic clock, its last successful
	// renewal started; 0 when it never renewed.
	SinceRenewal time.Duration

	// Window is how long after the start of a renewal writes are allowed: the lease duration
	// minus the margin; 0 before the first renewal.
	Window time.Duration
}

// Error says which lease refused the write, who holds it, and when this replica last renewed it.
func (e *RefusedError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "none known"
	}
	if e.SinceRenewal == 0 {
		return fmt.Sprintf("write refused by the fence of lease %s: this replica (%s) has not acquired it (holder: %s)",
			e.Lease, e.Identity, holder)
	}
	return fmt.Sprintf("write refused by the fence of lease %s: this replica (%s) last renewed it %s ago, writes are allowed for %s after a renewal (holder: %s)",
		e.Lease, e.Identity, e.SinceRenewal.Round(time.Millisecond), e.Window, holder)
}

// Fenced reports whether the error is a write refused by a fence: always true. It is the method
// tenon's requeue.Classify looks for.
func (e *RefusedError) Fenced() bool { return true }
