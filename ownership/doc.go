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

// Package ownership records which object owns which: with a controller owner reference where
// Kubernetes allows one, and with tracking labels and annotations where it does not, so that a
// controller can create, watch, prune and clean up children in any namespace and scope the
// same way.
//
// # What the garbage collector does
//
// An owner reference in a child's metadata.ownerReferences names its owner by kind, name and
// UID. Once none of a child's owners exists (a child may have several references; one owner
// left keeps it), kube-controller-manager's garbage collector deletes the child: in the
// background after the owner is gone (the default), before the owner with foreground deletion,
// or not at all with orphan deletion, which removes the references instead. The UID matters: an owner deleted and recreated under the same name does not keep
// its predecessor's children. controller-runtime's builder.Owns uses the same references to
// reconcile the owner when a child changes.
//
// # What it cannot do
//
// An owner reference has no namespace field. The collector looks for a namespaced child's
// owner in the child's own namespace, and for a cluster-scoped child's owner among
// cluster-scoped objects. A reference to a namespaced owner in another namespace therefore
// names an object that does not exist: the collector reports OwnerRefInvalidNamespace and
// deletes the child as an orphan. A cluster-scoped child cannot reference a namespaced owner
// either: the reference can never be resolved, and the child is never collected. This is by
// design: a namespace is a unit of isolation and of deletion, and an object in one namespace
// must not be kept alive, or deleted, by an object in another. controller-runtime's
// SetControllerReference refuses both cases.
//
// The collector also knows nothing of external resources, of labels, or of envtest, which runs
// no collector at all (tenon's testenv can start one).
//
// # Setting the owner
//
// [Set] makes an owner the controlling owner of a child in memory, before the caller creates,
// updates or applies the child. It picks the mechanism and reports it:
//
//   - [ControllerReference] when the owner is cluster-scoped, or owner and child share a
//     namespace: the collector and builder.Owns handle the child.
//   - [TrackingLabels] otherwise: the label [LabelOwnerUID] holds the owner's UID and
//     annotations hold its kind, namespace and name. Label values are limited to 63
//     characters, so names live in annotations; the UID label is what lists select on.
//
// A child has one controlling owner, whichever the mechanism: Set refuses, with an
// [*AdoptionError] that names the current owner, to take a child that another owner controls.
// [RequireMechanism] insists on one mechanism; asking for an owner reference where Kubernetes
// does not allow one is a [*ScopeError].
//
// # Adoption
//
// A child that already exists (it has a UID) and that the owner does not control yet is
// adopted according to an [AdoptionPolicy]: [AdoptIfUnowned] (the default) takes it only if it
// has no owner at all, [AdoptNever] takes nothing it did not create, and [AdoptAlways] also
// takes children with other owners' non-controller references and children left behind by a
// previous incarnation of the owner. No policy takes a child that another owner controls. A
// refusal is an [*AdoptionError], whose Owner is nil when the policy, not another owner, refused.
// With server-side apply, the child passed to Set is built from scratch: pass the live object
// with [Existing] so that the policy sees it. tenon's patch.OwnedBy does that, with the live
// object its Applier reads anyway, and applies the child in the same call.
//
// # Queries
//
// [Owns] reports whether an owner controls a child by either mechanism, matching UIDs, and
// [OwnerOf] returns a child's controlling owner. [Release] removes an owner's marks.
//
// # Watching children
//
// [EnqueueOwner] is an event handler for builder.Watches that maps a child to its owner
// through either mechanism, so that an edit to a child in another namespace, or to a
// cluster-scoped child, reconciles the owner. builder.Owns is enough for kinds whose children
// always carry owner references.
//
// # Listing and pruning
//
// [ListChildren] lists an owner's children of one kind in every namespace, through the field
// index [IndexField] ([Index] computes it) when the reader is a cache with the index
// registered, and with a label selector plus an in-memory filter otherwise. [Prune] deletes the
// children that are not in a desired set and returns them; every deletion carries a UID
// precondition, so an object recreated under the same name is not deleted by mistake.
// Tracked children may be in any namespace, so the controller needs permission to list, watch
// and delete their kinds in every namespace (a ClusterRole).
//
// # Cleaning up
//
// [DeleteTracked] deletes the tracked children, which the collector cannot reach, and counts
// those that remain. Call it from the owner's finalizer and keep the finalizer until it
// returns 0; tenon's finalizer package has it as a step, finalizer.TrackedChildren.
//
// # When not to use it
//
// A controller whose children always live in the owner's namespace, and that never meets
// objects it did not create, needs no more than controllerutil.SetControllerReference and
// builder.Owns. For an object that depends on several owners, none of them its controller,
// use controllerutil.SetOwnerReference. For children whose kinds are only known at run time,
// as in a GitOps applier, keep an inventory of what was applied (Flux's ssa, cli-utils)
// rather than listing known kinds. External resources, such as a cloud DNS record, are not
// Kubernetes objects: clean them up in a finalizer of their own.
//
// The [ownership guide] shows what the garbage collector does and does not do, with the example
// operator's child in another namespace.
//
// [ownership guide]: https://github.com/tenon-dev/tenon/blob/main/docs/ownership.md
package ownership
