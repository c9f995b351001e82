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

package patch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

// newWidget creates a Widget with a Ready condition in a namespace of its own and returns it as
// read back from the API server.
func newWidget(t *testing.T, g Gomega, name string, mutate ...func(*testtypes.Widget)) *testtypes.Widget {
	t.Helper()
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: env.Namespace(t)}, Spec: testtypes.WidgetSpec{Size: "small"}}
	for _, m := range mutate {
		m(w)
	}
	status := w.Status
	g.Expect(c.Create(ctx, w)).To(Succeed())
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "created")
	w.Status.Conditions = append(w.Status.Conditions, status.Conditions...)
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	return w
}

// get reads the latest version of obj into a new object.
func get(g Gomega, obj *testtypes.Widget) *testtypes.Widget {
	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(context.Background(), client.ObjectKeyFromObject(obj), latest)).To(Succeed())
	return latest
}

func TestPatchSendsOnlyTheRequestsForWhatChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []patch.Option
		mutate func(g Gomega, w *testtypes.Widget)
		// expect adjusts the expected object for what the options change.
		expect func(w *testtypes.Widget)
		want   counts
	}{{
		name:   "a reconcile that changes nothing sends nothing",
		mutate: func(Gomega, *testtypes.Widget) {},
		want:   counts{},
	}, {
		name: "setting a condition to what it is sends nothing",
		mutate: func(g Gomega, w *testtypes.Widget) {
			conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "created")
		},
		want: counts{},
	}, {
		name: "a condition change sends one status request",
		mutate: func(g Gomega, w *testtypes.Widget) {
			conditions.MarkFalse(w, conditions.Ready, "Scaling", "2 of 3 replicas")
		},
		want: counts{"status patch": 1},
	}, {
		name: "a new condition sends one status request",
		mutate: func(g Gomega, w *testtypes.Widget) {
			conditions.MarkTrue(w, "ConfigReady", "Written", "")
		},
		want: counts{"status patch": 1},
	}, {
		name:   "observedGeneration sends one status request",
		mutate: func(_ Gomega, w *testtypes.Widget) { w.Status.ObservedGeneration = w.Generation },
		want:   counts{"status patch": 1},
	}, {
		name:   "a label change sends one request",
		mutate: func(_ Gomega, w *testtypes.Widget) { w.Labels = map[string]string{"tier": "gold"} },
		want:   counts{"patch": 1},
	}, {
		name:   "a spec change sends one request",
		mutate: func(_ Gomega, w *testtypes.Widget) { w.Spec.Replicas = ptr.To(int32(3)) },
		want:   counts{"patch": 1},
	}, {
		name:   "a finalizer sends one request",
		mutate: func(_ Gomega, w *testtypes.Widget) { controllerutil.AddFinalizer(w, "test.tenon.dev/cleanup") },
		want:   counts{"patch": 1},
	}, {
		name: "spec and status changes send one request each",
		mutate: func(g Gomega, w *testtypes.Widget) {
			w.Spec.Color = "blue"
			w.Annotations = map[string]string{"example.com/note": "a/b~c"}
			w.Status.Phase = "Scaling"
			conditions.MarkFalse(w, conditions.Ready, "Scaling", "")
		},
		want: counts{"patch": 1, "status patch": 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			c := newCountingClient(t)
			w := newWidget(t, g, "counted")

			h, err := patch.NewHelper(w, c)
			g.Expect(err).NotTo(HaveOccurred())
			tc.mutate(g, w)
			want := w.DeepCopy()
			if tc.expect != nil {
				tc.expect(want)
			}
			c.take()
			g.Expect(h.Patch(ctx, w, tc.opts...)).To(Succeed())
			g.Expect(c.take()).To(Equal(tc.want), "requests of the first Patch")

			// The server has the changes, obj is what the server has, and a second Patch of the
			// unchanged object sends nothing.
			latest := get(g, w)
			g.Expect(cmp.Diff(latest, w)).To(BeEmpty(), "obj is updated from the response")
			g.Expect(cmp.Diff(want.Spec, latest.Spec)).To(BeEmpty())
			g.Expect(cmp.Diff(want.Status, latest.Status)).To(BeEmpty())
			g.Expect(cmp.Diff(want.Labels, latest.Labels)).To(BeEmpty())
			g.Expect(cmp.Diff(want.Annotations, latest.Annotations)).To(BeEmpty())
			g.Expect(cmp.Diff(want.Finalizers, latest.Finalizers)).To(BeEmpty())
			g.Expect(h.Patch(ctx, w, tc.opts...)).To(Succeed())
			g.Expect(c.take()).To(BeEmpty(), "requests of the second Patch")
		})
	}
}

