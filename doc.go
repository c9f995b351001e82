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
// metav1.Condition, ctrl.Result) and can be adopted on its own:
//
//   - testing/testenv starts a real control plane (etcd and kube-apiserver through envtest) once
//     per test package, with a garbage collector, per-test namespaces and cache-aware waits, and
//     never leaves a process behind.
//
// Principles every package follows: reconciliation is level-triggered (a second reconcile with
// nothing to do sends no write), conflicts are normal (never surfaced as failures), nobody else's
// data is dropped (finalizers, conditions, user edits), only what changed is written, and the
// same input always produces the same bytes.
package tenon
