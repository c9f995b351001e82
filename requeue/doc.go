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
// errors at all.
//
// # Results
//
// [Done] ends a reconcile. [After] comes back after a known delay; [Poll] comes back about an
// interval later, jittered so that objects do not poll in lockstep, to watch an external system
// that sends no events. [Retry] comes back because something is not ready yet. [Terminal] stops
// retrying an error that only a change of the object can fix (controller-runtime's
// reconcile.TerminalError). [Results] merges the outcomes of several steps: the soonest requeue
// wins and errors are joined.
//
// # Errors
//
// [Classify] sorts an error into a [Class] (conflict, throttled, not found, transient, invalid,
// ...) and [OnError] returns what to do about it. The important case is the conflict: "the
// object has been modified; please apply your changes to the latest version" is the API
// server's optimistic concurrency at work, not a failure. OnError turns it into a quiet requeue
// after a short jittered delay: no error log line, no error metric, just
// tenon_reconcile_quiet_conflicts_total. Under [WithBackoff], a conflict that comes back too
// many times in a row is returned as an error after all (see
// [BackoffOptions.MaxQuietConflicts]), so one that never goes away does not stay silent.
//
// # Backoff without Result.Requeue
//
// controller-runtime deprecated Result.Requeue, and RequeueAfter bypasses the per-object rate
// limiter: an object that keeps saying "not yet" is retried at a fixed rate forever. [WithBackoff]
// wraps a reconciler to bring exponential per-object backoff back for [Retry] and for conflicts,
// resetting it once the object reconciles or fails terminally, and applies OnError to the errors
// the reconciler returns, so a plain "return err" on a conflict is quiet too. It also counts
// terminal errors and requeues by reason.
//
// # Status
//
// [Report] writes the outcome into the object's kstatus conditions (Stalled for terminal
// errors, Reconciling while retrying) so the status says what the logs say.
//
// For a per-reconcile timeout use controller-runtime's controller.Options.ReconciliationTimeout;
// for the order of requeues, Result.Priority with the priority queue (Results keeps the highest).
//
// The [requeue guide] says what controller-runtime does with each result and which one to return
// when.
//
// [requeue guide]: https://github.com/tenon-dev/tenon/blob/main/docs/requeue.md
package requeue