func TestPatchNeverDropsFinalizersOrOwnerReferencesOthersAdded(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := newWidget(t, g, "shared", func(w *testtypes.Widget) { w.Finalizers = []string{"other.example.com/a"} })
	owner := func(name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: types.UID("uid-" + name)}
	}

	// Our reconcile works on w, which goes stale: another writer adds a finalizer, an owner
	// reference and a label, and also happens to add the finalizer we are about to add.
	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	other := get(g, w)
	other.Finalizers = append(other.Finalizers, "other.example.com/b", "tenon.dev/ours")
	other.OwnerReferences = append(other.OwnerReferences, owner("theirs"))
	other.Labels = map[string]string{"theirs": "yes"}
	g.Expect(env.Client().Update(ctx, other)).To(Succeed())

	controllerutil.AddFinalizer(w, "tenon.dev/ours")
	w.OwnerReferences = append(w.OwnerReferences, owner("ours"))
	w.Labels = map[string]string{"ours": "yes"}
	c.take()
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"patch": 2, "get": 1}), "one conflict, resolved by one read and one retry")

	latest := get(g, w)
	g.Expect(latest.Finalizers).To(Equal([]string{"other.example.com/a", "other.example.com/b", "tenon.dev/ours"}))
	g.Expect(latest.OwnerReferences).To(Equal([]metav1.OwnerReference{owner("theirs"), owner("ours")}))
	g.Expect(latest.Labels).To(Equal(map[string]string{"theirs": "yes", "ours": "yes"}))
	g.Expect(cmp.Diff(latest, w)).To(BeEmpty())

	// Removing ours while another writer removes one of theirs and adds another.
	other = get(g, w)
	other.Finalizers = []string{"other.example.com/b", "tenon.dev/ours", "other.example.com/c"}
	g.Expect(env.Client().Update(ctx, other)).To(Succeed())
	controllerutil.RemoveFinalizer(w, "tenon.dev/ours")
	w.OwnerReferences = w.OwnerReferences[:1]
	g.Expect(h.Patch(ctx, w)).To(Succeed())

	latest = get(g, w)
	g.Expect(latest.Finalizers).To(Equal([]string{"other.example.com/b", "other.example.com/c"}))
	g.Expect(latest.OwnerReferences).To(Equal([]metav1.OwnerReference{owner("theirs")}))
}

func TestPatchMergesConditionsWithOtherWriters(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := newWidget(t, g, "conditions", func(w *testtypes.Widget) {
		w.Status.Conditions = []metav1.Condition{{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", LastTransitionTime: metav1.Now()}}
	})

	// Another writer changes its condition and adds one; we change Ready.
	h, err := patch.NewHelper(w, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	other := get(g, w)
	conditions.MarkFalse(other, "Synced", "Lagging", "behind by 3")
	conditions.MarkTrue(other, "Backup", "Done", "")
	g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())

	conditions.MarkFalse(w, conditions.Ready, "Scaling", "")
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	latest := get(g, w)
	g.Expect(latest).To(SatisfyAll(
		matchers.HaveCondition("Synced", metav1.ConditionFalse, matchers.WithReason("Lagging"), matchers.WithMessage("behind by 3")),
		matchers.HaveCondition("Backup", metav1.ConditionTrue, matchers.WithReason("Done")),
		matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("Scaling")),
	))

	// Both change Ready. Not owned: the other writer's value stays and Patch reports a conflict
	// that requeue classifies as such.
	h, err = patch.NewHelper(w, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	other = get(g, w)
	conditions.MarkTrue(other, conditions.Ready, "SomeoneElse", "")
	g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())
	conditions.MarkFalse(w, conditions.Ready, "Failed", "")
	err = h.Patch(ctx, w)
	var conflict *patch.ConflictError
	g.Expect(errors.As(err, &conflict)).To(BeTrue(), "got %v", err)
	g.Expect(conflict.Fields).To(Equal([]string{"/status/conditions[Ready]"}))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue())
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassConflict))
	g.Expect(get(g, w)).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue, matchers.WithReason("SomeoneElse")))

	// Owned, ours wins.
	g.Expect(h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready})).To(Succeed())
	g.Expect(get(g, w)).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("Failed")))
}

