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

package ownership_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

// family is an owner with children of every kind, and objects that are not its children.
type family struct {
	owner    *testtypes.Widget
	objects  []client.Object
	children []string // namespace/name of the owner's ConfigMaps, sorted
	tracked  []string // namespace/name of the owner's tracked ConfigMaps and Fixtures
}

func newFamily(t *testing.T) family {
	owner := widget("apps", "w", "uid-w")
	previous := widget("apps", "w", "uid-w-old")
	rival := widget("apps", "rival", "uid-rival")
	cm := func(namespace, name string, by client.Object, labels map[string]string) client.Object {
		c := configMap(namespace, name, types.UID("uid-"+namespace+"-"+name))
		c.Labels = labels
		if by != nil {
			set(t, by, c, ownership.AdoptAlways)
		}
		return c
	}
	notController := configMap("apps", "not-controller", "uid-not-controller")
	notController.OwnerReferences = []metav1.OwnerReference{{APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: "w", UID: "uid-w"}}
	return family{
		owner: owner,
		objects: []client.Object{
			cm("apps", "ref-b", owner, map[string]string{"group": "b"}),
			cm("apps", "ref-a", owner, map[string]string{"group": "a"}),
			cm("other", "tracked-a", owner, map[string]string{"group": "a"}),
			cm("third", "tracked-b", owner, map[string]string{"group": "b"}),
			set(t, owner, fixture("tracked-fixture", "uid-tracked-fixture")),
			cm("apps", "unowned", nil, nil),
			cm("apps", "rival", rival, nil),
			cm("other", "rival-tracked", rival, nil),
			cm("apps", "stale", previous, nil),
			cm("other", "stale-tracked", previous, nil),
			set(t, previous, fixture("stale-fixture", "uid-stale-fixture")),
			notController,
		},
		children: []string{"apps/ref-a", "apps/ref-b", "other/tracked-a", "third/tracked-b"},
		tracked:  []string{"other/tracked-a", "third/tracked-b", "/tracked-fixture"},
	}
}

func newFakeClient(f family, funcs *interceptor.Funcs) client.WithWatch {
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(f.objects...).
		WithIndex(&corev1.ConfigMap{}, ownership.IndexField, ownership.Index).
		WithIndex(&testtypes.Fixture{}, ownership.IndexField, ownership.Index)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func keys[T client.Object](objs []T) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = client.ObjectKeyFromObject(o).String()
	}
	return out
}

func configMapKeys(list *corev1.ConfigMapList) []string {
	out := make([]string, len(list.Items))
	for i := range list.Items {
		out[i] = client.ObjectKeyFromObject(&list.Items[i]).String()
	}
	return out
}

func TestListChildren(t *testing.T) {
	f := newFamily(t)
	tests := []struct {
		name string
		opts []ownership.ChildrenOption
		want []string
	}{
		{"Without an index, children of both mechanisms are listed in every namespace", nil, f.children},
		{"With an index, the same children are listed", []ownership.ChildrenOption{ownership.UseIndex(true)}, f.children},
		{"Labels narrow the children", []ownership.ChildrenOption{ownership.ChildLabels{"group": "a"}}, []string{"apps/ref-a", "other/tracked-a"}},
		{"Labels narrow the children with an index", []ownership.ChildrenOption{ownership.UseIndex(true), ownership.ChildLabels{"group": "b"}}, []string{"apps/ref-b", "third/tracked-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var list corev1.ConfigMapList
			g.Expect(ownership.ListChildren(t.Context(), newFakeClient(f, nil), f.owner, &list, tt.opts...)).To(Succeed())
			g.Expect(configMapKeys(&list)).To(Equal(tt.want))
		})
	}
}

func TestListChildrenOfAClusterScopedOwnerSearchesEveryNamespace(t *testing.T) {
	g := NewWithT(t)
	owner := fixture("f", "uid-f")
	objs := []client.Object{
		set(t, owner, configMap("apps", "a", "uid-a")),
		set(t, owner, configMap("other", "b", "uid-b")),
		configMap("apps", "unowned", "uid-unowned"),
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	var list corev1.ConfigMapList
	g.Expect(ownership.ListChildren(t.Context(), c, owner, &list)).To(Succeed())
	g.Expect(configMapKeys(&list)).To(Equal([]string{"apps/a", "other/b"}))
}

func TestListChildrenNeedsAnOwnerFromTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{*configMap("apps", "kept", "")}}
	err := ownership.ListChildren(t.Context(), c, widget("apps", "w", ""), list)
	g.Expect(err).To(MatchError(ContainSubstring("has no UID")))
	g.Expect(configMapKeys(list)).To(Equal([]string{"apps/kept"}), "list is changed only on success")
}

