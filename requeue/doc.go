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

// Package requeue builds the (ctrl.Result, error) a reconciler returns, without the deprecated
// Result.Requeue: when to come back, which errors to retry, which to stop on, and which are not
// errors at all; and it records that outcome in the object's status.
//
// # Results
//
// [Done] ends a reconcile. [After] comes back after a known delay; [Poll] comes back about an
// interval later, jittered so that objects do not poll in lockstep, to watch an external system
// that sends no events. [Retry] comes back because something is not ready yet, with a backoff
// per object. [Terminal] stops retrying an error that only a change of the object can fix
// (controller-runtime's reconcile.TerminalError), with the reason the status should give.
// [Results] merges the outcomes of several steps: the soonest requeue wins and errors are
// joined.
//
// # Errors and backoff
//
// Wrap the reconciler with [WithBackoff] and return errors as they come. The important case is
// the conflict: "the object has been modified; please apply your changes to the latest version"
// is the API server's optimistic concurrency at work, not a failure. WithBackoff turns it into a
// quiet requeue with a jittered per-object backoff: no error log line, no error metric, just
// tenon_reconcile_quiet_conflicts_total; one that comes back too many times in a row is returned
// as an error after all (see [BackoffOptions.MaxQuietConflicts]), so it does not stay silent.
// controller-runtime deprecated Result.Requeue, and RequeueAfter bypasses its per-object rate
// limiter, so WithBackoff also gives [Retry] an exponential per-object backoff. [Classify] sorts
// an error into the [Class] all of this is decided by; it keeps a 403, an invalid request or a
// webhook's denial apart from a conflict, also when errors are joined. A server-side apply
// refused over fields another field manager owns is a 409 too, but no race: [ClassFieldConflict]
// is returned as an error, never quiet. The requeue guide has a table of the errors a real API
// server returns, with the class and consequence of each, checked by a test against envtest.
//
// # Status
//
// [Report] writes the outcome into the object's status the way kstatus and `kubectl wait` read
// it: Stalled for terminal errors and field conflicts, Reconciling while work is under way or
// retried, status.observedGeneration once a generation has been reconciled.
//
// For a per-reconcile timeout use controller-runtime's controller.Options.ReconciliationTimeout;
// for the order of requeues, Result.Priority with the priority queue (Results keeps the highest).
//
// The [requeue guide] says what controller-runtime does with each result and which one to return
// when.
//
// [requeue guide]: https://github.com/tenon-dev/tenon/blob/main/docs/requeue.md
package requeue