// TestAConditionListBothWritersEmptiedIsRemovedNotLeftEmpty: we drop one condition, another
// writer meanwhile removes the other one. The list is then empty, and Patch removes it whole, as
// the guarantee table says for any list emptied (so a schema default for it applies again); the
// removal of ours alone, by index, would have left an empty list.
func TestAConditionListBothWritersEmptiedIsRemovedNotLeftEmpty(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := newWidget(t, g, "emptied", func(w *testtypes.Widget) {
		w.Status.Conditions = append(w.Status.Conditions,
			metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", LastTransitionTime: metav1.Now()})
	})
	g.Expect(w.Status.Conditions).To(HaveLen(2))
	g.Expect(w.Status.Conditions[0].Type).To(Equal(string(conditions.Ready)))

	h, err := patch.NewHelper(w, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	other := get(g, w)
	conditions.Delete(other, "Synced")
	g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())

	conditions.Delete(w, conditions.Ready)
	g.Expect(h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready})).To(Succeed())

	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), raw)).To(Succeed())
	_, found, err := unstructured.NestedFieldNoCopy(raw.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeFalse(), "status: %v", raw.Object["status"])
}

func TestPatchOfTheLastFinalizerToleratesTheObjectVanishing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs between NewHelper and Patch.
		before func(g Gomega, w *testtypes.Widget)
		want   counts
	}{{
		name:   "the patch removes the last finalizer, the status change is dropped",
		before: func(Gomega, *testtypes.Widget) {},
		want:   counts{"patch": 1},
	}, {
		name: "another writer removed the object meanwhile",
		before: func(g Gomega, w *testtypes.Widget) {
			latest := get(g, w)
			latest.Finalizers = nil
			g.Expect(env.Client().Update(context.Background(), latest)).To(Succeed())
		},
		want: counts{"patch": 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			c := newCountingClient(t)
			w := newWidget(t, g, "vanishing", func(w *testtypes.Widget) { w.Finalizers = []string{"tenon.dev/ours"} })
			g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
			w = get(g, w)
			g.Expect(w.DeletionTimestamp).NotTo(BeNil())

			h, err := patch.NewHelper(w, c)
			g.Expect(err).NotTo(HaveOccurred())
			tc.before(g, w)
			conditions.MarkFalse(w, conditions.Deleting, "CleanedUp", "")
			controllerutil.RemoveFinalizer(w, "tenon.dev/ours")
			c.take()
			g.Expect(h.Patch(ctx, w, patch.OwnedConditions{conditions.Deleting})).To(Succeed())
			g.Expect(c.take()).To(Equal(tc.want))
			err = env.Client().Get(ctx, client.ObjectKeyFromObject(w), &testtypes.Widget{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
		})
	}
}

func TestPatchWritesTheStatusOfKindsWithoutStatusSubresourceWithTheObject(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	gd := &testtypes.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "gadget", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, gd)).To(Succeed())

	// The first Patch of the kind in this process finds out that it has no status subresource.
	h, err := patch.NewHelper(gd, c)
	g.Expect(err).NotTo(HaveOccurred())
	gd.Spec.Size = "large"
	conditions.MarkTrue(gd, conditions.Ready, conditions.ReasonSucceeded, "")
	gd.Status.ObservedGeneration = gd.Generation
	g.Expect(h.Patch(ctx, gd)).To(Succeed())
	latest := &testtypes.Gadget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(gd), latest)).To(Succeed())
	g.Expect(latest.Spec.Size).To(Equal("large"))
	g.Expect(conditions.IsTrue(latest, conditions.Ready)).To(BeTrue())
	g.Expect(latest.Status.ObservedGeneration).To(BeEquivalentTo(1), "the generation the reconcile acted on")
	g.Expect(cmp.Diff(latest, gd)).To(BeEmpty())

	// From now on the kind is known: a spec and condition change is one request.
	gen := latest.Generation
	gd.Spec.Color = "red"
	conditions.MarkFalse(gd, conditions.Ready, "Scaling", "")
	c.take()
	g.Expect(h.Patch(ctx, gd)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"patch": 1}))
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(gd), latest)).To(Succeed())
	g.Expect(conditions.IsFalse(latest, conditions.Ready)).To(BeTrue())
	g.Expect(latest.Spec.Color).To(Equal("red"))
	g.Expect(latest.Generation).To(Equal(gen+1), "one write, which bumps the generation of such a kind")
}

func TestPatchWorksOnUnstructuredObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := newWidget(t, g, "unstructured")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), u)).To(Succeed())

	h, err := patch.NewHelper(u, c)
	g.Expect(err).NotTo(HaveOccurred())
	u.SetLabels(map[string]string{"app.kubernetes.io/name": "widget"})
	controllerutil.AddFinalizer(u, "tenon.dev/ours")
	g.Expect(unstructured.SetNestedField(u.Object, "large", "spec", "size")).To(Succeed())
	cs, err := conditions.FromUnstructured(u)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkFalse(cs, conditions.Ready, "Resizing", "")
	c.take()
	g.Expect(h.Patch(ctx, u)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"patch": 1, "status patch": 1}))

	latest := get(g, w)
	g.Expect(latest.Labels).To(Equal(map[string]string{"app.kubernetes.io/name": "widget"}))
	g.Expect(latest.Finalizers).To(Equal([]string{"tenon.dev/ours"}))
	g.Expect(latest.Spec.Size).To(Equal("large"))
	g.Expect(latest).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("Resizing")))
	g.Expect(u.GetResourceVersion()).To(Equal(latest.ResourceVersion))
	g.Expect(h.Patch(ctx, u)).To(Succeed())
	g.Expect(c.take()).To(BeEmpty())
}

func TestObservedGenerationIsTheGenerationTheReconcileActedOn(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := newWidget(t, g, "generation")
	h, err := patch.NewHelper(w, env.Client())
	g.Expect(err).NotTo(HaveOccurred())

	// The spec changes while we reconcile generation 1.
	other := get(g, w)
	other.Spec.Replicas = ptr.To(int32(5))
	g.Expect(env.Client().Update(ctx, other)).To(Succeed())
	g.Expect(other.Generation).To(BeEquivalentTo(2))

	g.Expect(requeue.Report(w, nil)).To(Succeed())
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	latest := get(g, w)
	g.Expect(latest.Status.ObservedGeneration).To(BeEquivalentTo(1))
	g.Expect(latest.Spec.Replicas).To(Equal(ptr.To(int32(5))), "a status write never reverts the spec")
}

func TestPatchFindsAConditionThatMoved(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := newWidget(t, g, "moved", func(w *testtypes.Widget) {
		w.Status.Conditions = []metav1.Condition{{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", LastTransitionTime: metav1.Now()}}
	})
	g.Expect(w.Status.Conditions[1].Type).To(Equal("Synced"))
	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())

	// Another writer adds a condition, which goes before Synced: our copy has Synced at index 1,
	// the server at index 2.
	other := get(g, w)
	conditions.MarkTrue(other, conditions.Available, "MinimumReplicas", "")
	g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())

	conditions.MarkFalse(w, "Synced", "Lagging", "")
	c.take()
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"status patch": 2, "get": 1}), "the guard failed once; the retry found Synced where it is now")

	latest := get(g, w)
	var types []string
	for _, c := range latest.Status.Conditions {
		types = append(types, c.Type)
	}
	g.Expect(types).To(Equal([]string{"Ready", "Available", "Synced"}))
	g.Expect(latest).To(SatisfyAll(
		matchers.HaveCondition("Synced", metav1.ConditionFalse, matchers.WithReason("Lagging")),
		matchers.HaveCondition(conditions.Available, metav1.ConditionTrue, matchers.WithReason("MinimumReplicas")),
	))
}

func TestPatchWorksOnClusterScopedObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	f := &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: env.Namespace(t) + "-fixture"}}
	g.Expect(env.Client().Create(ctx, f)).To(Succeed())
	t.Cleanup(func() { _ = env.Client().Delete(context.Background(), f) })

	h, err := patch.NewHelper(f, c)
	g.Expect(err).NotTo(HaveOccurred())
	f.Labels = map[string]string{"scope": "cluster"}
	conditions.MarkTrue(f, conditions.Ready, conditions.ReasonSucceeded, "")
	c.take()
	g.Expect(h.Patch(ctx, f)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"patch": 1, "status patch": 1}))

	latest := &testtypes.Fixture{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(f), latest)).To(Succeed())
	g.Expect(latest.Labels).To(Equal(map[string]string{"scope": "cluster"}))
	g.Expect(conditions.IsTrue(latest, conditions.Ready)).To(BeTrue())
}