// recordDeletes records the keys of the objects deleted through the client.
func recordDeletes(deleted *[]string, fail string) *interceptor.Funcs {
	return &interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		key := client.ObjectKeyFromObject(obj).String()
		*deleted = append(*deleted, key)
		if key == fail {
			return errors.New("etcdserver: request timed out")
		}
		var o client.DeleteOptions
		o.ApplyOptions(opts)
		if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != obj.GetUID() {
			return errors.New("deleted without a UID precondition")
		}
		if o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationBackground {
			return errors.New("deleted without background propagation")
		}
		return c.Delete(ctx, obj, opts...)
	}}
}

func TestPrune(t *testing.T) {
	g := NewWithT(t)
	f := newFamily(t)
	var deletes []string
	c := newFakeClient(f, recordDeletes(&deletes, ""))
	keep := []client.ObjectKey{{Namespace: "apps", Name: "ref-a"}, {Namespace: "third", Name: "tracked-b"}, {Namespace: "apps", Name: "unowned"}}

	var list corev1.ConfigMapList
	deleted, err := ownership.Prune(t.Context(), c, f.owner, &list, keep)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys(deleted)).To(Equal([]string{"apps/ref-b", "other/tracked-a"}))
	g.Expect(deletes).To(Equal([]string{"apps/ref-b", "other/tracked-a"}))
	g.Expect(configMapKeys(&list)).To(Equal([]string{"apps/ref-a", "third/tracked-b"}), "list holds the kept children")

	var all corev1.ConfigMapList
	g.Expect(c.List(t.Context(), &all)).To(Succeed())
	g.Expect(configMapKeys(&all)).To(ConsistOf("apps/ref-a", "third/tracked-b", "apps/unowned", "apps/rival", "other/rival-tracked",
		"apps/stale", "other/stale-tracked", "apps/not-controller"), "only the owner's undesired children are gone")

	deletes = nil
	deleted, err = ownership.Prune(t.Context(), c, f.owner, &corev1.ConfigMapList{}, keep)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeEmpty())
	g.Expect(deletes).To(BeEmpty(), "a steady-state prune sends no request")
}

