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

// Package external keeps resources outside the cluster — a cloud database, a DNS record, an IAM
// role, a certificate — whose lifecycle follows a Kubernetes object: created once, changed to
// match the object's spec, polled while the provider works, and deleted before the object goes.
// The garbage collector cannot reach them, a crash at the wrong moment can make two of them, and
// a cache that lags can make the controller forget the one it made: this package closes those
// windows, as blocks used inside an ordinary Reconcile, not a base reconciler.
//
// # The blocks
//
// The controller implements a [Provider] against the provider's API: Observe by a stable name,
// Create, Update, Delete, and, when those return operations to poll, [Operations]. A [Resource]
// drives it:
//
//   - [Resource.Ensure], called on every reconcile of a live object, observes first, then
//     creates, updates, waits on the pending operation or reports the resource available, and
//     returns a ctrl.Result and an error for the requeue package (polling with jitter while the
//     provider works, terminal errors as Stalled) and sets a condition of the caller's choosing;
//   - [Resource.Step] is the finalizer step that deletes the resource, for a
//     finalizer.Lifecycle; it is marked External, so Lifecycle.Retain keeps the resource and
//     nothing else;
//   - [Secrets.GenerateOnce] stores a value generated once, such as a password, in a Secret the
//     object owns, before it is used.
//
// A Resource keeps what it must remember in an annotation of the object (see
// [AnnotationPrefix]): the external name, whether a create was sent or confirmed, the create
// attempt, and the operation to poll. It writes it with guarded JSON Patch requests of its own,
// separate from the caller's patch helper, because a marker must be stored before the call it
// announces.
//
// # Crash windows
//
// A create is the dangerous call: sent twice, it makes two resources, and the second one leaks.
// The windows, and what closes each:
//
//   - The process stops after sending Create and before storing its answer, or the answer is
//     lost (a timeout, a reset connection). Before Create, Ensure stores "a create is under way"
//     with its key; after a restart it observes first: a resource Observe finds is adopted, and
//     one it does not find is created again only with [Resource.IdempotentCreate], with the same
//     key. Otherwise the object is Stalled ([ReasonCreateOutcomeUnknown]) for a person to decide.
//   - The cache lags and shows a copy of the object without the marker. The marker's write is
//     guarded by a test of the value the copy holds, so the API server refuses it; Ensure reads
//     the object with the API reader and decides again. A stale copy never creates.
//   - The object is deleted while a create is decided. The marker's write also tests that the
//     object has no deletionTimestamp, so no create is decided after the deletion began; the
//     deletion step waits for a create operation that is still running before it deletes.
//   - The controller restarts and its naming changes. The external name is derived from the
//     object (its uid by default, see [Resource.ExternalName]) and stored with the first
//     create: a restart, or a new version of the controller, finds what was created.
//   - A value generated for the create (a password) is lost in a crash between generating and
//     storing it. [Secrets.GenerateOnce] stores it before returning it, and returns the stored
//     one when another attempt was first.
//   - A replica that lost its leader election lease without knowing it calls the provider, which
//     the API server's fence never sees. [Resource.Fence] (a *fencing.Lock) is checked before
//     Create, Update and Delete; the window that remains is the fence's, up to its margin.
//
// What no client can close: a create request still on its way from a replica that stopped
// during the call, which the provider receives after the deletion step observed nothing and the
// object went away. The fence narrows it to its margin; an idempotency key does not help,
// since there is nothing left to send it again.
//
// # Idempotency keys and unique names
//
// Two properties of a provider make a repeated create harmless, and IdempotentCreate says that
// one holds:
//
//   - names are unique: a second create of the same name is refused (a DNS record of a name, a
//     bucket, most resources the caller names). Create returns no error for that answer, and
//     Observe then reports the resource;
//   - the provider takes an idempotency key (a client token, a request id) and answers a
//     repeated request with the first answer. The key Create gets is the same for every call of
//     one attempt and new for each attempt after one known to have failed. Keys are kept for a
//     limited time (often a day): an object that waits longer between two sends of one create
//     can get a second resource.
//
// With neither, a create whose outcome is unknown is never sent again: an honest stop is better
// than a leak, and the annotation says what to remove once a person has checked.
//
// # Polling and drift
//
// Providers send no events, so Ensure polls: every PollInterval (with jitter) while an operation
// runs or the resource is not ready, and every DriftInterval once it is available, to find
// changes made behind the controller's back. A resource changed behind its back is updated; one
// deleted behind its back is created again, with a new key. Observe must see the provider's
// writes (read-after-write): one that lags makes a resource look deleted.
//
// # When to use it, and when not
//
// Use it for a resource outside the cluster that one object owns. For objects inside the
// cluster, use owner references and the ownership package: the garbage collector cleans them up.
// For a resource shared by several objects, or one the object only reads, a Resource is the
// wrong model: it creates and deletes.
//
// The [external resources guide] covers the crash windows, idempotency keys, polling and drift
// in more detail.
//
// [external resources guide]: https://github.com/tenon-dev/tenon/blob/main/docs/external.md
package external