// TestPatchOfAStatusFieldTheSchemaPrunesIsNoErrorWithOrWithoutAStatusSubresource patches the status of
// an unstructured object with a field its CRD does not know (an operator built with newer Go
// types than the CRD installed: version skew during an upgrade) next to one it knows. The API
// server prunes the unknown field and keeps the known one, whether or not the kind has a status
// subresource. The Helper must do for a Gadget (no status subresource) what it does for a
// Widget: write the known field and return nil; what the server prunes is no sign of where the
// status goes.
func TestPatchOfAStatusFieldTheSchemaPrunesIsNoErrorWithOrWithoutAStatusSubresource(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		// created holds a status the object is created with: managedFields then show the
		// status written with the object, and the Helper sends it that way from the start.
		created bool
	}{
		{name: "with a status subresource", kind: "Widget"},
		{name: "without a status subresource", kind: "Gadget"},
		{name: "without a status subresource, the status written with the object before", kind: "Gadget", created: true},
	} {
		kind := tc.kind
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion(testtypes.GroupVersion.String())
			obj.SetKind(kind)
			obj.SetNamespace(ns)
			obj.SetName("x")
			g.Expect(unstructured.SetNestedField(obj.Object, "small", "spec", "size")).To(Succeed())
			if tc.created {
				g.Expect(unstructured.SetNestedField(obj.Object, "Pending", "status", "phase")).To(Succeed())
			}
			g.Expect(env.Client().Create(ctx, obj)).To(Succeed())

			c := newCountingClient(t)
			h, err := patch.NewHelper(obj, c)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(unstructured.SetNestedField(obj.Object, "Ready", "status", "phase")).To(Succeed())
			g.Expect(unstructured.SetNestedField(obj.Object, "added in v2", "status", "fromANewerVersion")).To(Succeed())
			err = h.Patch(ctx, obj)
			t.Logf("requests: %v", c.take())
			g.Expect(err).NotTo(HaveOccurred())

			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
			phase, _, _ := unstructured.NestedString(live.Object, "status", "phase")
			g.Expect(phase).To(Equal("Ready"))
		})
	}
}

// TestAHelperDoesNotLearnThatAKindHasNoStatusSubresourceFromAStatusAnotherWriterSet
// patches a Node that kubelet registered with its status (a create keeps a Node's status, so
// managedFields show the status written through the main resource and none through the status
// subresource). Kubelet has since set, through the status subresource, the very value the
// reconcile sets. The Helper sends the status with the rest of the object, the server ignores
// it, and the response holds the value anyway: that is no sign that the kind lacks a status
// subresource. The next Patch of the same Helper must write its status change.
func TestAHelperDoesNotLearnThatAKindHasNoStatusSubresourceFromAStatusAnotherWriterSet(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	name := env.Namespace(t) + "-node"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}}
	g.Expect(env.Client().Create(ctx, node)).To(Succeed())
	t.Cleanup(func() {
		_ = env.Client().Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	snapshot := &corev1.Node{}
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Name: name}, snapshot)).To(Succeed())

	// Kubelet reports 4 CPUs through the status subresource.
	kubelet := snapshot.DeepCopy()
	kubelet.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("4")
	g.Expect(env.Client().Status().Update(ctx, kubelet)).To(Succeed())

	// The reconcile, from the snapshot, says 4 too, then (same Helper) 8.
	h, err := patch.NewHelper(snapshot, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	snapshot.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("4")
	g.Expect(h.Patch(ctx, snapshot)).To(Succeed())
	snapshot.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("8")
	g.Expect(h.Patch(ctx, snapshot)).To(Succeed())

	live := &corev1.Node{}
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Name: name}, live)).To(Succeed())
	cpu := live.Status.Capacity[corev1.ResourceCPU]
	g.Expect(cpu.String()).To(Equal("8"), "Patch returned nil, so the status change is written")
}