func TestPruneSkipsChildrenBeingDeleted(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	going := set(t, owner, configMap("apps", "going", "uid-going"))
	going.SetFinalizers([]string{"example.com/hold"})
	going.SetDeletionTimestamp(&metav1.Time{Time: metav1.Now().Time})
	var deletes []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(going).WithInterceptorFuncs(*recordDeletes(&deletes, "")).Build()

	deleted, err := ownership.Prune(t.Context(), c, owner, &corev1.ConfigMapList{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeEmpty())
	g.Expect(deletes).To(BeEmpty())
}

func TestPruneGoesOnAfterAFailedDeletion(t *testing.T) {
	g := NewWithT(t)
	f := newFamily(t)
	var deletes []string
	c := newFakeClient(f, recordDeletes(&deletes, "apps/ref-a"))

	var list corev1.ConfigMapList
	deleted, err := ownership.Prune(t.Context(), c, f.owner, &list, nil)
	g.Expect(err).To(MatchError(ContainSubstring("failed to delete ConfigMap apps/ref-a: etcdserver: request timed out")))
	g.Expect(keys(deleted)).To(Equal([]string{"apps/ref-b", "other/tracked-a", "third/tracked-b"}))
	g.Expect(configMapKeys(&list)).To(Equal([]string{"apps/ref-a"}), "the child that failed is still there")
}

func TestDeleteTracked(t *testing.T) {
	g := NewWithT(t)
	f := newFamily(t)
	var deletes []string
	c := newFakeClient(f, recordDeletes(&deletes, ""))
	kinds := []client.ObjectList{&corev1.ConfigMapList{}, &testtypes.FixtureList{}}

	remaining, err := ownership.DeleteTracked(t.Context(), c, f.owner, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(3), "the children just deleted count until a listing no longer finds them")
	g.Expect(deletes).To(Equal(f.tracked), "only tracked children are deleted: the garbage collector takes the referenced ones")

	deletes = nil
	remaining, err = ownership.DeleteTracked(t.Context(), c, f.owner, kinds, ownership.UseIndex(true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero())
	g.Expect(deletes).To(BeEmpty())

	var all corev1.ConfigMapList
	g.Expect(c.List(t.Context(), &all)).To(Succeed())
	g.Expect(configMapKeys(&all)).To(ContainElements("apps/ref-a", "apps/ref-b", "other/rival-tracked", "other/stale-tracked"),
		"referenced children, other owners' and a previous incarnation's are left alone")
	var fixtures testtypes.FixtureList
	g.Expect(c.List(t.Context(), &fixtures)).To(Succeed())
	g.Expect(fixtures.Items).To(HaveLen(1))
	g.Expect(fixtures.Items[0].Name).To(Equal("stale-fixture"))
}

// An owner assigned to a shard by the sharder's label may have tracked children its shard's cache
// never holds: DeleteTracked does its deletions but reports no 0 without the API reader.
func TestDeleteTrackedOfAnOwnerAssignedToAShardNeedsTheAPIReader(t *testing.T) {
	g := NewWithT(t)
	f := newFamily(t)
	f.owner.SetLabels(map[string]string{"shard.alpha.sharding.timebertt.dev/widgets": "shard-a"})
	var deletes []string
	c := newFakeClient(f, recordDeletes(&deletes, ""))
	kinds := []client.ObjectList{&corev1.ConfigMapList{}, &testtypes.FixtureList{}}

	remaining, err := ownership.DeleteTracked(t.Context(), c, f.owner, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(3), "the children it finds are deleted and counted as before")
	g.Expect(deletes).To(Equal(f.tracked))

	remaining, err = ownership.DeleteTracked(t.Context(), c, f.owner, kinds)
	g.Expect(err).To(MatchError(And(ContainSubstring("shard.alpha.sharding.timebertt.dev/widgets"), ContainSubstring("ownership.APIReader"))))
	g.Expect(remaining).To(BeZero())

	remaining, err = ownership.DeleteTracked(t.Context(), c, f.owner, kinds, ownership.APIReader(c))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero(), "with the API reader, none left is confirmed")

	remaining, err = ownership.DeleteTracked(t.Context(), c, f.owner, nil)
	g.Expect(err).NotTo(HaveOccurred(), "no kinds to look for: nothing to confirm")
	g.Expect(remaining).To(BeZero())
}

func TestDeleteTrackedCountsChildrenThatAreStillGoing(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	going := set(t, owner, configMap("other", "going", "uid-going"))
	going.SetFinalizers([]string{"example.com/hold"})
	going.SetDeletionTimestamp(&metav1.Time{Time: metav1.Now().Time})
	failing := set(t, owner, configMap("other", "failing", "uid-failing"))
	var deletes []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(going, failing).
		WithInterceptorFuncs(*recordDeletes(&deletes, "other/failing")).Build()

	remaining, err := ownership.DeleteTracked(t.Context(), c, owner, []client.ObjectList{&corev1.ConfigMapList{}})
	g.Expect(err).To(MatchError(ContainSubstring("etcdserver: request timed out")))
	g.Expect(remaining).To(Equal(2))
	g.Expect(deletes).To(Equal([]string{"other/failing"}), "a child already being deleted is not deleted again")
}

func TestDeleteTrackedCountsAChildThatSurvivesAConflictAsRemaining(t *testing.T) {
	g := NewWithT(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "a", UID: "owner-uid"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "entry", Namespace: "b", UID: "child-uid"}}
	_, _, err := ownership.Set(owner, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	inner := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owner, child).Build()
	deletes := 0
	c := interceptor.NewClient(inner, interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes++
			if deletes == 1 {
				return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errors.New("try again"))
			}
			return c.Delete(ctx, obj, opts...)
		},
	})

	remaining, err := ownership.DeleteTracked(t.Context(), c, owner, []client.ObjectList{&corev1.ConfigMapList{}})

	g.Expect(err).To(HaveOccurred(), "the conflict is reported, for the finalizer to retry")
	g.Expect(remaining).To(Equal(1), "a child that still exists counts as remaining, or the finalizer would go and leak it")
	g.Expect(inner.Get(t.Context(), client.ObjectKeyFromObject(child), &corev1.ConfigMap{})).To(Succeed())

	remaining, err = ownership.DeleteTracked(t.Context(), c, owner, []client.ObjectList{&corev1.ConfigMapList{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(1), "deleted now, and counted until a listing no longer finds it")
}

// TestPropagationIsTheDeletionsPolicy: Propagation sets the propagation policy of every deletion
// Prune and DeleteTracked send; without it they delete in the background.
func TestPropagationIsTheDeletionsPolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []ownership.ChildrenOption
		want metav1.DeletionPropagation
	}{
		{"by default", nil, metav1.DeletePropagationBackground},
		{"Propagation(Foreground)", []ownership.ChildrenOption{ownership.Propagation(metav1.DeletePropagationForeground)}, metav1.DeletePropagationForeground},
		{"Propagation(Orphan)", []ownership.ChildrenOption{ownership.Propagation(metav1.DeletePropagationOrphan)}, metav1.DeletePropagationOrphan},
		{"an empty Propagation", []ownership.ChildrenOption{ownership.Propagation("")}, metav1.DeletePropagationBackground},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			owner := widget("apps", "w", "uid-w")
			var policies []metav1.DeletionPropagation
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(set(t, owner, configMap("apps", "pruned", "uid-pruned")), set(t, owner, configMap("other", "tracked", "uid-tracked"))).
				WithInterceptorFuncs(interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					var o client.DeleteOptions
					o.ApplyOptions(opts)
					g.Expect(o.PropagationPolicy).NotTo(BeNil())
					policies = append(policies, *o.PropagationPolicy)
					return c.Delete(ctx, obj, opts...)
				}}).Build()

			_, err := ownership.Prune(t.Context(), c, owner, &corev1.ConfigMapList{}, []client.ObjectKey{{Namespace: "other", Name: "tracked"}}, tc.opts...)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = ownership.DeleteTracked(t.Context(), c, owner, []client.ObjectList{&corev1.ConfigMapList{}}, tc.opts...)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(policies).To(Equal([]metav1.DeletionPropagation{tc.want, tc.want}))
		})
	}
}

