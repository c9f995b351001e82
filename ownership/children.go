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

package ownership

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// IndexField is the name of the field index that [Index] computes: the UIDs of an object's
// controlling owners. Register it on the manager's cache for each kind of child, before the
// manager starts:
//
//	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, ownership.IndexField, ownership.Index); err != nil {
//		return err
//	}
//
// then list with [UseIndex]. The fake client takes it as fake.NewClientBuilder().WithIndex(...).
const IndexField = "ownership.tenon.dev/controller-uid"

// Index returns the values of [IndexField] for obj: the UID of its controller owner reference
// and the UID in its tracking label, each at most once. It is a client.IndexerFunc.
func Index(obj client.Object) []string {
	if isNil(obj) {
		return nil
	}
	var out []string
	for _, o := range owners(obj) {
		if uid := string(o.UID); uid != "" && !slices.Contains(out, uid) {
			out = append(out, uid)
		}
	}
	return out
}

// ListChildren fills list with the objects of list's kind that owner controls (see [Owns]), in
// every namespace, sorted by namespace and name. list is an empty list of the children's kind,
// such as &corev1.ConfigMapList{}; unstructured lists need their apiVersion and kind set.
//
// Without [UseIndex] it sends two list requests: one with a label selector for tracked
// children, one for the owner's namespace (every namespace, for a cluster-scoped owner) whose
// items are filtered in memory for owner references. Through a cache both are cheap; against
// the API server the second reads every object of the kind in the namespace. With UseIndex it
// sends one request on the [IndexField] index. Either way, only children whose UID marks match
// owner's are returned: children of a previous incarnation of the owner are not.
//
// owner must have a UID. list is changed only on success.
func ListChildren(ctx context.Context, c client.Reader, owner client.Object, list client.ObjectList, opts ...ChildrenOption) error {
	o := newChildrenOptions(opts)
	items, err := listChildren(ctx, c, owner, list, &o, false)
	if err != nil {
		return err
	}
	return setItems(list, items)
}

// childQueries returns the list queries that find owner's children, or only those it tracks:
// through the index of controllers when it is registered, otherwise by the tracking label and,
// for children it controls, in its namespace.
func childQueries(owner client.Object, o *childrenOptions, trackedOnly bool) [][]client.ListOption {
	uid := string(owner.GetUID())
	var narrow []client.ListOption
	if len(o.matchingLabels) > 0 {
		narrow = append(narrow, client.MatchingLabels(o.matchingLabels))
	}
	if o.useIndex {
		return [][]client.ListOption{append([]client.ListOption{client.MatchingFields{IndexField: uid}}, narrow...)}
	}
	queries := [][]client.ListOption{{client.MatchingLabels(withLabels(o.matchingLabels, LabelOwnerUID, uid))}}
	if !trackedOnly {
		queries = append(queries, append([]client.ListOption{client.InNamespace(owner.GetNamespace())}, narrow...))
	}
	return queries
}

// listOnce lists the objects of list's kind that query q finds, into a copy of list.
func listOnce(ctx context.Context, c client.Reader, list client.ObjectList, q []client.ListOption) ([]client.Object, error) {
	found, ok := list.DeepCopyObject().(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%T does not copy to a list", list)
	}
	if err := meta.SetList(found, nil); err != nil {
		return nil, err
	}
	if err := c.List(ctx, found, q...); err != nil {
		return nil, err
	}
	var out []client.Object
	err := meta.EachListItem(found, func(item runtime.Object) error {
		obj, ok := item.(client.Object)
		if !ok {
			return fmt.Errorf("%T is not a client.Object", item)
		}
		out = append(out, obj)
		return nil
	})
	return out, err
}

