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
	"maps"
	"reflect"
	"slices"

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
// owner's namespace and tracked elsewhere — select it. Either way pass ownership.APIReader to
// ownership.DeleteTracked, which then confirms from the API server that none is left; for an
// owner assigned to a shard it returns an error without it.
//
// With a selected cache, a write that takes an object off this shard (the drain's
// acknowledgement, the sharder's move) reaches the controllers as a delete: the object left
// the cache. The objects of other shards are never read, watched or held in memory.
//
// Every label selector controller-runtime would apply to a kind is kept and gains the shard's
// requirement: the kind's own (ByObject.Label), its namespaces' (ByObject.Namespaces), and
// cache.Options.DefaultLabelSelector and DefaultNamespaces' selectors where they would apply.
//
// When DefaultNamespaces gives a namespace a label selector, a kind without Namespaces of its
// own gets DefaultNamespaces as its own, as controller-runtime would give it, each with the
// shard's requirement: so such a kind must be namespaced (controller-runtime refuses
// Namespaces for a cluster-scoped kind).
//
// SelectCache returns an error, and changes nothing, when opts is nil, objs is empty or holds a
// nil, or a selector that applies already selects on the shard label.
func (s Shard) SelectCache(opts *cache.Options, objs ...client.Object) error {
	switch {
	case opts == nil:
		return errors.New("failed to select the shard's objects in the cache: the cache.Options is nil")
	case len(objs) == 0:
		return errors.New("failed to select the shard's objects in the cache: no kinds given")
	}
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
		selected, err := s.selectEntry(opts, entry)
		if err != nil {
			return fmt.Errorf("failed to select the shard's objects in the cache: the cache options of %T: %w", obj, err)
		}
		updates[key] = selected
	}
	if opts.ByObject == nil {
		opts.ByObject = make(map[client.Object]cache.ByObject, len(updates))
	}
	for key, entry := range updates {
		opts.ByObject[key] = entry
	}
	return nil
}

// selectEntry returns entry, the cache options of one kind, with the shard label's requirement
// added to every label selector controller-runtime would apply to the kind. controller-runtime
// takes, for each namespace, the first of: the entry's namespace's selector, the entry's
// selector, cache.Options.DefaultNamespaces' namespace's selector, DefaultLabelSelector; and
// an entry without Namespaces takes DefaultNamespaces as its own. So that what the operator
// selected is kept, the selector each level would have had is made explicit, and the shard's
// requirement added to it.
func (s Shard) selectEntry(opts *cache.Options, entry cache.ByObject) (cache.ByObject, error) {
	requirement := s.Selector()
	for _, sel := range selectorsOf(opts, entry) {
		if reqs, _ := sel.Requirements(); selectsOn(reqs, s.ShardLabel()) {
			return entry, fmt.Errorf("a label selector selects on %s already", s.ShardLabel())
		}
	}
	if entry.Namespaces == nil && slices.ContainsFunc(slices.Collect(maps.Values(opts.DefaultNamespaces)), func(cfg cache.Config) bool {
		return cfg.LabelSelector != nil
	}) {
		// controller-runtime gives such a kind DefaultNamespaces as its own namespaces, whose
		// selectors win over the kind's: made explicit, they gain the shard's requirement below.
		entry.Namespaces = maps.Clone(opts.DefaultNamespaces)
	}
	if entry.Namespaces != nil {
		namespaces := make(map[string]cache.Config, len(entry.Namespaces))
		for ns, cfg := range entry.Namespaces {
			effective := firstSelector(cfg.LabelSelector, entry.Label, opts.DefaultNamespaces[ns].LabelSelector, opts.DefaultLabelSelector)
			cfg.LabelSelector = and(effective, requirement)
			namespaces[ns] = cfg
		}
		entry.Namespaces = namespaces
	}
	entry.Label = and(firstSelector(entry.Label, opts.DefaultLabelSelector), requirement)
	return entry, nil
}

// selectorsOf returns the label selectors that may apply to the kind of entry.
func selectorsOf(opts *cache.Options, entry cache.ByObject) []labels.Selector {
	sels := []labels.Selector{entry.Label, opts.DefaultLabelSelector}
	for _, cfg := range entry.Namespaces {
		sels = append(sels, cfg.LabelSelector)
	}
	for _, cfg := range opts.DefaultNamespaces {
		sels = append(sels, cfg.LabelSelector)
	}
	return slices.DeleteFunc(sels, func(sel labels.Selector) bool { return sel == nil })
}

// firstSelector returns the first selector that is not nil, or nil.
func firstSelector(sels ...labels.Selector) labels.Selector {
	for _, sel := range sels {
		if sel != nil {
			return sel
		}
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
