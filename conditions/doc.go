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

// Package conditions manages status conditions (metav1.Condition) the way Kubernetes tools read
// them: each condition says which generation it describes, timestamps move only on real
// transitions, the list has a stable order, and a condition the API server would reject is
// caught before it is written.
//
// It works on any object that exposes its conditions with two methods (see [Setter]), on a bare
// slice ([ForSlice]) and on unstructured objects ([FromUnstructured]); it does not need API
// types of its own.
//
// # Setting conditions
//
// [Set], [MarkTrue], [MarkFalse] and [MarkUnknown] set a condition and report whether anything
// changed, so a reconcile that changes nothing writes nothing:
//
//   - ObservedGeneration is stamped from the object's metadata.generation;
//   - LastTransitionTime changes only when the status does, and is truncated to seconds, as the
//     API server stores it, so a status does not churn (and trigger another reconcile) because
//     of a new message or a nanosecond difference;
//   - an invalid condition (a type or reason the API server would reject, see [Validate]) is
//     stored as given: it is a programmer error, and the patch package's Helper.Patch and
//     Applier.ApplyStatus refuse to write it, with an error that wraps [ErrInvalid] and names the
//     condition and the rule, as the BeCompliant matcher of testing/matchers does in tests;
//     call [Validate] first on a condition built from untrusted input;
//   - new conditions are inserted in a documented order: Ready first, then alphabetical.
//
// Condition types and reasons are the typed strings [Type] and [Reason]; declare yours as
// constants. [ReasonFrom] derives a valid reason from an error message.
//
// # Reading conditions
//
// [Get], [IsTrue], [IsFalse] and [IsUnknown] read a condition. [IsCurrent] and [IsReady]
// also check that the condition was computed for the current generation: a Ready condition that
// lags behind metadata.generation describes an older spec and must not be trusted.
//
// # Summaries
//
// [Summary] computes Ready (or any type) from dependent conditions, aware of polarity:
// Degraded, Stalled, Reconciling and Deleting are healthy when False, and so is a summary into
// one of them, so summaries chain. [Mirror] copies a condition from another object, [Aggregate]
// combines one condition across many objects. All three compute a condition; [Set] sets it:
//
//	conditions.Set(cluster, conditions.Summary(cluster, conditions.Ready, []conditions.Type{ConfigReady, DNSReady}))
//
// A condition a reconcile no longer sets (a feature switched off) is removed with [Delete].
//
// # The kstatus convention
//
// Tools built on kstatus (Flux, kpt, Config Sync, cli-utils) read an object's state from
// status.observedGeneration, the Reconciling and Stalled conditions, and Ready when neither is
// True; `kubectl wait --for=condition=Ready` reads Ready and the generation it was observed at.
// requeue.Report keeps Reconciling, Stalled and status.observedGeneration from what a reconcile
// returns; [MarkReconciling], [MarkStalled], [MarkReconciled] and [SetObservedGeneration] are
// the pieces it is made of, for controllers that record the outcome their own way. [ComputeKStatus]
// returns the state kstatus reports (Current, InProgress, Failed, Terminating), tested to agree
// with kstatus itself on every combination of those conditions; testing/matchers' BeCompliant
// lists how an object breaks the convention, for tests.
//
// # What this package does not do
//
// It never talks to the API server: write the object with the patch package (whose Helper
// merges conditions by type with other writers' changes) or your client. It does not reorder
// lists it did not build, and it cannot stop another controller from writing invalid
// conditions. It imports apimachinery only, so that API types can use its interfaces; Events and
// metrics of conditions are in conditions/observe.
//
// The [conditions guide] explains observedGeneration, `kubectl wait`, the kstatus convention and
// summaries, with examples.
//
// [conditions guide]: https://github.com/tenon-dev/tenon/blob/main/docs/conditions.md
package conditions