// listChildren lists the objects of list's kind that owner controls, or only those it tracks.
func listChildren(ctx context.Context, c client.Reader, owner client.Object, list client.ObjectList, o *childrenOptions, trackedOnly bool) ([]client.Object, error) {
	if isNil(owner) || isNil(list) {
		return nil, errors.New("failed to list the children: owner and list must not be nil")
	}
	uid := owner.GetUID()
	if uid == "" {
		return nil, fmt.Errorf("failed to list the children of %s: it has no UID; use the owner as read from the API server", describe(owner, schemeOf(c)))
	}
	name := describe(owner, schemeOf(c)).String()
	match := controls
	if trackedOnly {
		match = tracks
	}
	seen := make(map[client.ObjectKey]bool)
	var items []client.Object
	for _, q := range childQueries(owner, o, trackedOnly) {
		found, err := listOnce(ctx, c, list, q)
		if err != nil {
			return nil, fmt.Errorf("failed to list the children of %s: %w", name, err)
		}
		for _, obj := range found {
			if key := client.ObjectKeyFromObject(obj); match(uid, obj) && !seen[key] {
				seen[key] = true
				items = append(items, obj)
			}
		}
	}
	slices.SortFunc(items, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return items, nil
}

// schemeOf returns the scheme of c, when c is a client, for messages.
func schemeOf(c client.Reader) *runtime.Scheme {
	if s, ok := c.(interface{ Scheme() *runtime.Scheme }); ok {
		return s.Scheme()
	}
	return nil
}

// tracks reports whether child's tracking label holds uid.
func tracks(uid types.UID, child client.Object) bool {
	t, ok := trackerOf(child)
	return ok && t.UID == uid
}

// Prune deletes the children of list's kind that owner controls (see [ListChildren]) and
// whose keys are not in keep, and returns those it deleted, sorted by namespace and name. keep
// names the desired children (with an empty namespace for cluster-scoped kinds). On return,
// list holds the children that are left: the desired ones, and those whose deletion failed.
//
//   - Only children that owner controls, by UID, are candidates: unowned objects, other
//     owners' children and a previous incarnation's children are never deleted.
//   - Each deletion carries a UID precondition, so an object deleted and recreated with the
//     same name since it was listed (perhaps from a stale cache) is not deleted by mistake.
//     Such objects, and those already gone, are skipped without error.
//   - A child already being deleted is not deleted again, and not returned: a steady-state
//     Prune sends no write.
//   - A failed deletion does not stop the others; the errors are joined.
//
// Deletions use background propagation unless [Propagation] says otherwise.
func Prune(ctx context.Context, c client.Client, owner client.Object, list client.ObjectList, keep []client.ObjectKey, opts ...ChildrenOption) (deleted []client.Object, err error) {
	o := newChildrenOptions(opts)
	children, err := listChildren(ctx, c, owner, list, &o, false)
	if err != nil {
		return nil, fmt.Errorf("failed to prune: %w", err)
	}
	keepSet := make(map[client.ObjectKey]bool, len(keep))
	for _, k := range keep {
		keepSet[k] = true
	}
	var kept []client.Object
	var errs []error
	for _, child := range children {
		if keepSet[client.ObjectKeyFromObject(child)] {
			kept = append(kept, child)
			continue
		}
		if child.GetDeletionTimestamp() != nil {
			continue
		}
		gone, err := deleteChild(ctx, c, child, &o)
		switch {
		case err != nil:
			kept = append(kept, child)
			errs = append(errs, err)
		case !gone:
			deleted = append(deleted, child)
			log.FromContext(ctx).V(1).Info("Pruned a child", "child", describe(child, c.Scheme()).String())
		}
	}
	if err := setItems(list, kept); err != nil {
		errs = append(errs, fmt.Errorf("failed to prune: %w", err))
	}
	return deleted, errors.Join(errs...)
}

// deleteChild deletes child if it is still the object that was listed, and reports whether it
// was gone already (not found, or replaced by another object of the same name).
func deleteChild(ctx context.Context, c client.Client, child client.Object, o *childrenOptions) (gone bool, err error) {
	opts := []client.DeleteOption{client.PropagationPolicy(o.propagation)}
	if uid := child.GetUID(); uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err = c.Delete(ctx, child, opts...)
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsConflict(err):
		// A failed UID precondition means the name now belongs to another object, and the child
		// is gone. But a 409 can have other causes; only a fresh read tells: counting a child
		// that still exists as gone would let a finalizer go and leak it.
		return replaced(ctx, c, child, err)
	default:
		return false, fmt.Errorf("failed to delete %s: %w", describe(child, c.Scheme()), err)
	}
}

// replaced reads child again after its deletion conflicted and reports whether it is gone or
// replaced by another object of the same name. When it cannot tell, it returns deleteErr.
func replaced(ctx context.Context, c client.Client, child client.Object, deleteErr error) (gone bool, err error) {
	live, ok := child.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("failed to delete %s: %w", describe(child, c.Scheme()), deleteErr)
	}
	switch getErr := c.Get(ctx, client.ObjectKeyFromObject(child), live); {
	case apierrors.IsNotFound(getErr):
		return true, nil
	case getErr != nil:
		return false, fmt.Errorf("failed to delete %s: %w", describe(child, c.Scheme()), deleteErr)
	case child.GetUID() != "" && live.GetUID() != child.GetUID():
		return true, nil
	}
	return false, fmt.Errorf("failed to delete %s: %w", describe(child, c.Scheme()), deleteErr)
}

// withLabels returns base plus key=value, without modifying base.
func withLabels(base map[string]string, key, value string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = make(map[string]string, 1)
	}
	out[key] = value
	return out
}

// setItems replaces list's items with items.
func setItems(list client.ObjectList, items []client.Object) error {
	objs := make([]runtime.Object, len(items))
	for i := range items {
		objs[i] = items[i]
	}
	if err := meta.SetList(list, objs); err != nil {
		return fmt.Errorf("failed to fill %T: %w", list, err)
	}
	return nil
}
