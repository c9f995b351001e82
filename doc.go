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

// Package tenon is a library of reconciliation building blocks for Kubernetes operators built on
// controller-runtime. It has no code of its own; this page is a tour of its packages.
//
// Writing an operator is easy; writing one that survives production is not. Each tenon package
// packages one of the hard parts, works on plain controller-runtime types (client.Object,
// metav1.Condition, ctrl.Result) and can be adopted on its own. There is no base reconciler to
// embed.
//
// # Building a reconciler
//
//   - conditions sets metav1.Condition with observedGeneration and timestamps that move only on
//     real transitions, validates conditions before the API server sees them, summarises Ready
//     from dependent conditions, and follows the kstatus convention (Ready, Reconciling,
//     Stalled) that kubectl wait and kstatus-based tools read.
//   - finalizer adds and removes finalizers without dropping another controller's, and runs
//     ordered cleanup steps on deletion with a Deleting condition, a deadline and an audited
//     escape hatch.
//   - patch writes what a reconcile changed and nothing else: a snapshot-and-diff Helper for the
//     object being reconciled, which resolves conflicts with a three-way merge, and a
//     server-side apply Applier for children, which skips requests that would change nothing.
//   - requeue builds the (ctrl.Result, error) a reconcile returns without the deprecated
//     Result.Requeue: polling with jitter, terminal errors, conflicts as quiet requeues, merged
//     results of several steps, and per-object backoff.
//   - ownership sets owner references where Kubernetes allows them and tracking labels where it
//     does not (children in other namespaces, cluster-scoped children of namespaced owners), maps
//     children's events back to their owner, adopts, prunes, and deletes from a finalizer what the
//     garbage collector cannot reach.
//   - external keeps a resource outside the cluster (a cloud database, a DNS record) for each
//     object: created once even across crashes and lost responses, updated when it drifts, its
//     operations polled, deleted by a finalizer step; values generated for it, such as a
//     password, are stored before they are used.
//   - conditions/observe records a Kubernetes Event when Ready or Stalled change, and exports
//     every condition as the tenon_condition Prometheus gauge.
//   - fencing refuses the writes of a leader that may have lost its leader election lease
//     without knowing it (paused, partitioned), before another replica can have taken over.
//
// # Testing it
//
//   - testing/testenv starts a real control plane (etcd and kube-apiserver through envtest) once
//     per test package, with a garbage collector, per-test namespaces, cache-aware waits and users
//     limited to an operator's RBAC, and never leaves a process behind.
//   - testing/faults wraps any client (the fake, envtest's, a manager's) with scripted, replayable
//     faults (conflicts, server errors, throttling, latency, lost responses) and records every
//     request.
//   - testing/matchers are gomega matchers for conditions, readiness, kstatus, finalizers, owner
//     references and deletion.
//   - testing/reconciletest drives a reconciler until it is stable, asserts that the next
//     reconcile writes nothing, and checks that it converges under faults.
//
// The example below is a reconciler built from these packages; examples/cluster-operator in the
// repository is a complete operator in the kubebuilder layout that uses all of them.
//
// Principles every package follows: reconciliation is level-triggered (a second reconcile with
// nothing to do sends no write), conflicts are normal (never surfaced as failures), nobody else's
// data is dropped (finalizers, conditions, user edits), only what changed is written, and the
// same input always produces the same bytes.
//
// The [guides] explain what operator authors most often get wrong, and how these packages help.
//
// [guides]: https://github.com/tenon-dev/tenon/blob/main/docs/README.md
package tenon
