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

package sharding

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Predicate returns the predicate for the watch of the ring's main kind: it passes every event
// preds pass (all of them; none given passes everything), and also, whatever preds say,
//
//   - a create or an update whose object carries the drain label: the shard must see the
//     sharder's request to move the object and acknowledge it, and the usual predicates
//     (predicate.GenerationChangedPredicate, which ignores label changes) drop it;
//   - an update that changes the shard label: the object was assigned to this shard or taken
//     off it;
//   - an update that removes the drain label: the sharder withdrew the drain, possibly in the
//     acknowledgement's own write (its webhook assigning the object to this shard again), and
//     the object is this shard's to reconcile again.
//
// Use it in place of the main kind's predicates:
//
//	For(&appsv1alpha1.Cluster{}, builder.WithPredicates(shard.Predicate(predicate.GenerationChangedPredicate{})))
//
// The watches of children need no change: their events map to the owner, which
// [Shard.Reconciler] checks. Do not filter the controller's events with the builder's
// WithEventFilter and a predicate that drops label changes: that filter applies before this
// one, and the drain would never reach the reconciler.
func (s Shard) Predicate(preds ...predicate.Predicate) predicate.Predicate {
	return predicate.Or[client.Object](handover{s}, predicate.And(preds...))
}

// handover passes the events of a handover: see [Shard.Predicate].
type handover struct{ shard Shard }

var _ predicate.Predicate = handover{}

// Create implements predicate.Predicate.
func (h handover) Create(e event.CreateEvent) bool { return h.shard.Draining(e.Object) }

// Update implements predicate.Predicate.
func (h handover) Update(e event.UpdateEvent) bool {
	if h.shard.Draining(e.ObjectNew) {
		return true
	}
	if e.ObjectOld == nil || e.ObjectNew == nil {
		return false
	}
	return h.shard.Draining(e.ObjectOld) ||
		e.ObjectOld.GetLabels()[h.shard.ShardLabel()] != e.ObjectNew.GetLabels()[h.shard.ShardLabel()]
}

// Delete implements predicate.Predicate.
func (handover) Delete(event.DeleteEvent) bool { return false }

// Generic implements predicate.Predicate.
func (handover) Generic(event.GenericEvent) bool { return false }
