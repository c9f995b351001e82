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
// two ways: a snapshot-and-diff Helper for the object a controller reconciles, and an Applier
// that writes objects with server-side apply and skips every request it can prove would change
// nothing.
//
// Both follow the same rules: a reconcile that changes nothing sends no write; a conflict with
// another writer is resolved, not reported, whenever it can be; and another writer's data (a
// finalizer, a label, a condition, a list element, a field) is never dropped: where both changed
// the same thing and the change cannot be merged, the write is refused with a conflict rather
// than lose theirs. The only value of theirs a write replaces is one it sets itself (a scalar or
// a map key the controller changed). The tables below say so field shape by field shape. Neither
// writes a condition the API server would reject: a condition of a typed object that
// conditions.Validate refuses (one that is new or changed, for [Helper.Patch]; one it would
// apply, for [Applier.ApplyStatus]) stops the call before it sends anything, with an error that
// wraps conditions.ErrInvalid and names the condition.
//
// # The patch helper
//
// Take a snapshot with [NewHelper] before changing the object, change it, then call
// [Helper.Patch], usually deferred so that every return path writes the status. A controller
// makes one [Writer] for all its reconciles, with what they share (the API reader, a [History],
// the conditions it owns, Events and metrics), and ends each reconcile with [Helper.Finish],
// which records the outcome, patches, and reports what the write changed, in that order:
//
//	// In main, or the reconciler's constructor:
//	r.Writer = patch.NewWriter(mgr.GetClient(), patch.WriterOptions{
//		APIReader:       mgr.GetAPIReader(),
//		OwnedConditions: []conditions.Type{ConfigReady},
//		Recorder:        mgr.GetEventRecorder("cluster-controller"),
//	})
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
//		cluster := &v1alpha1.Cluster{}
//		if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
//			return ctrl.Result{}, client.IgnoreNotFound(err)
//		}
//		h, err := r.Writer.NewHelper(cluster)
//		if err != nil {
//			return ctrl.Result{}, err
//		}
//		defer func() { res, err = h.Finish(ctx, cluster, res, err) }()
//		controllerutil.AddFinalizer(cluster, finalizerName)
//		conditions.MarkTrue(cluster, ConfigReady, conditions.ReasonSucceeded, "")
//		...
//	}
//
// Patch compares the object with the snapshot and sends at most one request for metadata and
// spec and one for the status subresource, each a JSON Patch of the changed fields only, guarded
// by tests of what it replaces: a condition is replaced in place after a test of what it was, a
// list after a test that it is still the list that was read. Where cluster-api's and Flux's
// helpers send merge patches, which replace whole lists, and lock on the resourceVersion, which
// any write by anyone invalidates, an update of a condition here does not even conflict with
// another controller writing a label, the spec, another condition or the rest of the status.
// When a guard fails, Patch reads the latest object, merges this reconcile's changes onto it
// (a three-way merge) and sends again, with a jittered backoff. See [Helper.Patch] for the
// requests, the errors and deletion.
//
// # What the helper guarantees
//
// Between the snapshot and Patch, another writer may have changed the object. For each shape of
// field, this is what Patch leaves on the server (theirs: the other writer's value; ours: this
// reconcile's). A field the reconcile did not change always keeps theirs.
//
//	field shape                            they changed it, we did not   both changed it
//	scalar (string, number, bool),         theirs                        ours
//	  status.observedGeneration
//	object: struct or map, granular or     key by key, recursively       key by key: ours where we
//	  atomic alike; labels, annotations                                  changed a key, theirs for
//	                                                                     every other key, including
//	                                                                     keys they added to a map we
//	                                                                     emptied or removed
//	list of any kind (listType map, set,   theirs                        ConflictError; the list
//	  atomic, or none)                                                   stays theirs
//	metadata.finalizers                    theirs                        a set: our additions and
//	                                                                     removals applied to theirs
//	metadata.ownerReferences               theirs                        a set by uid: our additions,
//	                                                                     changes and removals applied
//	                                                                     to theirs; ConflictError
//	                                                                     when that leaves two
//	                                                                     controllers
//	a condition of a type not owned        theirs                        ConflictError; theirs stays
//	a condition of a type in               theirs                        ours
//	  OwnedConditions
//
// "Both changed it" means both changed the same field, key, list or condition; where both made
// the same change there is nothing to merge. A condition (an element of status.conditions with a
// type) is one value whatever fields it carries besides metav1.Condition's (a Node's
// lastHeartbeatTime, a Pod's lastProbeTime, Cluster API's severity): changing any of them
// changes the condition, and every field of a condition this reconcile did not change is kept
// as its writer left it; only lastTransitionTime is the latest object's while the status stays.
// A [*ConflictError] writes nothing of the part that conflicts (metadata and spec, or status) and
// satisfies apierrors.IsConflict; the next reconcile, reading the latest object, decides again.
// A finalizer added to an object that was deleted since the read is a ConflictError too (the
// API server refuses new finalizers then), so the next reconcile runs the cleanup.
//
// The object's Go type may not show every field the server holds (a CRD upgraded before its
// controller's types). Such fields are never overwritten: when the server refuses a guard that
// the typed object says holds, the helper reads the object as JSON and merges onto that, so a
// change to a list with such a field is a ConflictError.
//
// So the headline holds literally: another writer's data is never dropped, except a value that
// this reconcile changed too (a scalar or a map key: the controller owns the fields it changes)
// and, in every case, only metadata the helper writes (labels, annotations, finalizers, owner
// references) changes; the API server owns the rest.
//
// What the helper does not do:
//
//   - It does not read the schema. An atomic map or struct (x-kubernetes-map-type: atomic, such
//     as a Service's selector) is merged key by key like any other object, so when both writers
//     change different keys of one the result has both changes, which neither wrote whole. Apply
//     such values with the [Applier], which server-side apply handles as the schema says.
//   - Lists are never merged element by element, not even those of type map or set: when both
//     change one, Patch reports the conflict instead of guessing.
//   - An empty list is a missing one, as a typed object shows it (omitempty): a Patch that
//     empties a list removes it, so a default the schema has for the list (a CRD's default
//     conditions, say) applies again. An empty object is written as one.
//   - Two writers changing the same scalar is "last writer wins" for the controller: a field a
//     controller changes is the controller's.
//   - A condition list is keyed by type as the snapshot shows it. A condition of a type already
//     in the list that another writer appends meanwhile, a second one of that type (which only
//     a CRD whose conditions list has no map list type allows), is not seen as a change: it is
//     kept beside the one this reconcile writes (or removes), and no ConflictError is returned
//     for it. No test of one element of a JSON Patch can tell that another element was added.
//     When Patch writes metadata or spec first (a kind with a status subresource), the answer to
//     that request shows the list as it is, and the change of it is a ConflictError, as for any
//     list both changed.
//     And a write that the API server refuses as invalid is reported as invalid even when such
//     an append happened meanwhile.
//
// The shapes the schemas of real kinds add, as the helper treats them: an int-or-string, a
// quantity or a timestamp is a scalar; a value the server defaults is the server's until the
// reconcile changes it; an x-kubernetes-preserve-unknown-fields value or an embedded resource is
// a granular object.
//
// These rows are checked by randomized tests against the API server, with an independent model
// of this table as the oracle, on hand-written kinds and on the schemas the API server serves for
// Kubernetes' own kinds and other projects' CRDs, the model's prediction made exact by a dry run.
//
// # A snapshot older than the controller's own last write
//
// Patch sends what changed relative to the snapshot. A snapshot read from a cache that lags
// behind the server cannot show what changed since, so a condition the server has but the
// snapshot lacks is not removed by a Patch that does not set it. Read the object a controller
// reconciles with controller-runtime's read-your-writes consistency on (client.CacheOptions) or
// from the API reader; see the [cache guide].
//
// Without read-your-writes (the default manager's client), the cache may not yet show what the
// controller itself wrote a moment ago: a reconcile woken by the watch event of its finalizer patch runs before the
// informer delivered the status patch that followed, sees no status and computes it again. A
// [History], given to the controller's [Writer] ([WriterOptions].History), records the object
// the server returned to each write; a Patch whose snapshot is older than that object merges
// onto it instead:
//
//	snapshot and History                   what Patch does
//	no entry for the snapshot's uid, or    as without a History
//	  the snapshot as new or newer (the
//	  entry is dropped), or a
//	  resourceVersion that is not an
//	  integer, or the entry expired
//	an entry newer than the snapshot, and  sends nothing; obj becomes the recorded object
//	  the changes merged onto it leave
//	  nothing to send
//	an entry newer than the snapshot, and  sends that request, guarded against the recorded
//	  the merge leaves a request           object; a failed guard reads the latest object and
//	                                       merges onto it as always (the table above)
//	an entry newer, and the merge onto it  ConflictError, as a Patch that read the recorded
//	  finds a conflict                     object would return
//
// Why this is safe: the recorded object was the server's state at a moment after the snapshot,
// so each row is what a Patch with a fresh read at that moment would have done. Relative to
// that moment the table above holds: a change another writer made after the recorded write is
// theirs, even where this reconcile changed the same scalar (the controller's own value was
// written first, theirs came later). The watch event of the controller's own write, or of any
// later write, brings a reconcile with a snapshot at least as new, which takes the first row.
// A predicate that filters the controller's own events (GenerationChangedPredicate and status
// writes) may mean that reconcile does not come; neither would it after a Patch with a fresh
// read at that moment, so the guarantee is that of a fresh read then, no weaker. The
// randomized test checks every row against the model, for the same and for other changes.
//
// # Kinds without a status subresource
//
// For a CRD without subresources.status, Patch sends the status with the rest of the object when
// the snapshot's managedFields show the status written that way, or when a status request is
// answered 404 for an object that exists; until then it writes as for a kind with the
// subresource, metadata and spec first. What it learns is kept in the Helper only: that the kind
// has no status subresource from the 404, and, when it sent the status with the object on the
// word of managedFields alone, from whether the server kept it (a status the server ignored there
// goes to the status subresource next). Fields the schema does not know are pruned from a status
// either way; they are not written and are no error, as for a kind with the subresource.
//
// # Ending a reconcile
//
// [Helper.Finish] is the deferred end of a reconcile, in the order that matters: requeue.Report
// records the reconcile's error (or success) in Reconciling, Stalled and observedGeneration; Patch
// writes, owning [WriterOptions].OwnedConditions and the conditions Report writes; and only after a
// successful write, Events for the transitions of Ready and Stalled (from [Helper.Previous], so
// that a cache behind the controller's own last write does not record one twice) and the
// conditions' metrics. Which cache-lag setup to use: with controller-runtime's read-your-writes
// consistency on the manager's client (the example operator's), set APIReader; with the default
// client, set APIReader and a [History].
//
// # Coalescing progress
//
// With [WriterOptions].ProgressInterval, a [Helper.Finish] that would write progress only waits
// instead, and asks for a requeue for when the interval since the object's last status write has
// passed (res.RequeueAfter, or sooner if res asks for it); the reconcile then writes whatever the
// progress is by that time. A rollout of many replicas thus costs a few status writes, not one
// per replica. A change is progress only when the reconcile returns no error and, between the
// snapshot and the object:
//
//   - nothing outside the status changed (metadata, spec);
//   - status.observedGeneration did not change;
//   - Ready, Reconciling and Stalled have the same status and reason (or are absent from both);
//   - [WriterOptions].WriteAtOnce, if set, does not say otherwise.
//
// Everything kstatus, `kubectl wait --for=condition=Ready` or a person needs at once is written
// at once; a dependent condition's message or a replica count may wait up to the interval. The
// Writer remembers one time per object whose status it wrote recently, and forgets it between one
// and two intervals after that write. A result with the deprecated Requeue and no RequeueAfter
// becomes a requeue after the wait.
//
// # Server-side apply
//
// An [Applier] applies desired objects, typed or unstructured, under one field manager:
// [Applier.Apply] for children a controller creates and owns, [Applier.ApplyStatus] for status
// fields and conditions written through the status subresource. [Applier.ApplyConfiguration]
// and [Applier.ApplyStatusConfiguration] take apply configurations (client-go's for built-in
// kinds, controller-gen's for custom resources), which declare only the fields they set where a
// typed object also declares its zero values. With [OwnedBy], one call sets the owner's mark on a
// child (an owner reference, or ownership's tracking labels across namespaces), checks the
// adoption policy against the live object it reads anyway, and applies; a child another owner
// controls is refused and nothing is sent:
//
//	_, err := r.Applier.Apply(ctx, configMap, patch.OwnedBy(cluster), patch.ForceConflicts(true))
//
// Before each apply the Applier reads the live object (from the manager's cache, usually) and
// skips the request when it can prove it would change nothing: when it applied the same desired
// object and the object has not changed since, or, after a restart, when every desired field
// already has its value, a value owned as a whole (an atomic map or list) exactly, and the field
// manager owns exactly those fields. Whatever it cannot prove it sends. Fields the server
// defaults are not compared, so server-side defaulting cannot make a controller apply in a hot
// loop (controller-runtime#2733, #3409), and a steady-state reconcile sends no write. "When an
// apply is skipped" below says exactly what the Applier proves.
//
// What the Applier keeps of another field manager's data is what server-side apply keeps, by the
// schema (another manager changed a part; this manager applies again):
//
//	field shape                      a part this manager does not   a part this manager applies
//	                                 apply
//	scalar                           theirs                         409 Conflict, or ours with
//	                                                                ForceConflicts
//	granular map, struct; labels,    theirs, key by key             as a scalar, key by key
//	  annotations
//	atomic map or struct; atomic     theirs                         the whole value: 409, or ours
//	  list; list without a list                                     whole with ForceConflicts
//	  type (in a CRD)                                               (their keys or elements go)
//	list of type map or set          theirs, element by element     as a scalar, element by element
//	metadata.finalizers              theirs (a set)                 ours are added, never theirs
//	                                                                removed
//	status.conditions (ApplyStatus   theirs, condition by           ours, condition by condition
//	  with OwnedConditions)            condition
//
// A field this manager applied before and no longer sets is removed unless another manager also
// owns it. That includes what a mutating admission plugin or webhook added as the manager applied
// (a Node's not-ready taint in a list of taints the manager owns as a whole, a Pod's default
// tolerations), and what one changed as the object was created only (a value the manager set,
// replaced or removed; a key added inside an atomic map): the manager owns it, so applying again
// removes it or sets it back, and the Applier never skips that apply. A condition's own fields (a lastHeartbeatTime, Cluster API's severity) are applied
// as set. The skip never changes these outcomes: a request is skipped only when a dry run of it
// would leave the object and every manager's field set as they are (apart from what a mutating
// admission plugin changes on updates only, which the object has never held), which a randomized
// test checks against the API server.
//
// ApplyStatus carries each condition's LastTransitionTime over from the live object while its
// status does not change (from its own last status apply while the reader lags behind it), so a
// controller can rebuild its conditions from scratch every reconcile. A kind whose conditions
// have no lastTransitionTime gets none: when a condition the object holds (or the Applier's last
// status apply left) has none, no time is added and times are carried over only where this
// manager applied them; when the API server refuses the field as undeclared, the Applier sends
// the request again without the times it added. With [OwnedConditions] each controller applies only its own
// conditions, so several controllers share status.conditions (a list of type map) without
// clobbering each other.
//
// # Applying an owned child
//
// [OwnedBy] makes one apply set a child's owner and check that it may: the Applier reads the live
// child anyway (for its no-op proof), checks it against the adoption policy and the no-stealing
// rule, and applies only if the child is still what the check saw. The condition matters because
// server-side apply lets a field manager drop an owner reference it applied before: two workers of
// one controller, each reconciling another owner with a cache that lags, would otherwise both take
// one child. The apply is conditional on the child's uid when the owner controls it through an
// owner reference (the API server allows one controller reference, so no one can take it
// silently); on the resourceVersion read for any other child; as a creation only for a child the
// reader does not hold (the API server refuses it, writing nothing, when an object of that name
// exists); and, when the Applier's own last apply made the child the owner's and the reader has
// not caught up, on the resourceVersion that apply left. A reader that holds the child without a
// uid (a hand-built one) makes it conditional on the resourceVersion it holds; one that holds
// neither cannot be checked.
//
// A lost race is a conflict, never an invalid spec and never an overwrite. When the child changed
// since it was checked (another writer, the controller's own other worker, another controller
// that set its reference, which the API server refuses as a second controller), an Applier with
// an [ApplierOptions.APIReader] reads the child through it and checks it again, so that the loser
// gets the [*ownership.AdoptionError] naming the winner, up to three applies in all, after which
// it returns the 409 (apierrors.IsConflict). Without an APIReader it returns the conflict at once:
// a quiet requeue, by which time the cache has caught up. A child the Applier applied before and
// its reader does not hold is read with the APIReader first, when there is one. Tests run these
// races against the API server, with two Appliers of one field manager as the rivals.
//
// # When an apply is skipped
//
// Every apply of an [Applier] ([Applier.Apply], [Applier.ApplyStatus] and their configuration
// forms) is skipped, with the object set to the live one, in two cases. First, when the Applier's
// last apply for this object, field manager and subresource had the same request body and
// ForceConflicts, and the live object has the resourceVersion that apply left, or an older one (a
// cache that has not caught up with the apply yet, and will deliver any later change in a new
// event), and the server's answer to that apply proved it a fixed point: it wrote nothing; or it
// holds what the object held before, content and every manager's fields; or it holds every value
// the manager owns as a whole exactly as the apply set it, the manager's elements of each list of
// type map or set in the apply's order, one of each, and no field, element or key more that the
// manager owns. A mutating admission plugin, webhook or policy may have changed the object as it
// was applied, on a creation only, say, and the next apply would undo that; without the proof it is
// sent. A value the server stores in another form (a quantity spelt canonically, a zero a built-in
// kind's stored form omits, a default inside an atomic value or an empty struct) looks the same, so
// it costs that one more apply after each change, which writes nothing and proves it. An empty
// map or list the object lacks is such a value where the kind's stored form omits it (empty
// labels, a nodeSelector, finalizers: [], a container's ports: []), but not where the server
// pruned it because the apply removed the manager's keys or elements below it (a Node's
// status.features, a custom resource's list of type map emptied, which a schema's minItems may
// refuse), which applying again sets: the Applier reads which from a built-in kind's Go types,
// and from ObjectMeta's for every kind's metadata. Nor is it where
// another manager owns that place too (a ConfigMap's binaryData another writer created): applying
// the empty map again takes the field from them, a conflict without ForceConflicts. Second, so
// that a restarted controller does not re-apply everything, when the live object's managedFields
// has exactly one entry of the manager for the apply operation (on the subresource), for the
// desired object's apiVersion, and, walking the desired object (obj), the live object and that
// entry's fields together:
//
//   - at every map or struct, the manager owns exactly the fields obj sets there and the live
//     object has each of them; it may have more (other managers' fields, defaults), which the
//     apply keeps;
//   - every list has as many elements as in obj, in the same order, and the manager owns
//     exactly obj's elements, each by its key, value or index;
//   - every value the manager owns as a whole is live exactly as obj sets it: a scalar, an
//     atomic map, struct or list (a Service's selector, a pod's nodeSelector and tolerations,
//     a CRD list without x-kubernetes-list-type), an empty map or list. The apply replaces such
//     a value, so a key or element obj no longer sets inside it is removed, and sent;
//   - a non-empty value owned as a whole is atomic: for a built-in kind, the fields the apply
//     declares, computed from client-go's copy of its schema, are exactly the manager's; for
//     other kinds, whose schema the Applier does not know, it is a list no other manager owns
//     elements of. Metadata is the exception: its schema, ObjectMeta's, is every kind's, so an
//     owner reference of a custom resource is proved as a built-in kind's. Elsewhere, a
//     non-empty map or struct owned as a whole in a custom resource is never proved: it also is
//     what a granular one looks like that the manager applied empty and the server filled with
//     defaults since, which the apply would take ownership of.
//
// Fields obj does not set are not compared, so server-side defaulting cannot cause a hot loop. The
// proof is conservative: what it cannot decide is sent, and then changes nothing. That costs one
// request on each change of the live object (and after a restart) when obj leaves out a key of an
// associative list the server fills in (set the protocol of a container or Service port: TCP is the
// default); sets a value the server normalises (cpu "0.1", read back as "100m") or drops (an
// explicit zero of a built-in kind's omitempty field in an unstructured object); sets
// a value owned as a whole into which the server writes a default (an env fieldRef without its
// apiVersion); shares a list another manager added elements to; or, in a custom resource, sets an
// atomic map or struct (a metav1.LabelSelector). A reader that strips managedFields leaves only the
// first case.
//
// # Which one to use
//
//	                                          Helper                        Applier
//	the object the controller reconciles      yes                           no: applying it would
//	(finalizers, status, observedGeneration)                                take over fields users set
//	children the controller creates and owns  possible (Get, change, Patch) yes: Apply with OwnedBy
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
//	a cache behind its own last write         none sent again, with a       none sent again
//	                                          Writer's History              (its apply record)
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