// TestPruneReadsAChildAgainAfterAConflict: a deletion refused with a 409 (a failed UID
// precondition, or another cause) is judged by reading the child again. Gone or replaced by
// another object of the same name: nothing to delete, no error, and not counted as deleted. Still
// there, or the read fails: the deletion's error, and the child is kept.
func TestPruneReadsAChildAgainAfterAConflict(t *testing.T) {
	for _, tc := range []struct {
		name string
		// meanwhile changes the child when its deletion conflicts; getErr fails the read after.
		meanwhile func(ctx context.Context, c client.WithWatch, child client.Object)
		getErr    error
		gone      bool
	}{{
		name: "deleted meanwhile",
		meanwhile: func(ctx context.Context, c client.WithWatch, child client.Object) {
			NewWithT(t).Expect(c.Delete(ctx, child)).To(Succeed())
		},
		gone: true,
	}, {
		name: "replaced by another object of the same name",
		meanwhile: func(ctx context.Context, c client.WithWatch, child client.Object) {
			g := NewWithT(t)
			g.Expect(c.Delete(ctx, child)).To(Succeed())
			g.Expect(c.Create(ctx, configMap("apps", "pruned", "uid-new"))).To(Succeed())
		},
		gone: true,
	}, {
		name:      "still there",
		meanwhile: func(context.Context, client.WithWatch, client.Object) {},
	}, {
		name:      "the read fails",
		meanwhile: func(context.Context, client.WithWatch, client.Object) {},
		getErr:    errors.New("etcdserver: leader changed"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			owner := widget("apps", "w", "uid-w")
			child := set(t, owner, configMap("apps", "pruned", "uid-pruned"))
			conflicted := false
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(child).
				WithInterceptorFuncs(interceptor.Funcs{
					Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
						conflicted = true
						tc.meanwhile(ctx, c, obj)
						return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errors.New("the UID in the precondition does not match"))
					},
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if conflicted && tc.getErr != nil {
							return tc.getErr
						}
						return c.Get(ctx, key, obj, opts...)
					},
				}).Build()

			var list corev1.ConfigMapList
			deleted, err := ownership.Prune(t.Context(), c, owner, &list, nil)
			g.Expect(deleted).To(BeEmpty(), "the deletion was refused")
			if tc.gone {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(list.Items).To(BeEmpty(), "a child that is gone is not kept")
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring("failed to delete ConfigMap apps/pruned")))
			g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "the deletion's own error, not the read's: %v", err)
			g.Expect(configMapKeys(&list)).To(Equal([]string{"apps/pruned"}), "a child that may still exist is kept")
		})
	}
}

// Each child DeleteTracked or Prune deletes is logged at V(1), with its kind and name; a child
// whose deletion failed is not.
func TestEachDeletedChildIsLoggedAtV1(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	var lines []string
	ctx := logr.NewContext(t.Context(), funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1}))
	var deletes []string
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(set(t, owner, configMap("other", "tracked", "uid-tracked")), set(t, owner, configMap("other", "failing", "uid-failing")),
			set(t, owner, configMap("apps", "pruned", "uid-pruned"))).
		WithInterceptorFuncs(*recordDeletes(&deletes, "other/failing")).Build()

	_, err := ownership.DeleteTracked(ctx, c, owner, []client.ObjectList{&corev1.ConfigMapList{}})
	g.Expect(err).To(HaveOccurred(), "other/failing")
	_, err = ownership.Prune(ctx, c, owner, &corev1.ConfigMapList{}, []client.ObjectKey{{Namespace: "other", Name: "failing"}})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(lines).To(HaveExactElements(
		And(ContainSubstring(`"msg"="Deleted a tracked child"`), ContainSubstring("ConfigMap other/tracked")),
		And(ContainSubstring(`"msg"="Pruned a child"`), ContainSubstring("ConfigMap apps/pruned")),
	))
}
