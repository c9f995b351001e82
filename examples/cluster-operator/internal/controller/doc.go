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

// Package controller is the Cluster controller: it reconciles a Cluster's children (a ConfigMap,
// two Services and a StatefulSet in its namespace, and an entry in the directory namespace) and
// its DNS record at the DNS provider, and reports their state in the Cluster's status.
//
// # The blocks it is made of
//
// Each reconcile runs the finalizer first (tenon's finalizer.Lifecycle), so that nothing
// external exists without a finalizer to clean it up; applies the children with server-side
// apply, each owned in the same call (patch.Applier with patch.OwnedBy): through an owner
// reference or, for the directory entry in another namespace, tracking labels (ownership);
// keeps the DNS record with external.Resource and the provider of internal/dns (created once
// across crashes, polled until it is in sync, put back when it drifts, deleted by a finalizer
// step that Retain skips); summarises the outcome in conditions (conditions.Summary) and
// records it the kstatus way (requeue.Report), then writes the status in one guarded patch,
// none when nothing changed (patch.Helper). requeue.WithBackoff makes conflicts quiet requeues.
//
// # Running it
//
// [NewReconciler] builds the reconciler from a manager, and [ClusterReconciler.SetupWithManager]
// registers it. The manager should use [CacheOptions] and [ClientOptions], as cmd/main.go does:
// the first limits the cache to what the controller reads, the second makes its reads see its
// own writes.
//
// # What it does not do
//
// It runs no workload: on a real cluster the StatefulSet controller and the kubelets do; in the
// tests, which run on envtest, the internal/kubelet simulator stands in for them.
package controller
