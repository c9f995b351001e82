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

// Package patch writes a reconcile's changes to the API server without losing anyone else's, in
// two ways: a snapshot-and-diff [Helper] for the object a controller reconciles, and an [Applier]
// that writes objects with server-side apply and skips every request it can prove would change
// nothing.
//
// Both follow the same rules: a reconcile that changes nothing sends no write; a conflict with
// another writer is resolved, not reported, whenever it can be; and another writer's data (a
// finalizer, a label, a condition, a field) is never dropped.
//
// # The patch helper
//
// Take a snapshot with [NewHelper] before changing the object, change it, then call
// [Helper.Patch], usually deferred so that every return path writes the status:
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
//		cluster := &v1alpha1.Cluster{}
//		if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
//			return ctrl.Result{}, client.IgnoreNotFound(err)
//		}
//		h, err := patch.NewHelper(cluster, r.Client)
//		if err != nil {
//			return ctrl.Result{}, err
//		}
//		defer func() {
//			err = errors.Join(err, h.Patch(ctx, cluster,
//				patch.OwnedConditions{conditions.Ready, ConfigReady}, patch.WithObservedGeneration{}))
//		}()
//		controllerutil.AddFinalizer(cluster, finalizerName)
//		conditions.MarkTrue(cluster, ConfigReady, conditions.ReasonSucceeded, "")
//		...
//	}
//
// Patch compares the object with the snapshot and sends at most one request for metadata and
// spec and one for the status subresource, each a JSON Patch of the changed fields only. Where
// cluster-api's and Flux's helpers send merge patches, which replace whole lists, Patch changes
// a condition in place, guarded by a test of its type, and replaces the finalizer list guarded
// by a test that it is still the list it read: while another controller writes a label, the
// spec, another condition or the rest of the status, an update of a condition does not even
// conflict. Only adding or removing a condition type, owner references, and maps or lists that
// did not exist yet are written under the resourceVersion lock. When a guard fails
// or the API server reports a 409, Patch reads the latest object, carries over this reconcile's
// changes (a three-way merge: finalizers and owner references as sets, conditions by type, maps
// key by key) and sends again, with a jittered backoff. See [Helper.Patch] for the exact rules,
// including objects being deleted and CRDs without a status subresource.
//
// # Server-side apply
//
// An [Applier] applies desired objects, typed or unstructured, under one field manager:
// [Applier.Apply] for children a controller creates and owns, [Applier.ApplyStatus] for status
// fields and conditions written through the status subresource.
//
// Before each apply the Applier reads the live object (from the manager's cache, usually) and
// skips the request when it can prove it would change nothing: when it applied the same desired
// object and the object has not changed since, or, after a restart, when every desired field
// already has its value, a value owned as a whole (an atomic map or list) exactly, and the field
// manager owns exactly those fields. Whatever it cannot prove it sends. Fields the server
// defaults are not compared, so server-side defaulting cannot make a controller apply in a hot
// loop (controller-runtime#2733, #3409), and a steady-state reconcile sends no write.
//
// ApplyStatus carries each condition's LastTransitionTime over from the live object while its
// status does not change, so a controller can rebuild its conditions from scratch every
// reconcile; and with [OwnedConditions] each controller applies only its own conditions, so
// several controllers share status.conditions (a list of type map) without clobbering each
// other.
//
// # Which one to use
//
//	                                          Helper                        Applier
//	the object the controller reconciles      yes                           no: applying it would
//	(finalizers, status, observedGeneration)                                take over fields users set
//	children the controller creates and owns  possible (Get, change, Patch) yes: Apply
//	status written by several controllers     yes, with OwnedConditions     yes, ApplyStatus with
//	                                                                        OwnedConditions
//	conditions rebuilt from scratch           use conditions.Set on the     yes: times carried over
//	                                          object read
//	CRD without a status subresource          yes                           not for the status
//	unstructured objects                      yes                           yes (needs a structural
//	                                                                        schema on the server)
//	removing a field set before               clear it in the object        leave it out of desired
//	requests in a steady state                none                          none
//	requests for a change                     one per part changed          one, plus a read
//
// In short: patch the object you reconcile with the Helper; apply the objects you own with the
// Applier.
//
// # What this package does not do
//
// It does not create the object a Helper patches, delete objects, or prune children that are
// no longer desired (see the ownership package). It cannot make a merge of concurrent changes to
// the same scalar field anything but "last writer wins": the controller owns the fields it
// changes. And an Applier's skip decision is only as fresh as its reader: with a cached reader a
// change made a moment ago may be applied on the next reconcile rather than this one.
//
// The [concurrency guide] explains 409 Conflict, how the helper resolves it and when to apply
// instead; the [cache guide] covers stale reads and read-your-writes.
//
// [concurrency guide]: https://github.com/tenon-dev/tenon/blob/main/docs/concurrency.md
// [cache guide]: https://github.com/tenon-dev/tenon/blob/main/docs/cache.md
package patch
