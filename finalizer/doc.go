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

// Package finalizer makes deletion cooperative and safe: it adds a controller's finalizer
// without dropping anyone else's, runs ordered cleanup steps once the object is deleted, reports
// their progress, and removes the finalizer only when they are done — without wedging objects in
// Terminating when something goes wrong.
//
// A finalizer turns "delete" into a state the controller can observe: the API server sets
// metadata.deletionTimestamp and keeps the object until its finalizers are gone. Get it wrong one
// way and external resources leak (the finalizer is removed too early, or never added); get it
// wrong the other way and objects, and then their namespace, hang in Terminating forever.
//
// # Adding and removing
//
// [Ensure] and [Remove] change one finalizer and write it. The write never drops or duplicates a
// finalizer another controller added, even when the caller's copy is stale: the list is patched
// with optimistic locking, and on a conflict the latest object is read and the change applied
// again (a plain JSON merge patch of metadata.finalizers, as most libraries send, replaces the
// whole list and silently drops concurrent additions). Ensure never adds a finalizer to an object
// that is being deleted. To change finalizers in memory and write them with the rest of the
// object (with the patch package), use controller-runtime's controllerutil.AddFinalizer and
// RemoveFinalizer: patch.Helper writes the list just as safely.
//
// # The lifecycle
//
// A [Lifecycle] holds a finalizer name and ordered [Step] values. Its Reconcile ensures the
// finalizer while the object lives; once it is deleted, it runs the steps in order. Each step
// reports [Finished], [Waiting] (come back later; not an error), or an error (retried with
// backoff, recorded in an Event). Progress is visible in a Deleting condition. The finalizer is
// removed only after every step reported done.
//
//	lifecycle := &finalizer.Lifecycle[*v1alpha1.Cluster]{
//		Finalizer: "apps.example.com/cleanup",
//		Client:    mgr.GetClient(),
//		Recorder:  mgr.GetEventRecorder("cluster-controller"),
//		Steps: []finalizer.Step[*v1alpha1.Cluster]{
//			{Name: "dns-record", Run: r.deleteDNSRecord},
//			{Name: "directory-entry", Run: r.deleteDirectoryEntry},
//		},
//		Timeout: 30 * time.Minute,
//	}
//
// Steps run again on every reconcile until all are done, so each must be idempotent and cheap
// once its work is done (check before deleting; report [Finished] when already gone).
//
// One controller should own one finalizer: controller-runtime's registry of several finalizers
// per controller runs them in map order and cannot express that one cleanup must wait for
// another; ordered steps under one name can.
//
// # When cleanup cannot finish
//
// A failing step is retried with a backoff of its own (1s, 2s, 4s, … up to
// Lifecycle.StalledRetryInterval), whatever events arrive in between, so a step whose error text
// changes on every attempt cannot turn its status writes into a hot loop. With Lifecycle.Timeout,
// cleanup that takes too long marks the object Stalled (reason CleanupTimedOut) and is retried
// only every Lifecycle.StalledRetryInterval, instead of failing silently forever. When the
// external system is gone for good, a person can release the finalizer with the
// [ReleaseAnnotation] if the controller enabled Lifecycle.AllowRelease; its value, from
// [ReleaseValue], names this deletion, so an annotation set before the deletion began never
// counts, and the release is recorded in a Warning Event and a log line that name who set it
// and the steps that did not finish. Lifecycle.Retain skips
// the steps marked Step.External on purpose, for a deletion policy that keeps external
// resources; steps that clean up Kubernetes objects still run.
//
// Namespace deletion waits for every object's finalizers, so a finalizer that never finishes
// holds its namespace in Terminating too: the Deleting condition says why.
//
// # Several controllers, one object
//
// When several controllers hold finalizers on one object, each with its own Lifecycle, they
// share the Deleting condition: its message has one line per finalizer, "<finalizer>: step
// ...", in the order of metadata.finalizers, and each Lifecycle rewrites only its own line, so
// no controller's write undoes another's and they never take turns rewriting it; Stalled, after
// a Timeout, has one line per finalizer too. A Lifecycle whose cleanup is done removes its lines
// before its finalizer goes when another finalizer keeps the object. A step that
// reports Waiting(after) runs again only once after has passed on Lifecycle.Clock, whatever
// other controllers' writes wake the reconcile in between.
//
// The [finalizers guide] covers the state machine, leaks and wedges, deadlines, the escape hatch
// and namespace termination.
//
// [finalizers guide]: https://github.com/tenon-dev/tenon/blob/main/docs/finalizers.md
package finalizer
