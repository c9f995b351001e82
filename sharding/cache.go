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
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SelectCache restricts the cache to the objects assigned to this shard, for each kind of
// objs: the ring's main kind and the kinds of the children its objects control (the
// ControllerRing's resources and their controlledResources). It adds the shard label's
// requirement to opts.ByObject's label selector for each kind, and keeps what the entry selects
// already (namespaces, fields, other labels). Pass the manager's cache options before building
// the manager:
//
//	err := shard.SelectCache(&opts.Cache, &appsv1alpha1.Cluster{}, &corev1.ConfigMap{}, &appsv1.StatefulSet{})
//
// The sharder assigns a child to its controller's shard (the owner reference with
// controller=true), so children with such a reference in the owner's namespace follow their
// owner. Never pass the kind of children the owner tracks instead (ownership.TrackingLabels:
// another namespace, cluster-scoped, no controller reference): the sharder assigns them to no
// shard, so a selected cache never holds them, and a count of them from it is 0 while they
// exist. Cache those kinds unselected, and when a kind is both — children controlled in the
// owner's namespace and tracked elsewhere — select it and pass ownership.APIReader to
// ownership.DeleteTracked, which then confirms from the API server that none is left.
//
// With a selected cache, a write that takes an object off this shard (the drain's
// acknowledgement, the sharder's move) reaches the controllers as a delete: the object left
// the cache. The objects of other shards are never read, watched or held in memory.
//
// SelectCache returns an error, and changes nothing, when opts is nil, objs is empty or holds a
// nil, or an entry of opts.ByObject already selects on the shard label.
func (s Shard) SelectCache(opts *cache.Options, objs ...client.Object) error {
	switch {
	case opts == nil:
		return errors.New("failed to select the shard's objects in the cache: the cache.Options is nil")
	case len(objs) == 0:
		return errors.New("failed to select the shard's objects in the cache: no kinds given")
	}
	requirement := s.Selector()
	updates := make(map[client.Object]cache.ByObject, len(objs))
	for i, obj := range objs {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			return fmt.Errorf("failed to select the shard's objects in the cache: kind %d of %d is nil", i+1, len(objs))
		}
		key, entry := obj, cache.ByObject{}
		for existing, e := range opts.ByObject {
			if sameKind(existing, obj) {
				key, entry = existing, e
				break
			}
		}
		if entry.Label != nil {
			if reqs, _ := entry.Label.Requirements(); selectsOn(reqs, s.ShardLabel()) {
				return fmt.Errorf("failed to select the shard's objects in the cache: the cache options of %T select on %s already", obj, s.ShardLabel())
			}
		}
		entry.Label = and(entry.Label, requirement)
		updates[key] = entry
	}
	if opts.ByObject == nil {
		opts.ByObject = make(map[client.Object]cache.ByObject, len(updates))
	}
	for key, entry := range updates {
		opts.ByObject[key] = entry
	}
	return nil
}

// sameKind reports whether a and b are objects of one kind: the same Go type, and for an
// unstructured or metadata-only object, whose Go type serves every kind, the same group,
// version and kind.
func sameKind(a, b client.Object) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch a.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return a.GetObjectKind().GroupVersionKind() == b.GetObjectKind().GroupVersionKind()
	}
	return true
}

// selectsOn reports whether reqs has a requirement on key.
func selectsOn(reqs labels.Requirements, key string) bool {
	for _, r := range reqs {
		if r.Key() == key {
			return true
		}
	}
	return false
}

// and returns a selector that matches what both sel (nil: everything) and extra match.
func and(sel, extra labels.Selector) labels.Selector {
	if sel == nil || sel.Empty() {
		return extra
	}
	reqs, _ := extra.Requirements()
	return sel.Add(reqs...)
}
