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

package patch

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// KeepManagedFieldsOf returns a cache transform that keeps, of each object's managedFields, only
// the entries of the field managers named, and drops every other entry before the object is
// stored in the cache. Set it for the kinds an [Applier] applies, with the Applier's field
// manager:
//
//	cache.ByObject{Transform: patch.KeepManagedFieldsOf("cluster-controller")}
//
// The Applier proves that an apply would change nothing from its own entries alone, so it skips
// as many applies as with every entry cached. The entries of other managers (the controllers
// that write a child's status, kubectl, admission plugins) often weigh more than the child's
// own fields; controller-runtime's cache.TransformStripManagedFields drops them too, but also
// the Applier's, whose proofs then fall back to its memory of its own applies, which a restart
// empties.
//
// Do not set it for kinds a [Helper] patches: the Helper reads the managedFields it is given as
// every manager's, to tell whether the status of a kind is written through its status
// subresource and which fields other writers set, and a partial list misleads it (into a
// request the API server refuses and a retry, or worse). Cache those with every entry, or with
// none (cache.TransformStripManagedFields: the Helper then guards with the resourceVersion where
// it must). An object with nothing to drop is returned as it is, unchanged.
func KeepManagedFieldsOf(managers ...string) toolscache.TransformFunc {
	managers = slices.Clone(managers)
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil // not an object (a tombstone, say): nothing to drop
		}
		entries := obj.GetManagedFields()
		keep := func(e metav1.ManagedFieldsEntry) bool { return slices.Contains(managers, e.Manager) }
		if !slices.ContainsFunc(entries, func(e metav1.ManagedFieldsEntry) bool { return !keep(e) }) {
			// Nothing to drop: never write to an object that may be shared already.
			return in, nil
		}
		kept := make([]metav1.ManagedFieldsEntry, 0, len(entries))
		for _, e := range entries {
			if keep(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		obj.SetManagedFields(kept)
		return in, nil
	}
}
