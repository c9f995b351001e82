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

// Package contender holds the reconcilers the benchmark compares. Each implements the same
// controller for the same Widget CRD, with one library's way of writing to the API server:
//
//   - floor: no library, the fewest writes a correct controller can send: one finalizer patch
//     and one status patch to converge, nothing at steady state; optimistic locking on both;
//   - naive: the kubebuilder sample's style: Update to add the finalizer, meta.SetStatusCondition
//     and an unconditional Status().Update, re-fetching and retrying on conflict;
//   - controllerutil: controller-runtime's CreateOrPatch, which sends merge patches of what the
//     mutate function changed;
//   - flux: fluxcd/pkg/runtime's patch helper and conditions;
//   - cluster-api: cluster-api's util/patch helper, util/conditions (the v1beta2 functions on
//     metav1.Condition) and util/finalizers.EnsureFinalizer;
//   - tenon: tenon's finalizer.Ensure, conditions and patch.Helper, registered with requeue.WithBackoff;
//   - tenon-ssa: tenon's finalizer.Ensure and patch.Applier.ApplyStatus (server-side apply).
//
// What they have in common, so that only the write strategy differs:
//
//   - the desired status comes from [Desired]: the same three dependent conditions and the same
//     Ready summary, with the same reasons and messages, for the same spec;
//   - every condition and status.observedGeneration record the generation reconciled;
//   - one finalizer, [Finalizer], added before the status is written and removed on deletion;
//   - each reads the Widget through the manager's client (the informer cache);
//   - none requeues periodically: reconciles come from watch events and from the benchmark's
//     resync source.
//
// Where a library offers a summary function (tenon Summary, Flux SetSummary, cluster-api's
// summary), it is not used: each computes its own reason and message, which would make the
// statuses differ between contenders. The micro-benchmarks measure the libraries' Set functions.
package contender
