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

// Adversarial tests of the uid an owned apply names: the uid of the child the Applier's reader
// holds, so that the API server refuses the apply to any other object of that name.

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
)

// applyIn applies desired with a in form: "typed", "unstructured" or "configuration".
func applyIn(ctx context.Context, g Gomega, a *patch.Applier, form string, desired client.Object, opts ...patch.ApplyCallOption) error {
	if form == "typed" {
		_, err := a.Apply(ctx, desired, opts...)
		return err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	gvk, err := apiutil.GVKForObject(desired, env.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	u.SetGroupVersionKind(gvk)
	if form == "unstructured" {
		_, err = a.Apply(ctx, u, opts...)
		return err
	}
	ac := client.ApplyConfigurationFromUnstructured(u)
	if cm, ok := desired.(*corev1.ConfigMap); ok {
		ac = corev1ac.ConfigMap(cm.Name, cm.Namespace).WithLabels(cm.Labels).WithData(cm.Data)
	}
	_, err = a.ApplyConfiguration(ctx, ac, opts...)
	return err
}

// TestOwnedByNeverWritesAnotherObjectThanTheOneItsReaderHolds has the Applier's reader hold the
// child as it applied it, while on the API server another writer's object of that name has
// replaced it (or nothing has), across kinds, scopes, forms and mechanisms. Without an API
// reader the call must be a conflict that names the object, and write nothing.
func TestOwnedByNeverWritesAnotherObjectThanTheOneItsReaderHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		// clusterOwner makes the owner a cluster-scoped Fixture.
		clusterOwner bool
		desired      func(ns, remote, value string) client.Object
		form         string
		policy       ownership.AdoptionPolicy
		// deleted leaves nothing in place of the child.
		deleted bool
		// withoutUID has the reader hold the child without its uid, as a hand-built reader may.
		withoutUID bool
		wantText   string
	}{
		{name: "an apply configuration, under AdoptNever", form: "configuration", policy: ownership.AdoptNever, wantText: "was replaced"},
		{name: "an unstructured object, under AdoptIfUnowned", form: "unstructured", policy: ownership.AdoptIfUnowned, wantText: "was replaced"},
		{name: "a tracked child in another namespace", form: "typed", policy: ownership.AdoptIfUnowned, wantText: "was replaced",
			desired: func(_, remote, v string) client.Object { return ownedConfigMap(remote, "child", v) }},
		{name: "a custom resource with a status subresource", form: "typed", policy: ownership.AdoptIfUnowned, wantText: "was replaced",
			desired: func(ns, _, v string) client.Object {
				return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}, Spec: testtypes.WidgetSpec{Size: v}}
			}},
		{name: "a cluster-scoped child of a cluster-scoped owner", clusterOwner: true, form: "unstructured", policy: ownership.AdoptIfUnowned, wantText: "was replaced",
			desired: func(ns, _, v string) client.Object {
				return &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: ns + "-child"}, Spec: testtypes.WidgetSpec{Size: v}}
			}},
		{name: "a child deleted since, as an apply configuration", form: "configuration", policy: ownership.AdoptNever, deleted: true, wantText: "is gone or was replaced since it was read"},
		{name: "a reader that holds the child without its uid, under AdoptNever", form: "typed", policy: ownership.AdoptNever, withoutUID: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns, remote := env.Namespace(t), env.Namespace(t)
			ownerNS := ns
			if tc.clusterOwner {
				ownerNS = ""
			}
			owner := newOwner(t, ownerNS, "owner-"+ns)
			desired := tc.desired
			if desired == nil {
				desired = func(ns, _, v string) client.Object { return ownedConfigMap(ns, "child", v) }
			}
			if _, ok := desired(ns, remote, "").(*testtypes.Fixture); ok {
				t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), desired(ns, remote, ""))) })
			}

			held := appliedChild(g, desired(ns, remote, "mine"), patch.OwnedBy(owner, tc.policy))
			deleteNow(g, held)
			var before client.Object
			if !tc.deleted {
				someone := desired(ns, remote, "theirs")
				someone.SetLabels(map[string]string{"by": "someone"})
				g.Expect(env.Client().Create(ctx, someone)).To(Succeed())
				before = liveOf(g, someone)
			}
			if tc.withoutUID {
				held.SetUID("")
			}

			writes := newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{
				Reader: heldReader{held: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(held): held}},
			})
			// Forced, so that no field conflict with the other writer's values stands in for the refusal.
			err := applyIn(ctx, g, a, tc.form, desired(ns, remote, "changed"), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
			g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
			g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
			gvk, _ := apiutil.GVKForObject(held, env.Scheme())
			g.Expect(err.Error()).To(HavePrefix("failed to apply %s %s: ", gvk.Kind, client.ObjectKeyFromObject(held)))
			g.Expect(err.Error()).To(ContainSubstring(tc.wantText))

			after := desired(ns, remote, "")
			getErr := env.Client().Get(ctx, client.ObjectKeyFromObject(held), after)
			if tc.deleted {
				g.Expect(apierrors.IsNotFound(getErr)).To(BeTrue(), "nothing is created in place of the object held: %v", getErr)
				return
			}
			g.Expect(getErr).NotTo(HaveOccurred())
			g.Expect(after.GetResourceVersion()).To(Equal(before.GetResourceVersion()),
				"the object that replaced the child is not written: %s", cmp.Diff(before, after))
			g.Expect(ownership.Owns(owner, after)).To(BeFalse())
		})
	}
}

// TestOwnedByKeepsTheClassOfAnInvalidFieldsRefusal applies an invalid ConfigMap to the child
// the reader holds as the API server has it: the uid matches, so the 422 is the invalid field's
// and must stay a 422.
func TestOwnedByKeepsTheClassOfAnInvalidFieldsRefusal(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	held := appliedChild(g, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner))

	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{
		Reader: heldReader{held: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(held): held}}, APIReader: env.Client(),
	})
	invalid := ownedConfigMap(ns, "child", "mine")
	invalid.Data["not a key!"] = "x"
	_, err := a.Apply(ctx, invalid, patch.OwnedBy(owner))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want a 422, got %v", err)
	g.Expect(apierrors.IsConflict(err)).To(BeFalse())
	g.Expect(err.Error()).To(ContainSubstring("not a key!"))
}

// TestOwnedByUIDIsNeitherRememberedNorOwned repeats an apply that named the child's uid: the
// uid is not part of what the Applier remembers, nor of the manager's managedFields, so the
// repeat is skipped from either proof.
func TestOwnedByUIDIsNeitherRememberedNorOwned(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	g.Expect(a.Apply(ctx, ownedConfigMap(ns, "child", "1"), patch.OwnedBy(owner))).Error().NotTo(HaveOccurred())
	// The child exists: this apply names its uid.
	g.Expect(a.Apply(ctx, ownedConfigMap(ns, "child", "2"), patch.OwnedBy(owner))).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 2, "apply": 2}))

	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		g.Expect(applier.Apply(ctx, ownedConfigMap(ns, "child", "2"), patch.OwnedBy(owner))).To(BeFalse())
		g.Expect(c.take()).To(Equal(counts{"get": 1}), "the repeat is skipped")
	}
	owned := ownedFields(liveOf(g, ownedConfigMap(ns, "child", "")), "tenon-test")
	g.Expect(owned).To(ContainSubstring("f:data"))
	g.Expect(owned).NotTo(ContainSubstring("f:uid"))
}

// TestOwnedByAppliesToAChildBeingDeletedThatItsReaderHolds has the reader hold the child while
// someone deletes it and holds it with a finalizer: it is the same object, so the apply goes
// through and keeps the finalizer; once it is gone, the apply is a conflict and creates nothing.
func TestOwnedByAppliesToAChildBeingDeletedThatItsReaderHolds(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	child := appliedChild(g, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner))
	mergePatchOnServer(t, g, child, `{"metadata":{"finalizers":["someone.example/keep"]}}`, false)
	held := liveOf(g, child)
	g.Expect(env.Client().Delete(ctx, held)).To(Succeed())
	t.Cleanup(func() {
		_ = client.IgnoreNotFound(env.Client().Patch(context.Background(), held, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))))
	})

	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{
		Reader: heldReader{held: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(held): held}},
	})
	g.Expect(a.Apply(ctx, ownedConfigMap(ns, "child", "changed"), patch.OwnedBy(owner, ownership.AdoptNever))).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"apply": 1}))
	live := liveOf(g, held).(*corev1.ConfigMap)
	g.Expect(live.UID).To(Equal(held.GetUID()))
	g.Expect(live.DeletionTimestamp).NotTo(BeNil())
	g.Expect(live.Finalizers).To(Equal([]string{"someone.example/keep"}), "another writer's finalizer stays")
	g.Expect(live.Data).To(Equal(map[string]string{"value": "changed"}))

	mergePatchOnServer(t, g, live, `{"metadata":{"finalizers":null}}`, false)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(held), &corev1.ConfigMap{}))
	}).Should(BeTrue())
	_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "again"), patch.OwnedBy(owner, ownership.AdoptNever))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
	g.Expect(apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(held), &corev1.ConfigMap{}))).To(BeTrue())
}

// TestApplyStatusNamesNoUID has the reader hold a Widget that another of the same name has
// replaced: a status apply is not an owned apply, carries no uid, and writes the live object's
// status as before.
func TestApplyStatusNamesNoUID(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	held := liveOf(g, w)
	deleteNow(g, held)
	g.Expect(env.Client().Create(ctx, &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}})).To(Succeed())

	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{
		Reader: heldReader{held: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(held): held}},
	})
	desired := statusOf(&testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}, condition("Ready", metav1.ConditionTrue, "Up", ""))
	g.Expect(a.ApplyStatus(ctx, desired)).To(BeTrue())
	live := liveOf(g, w).(*testtypes.Widget)
	g.Expect(live.UID).NotTo(Equal(held.GetUID()))
	g.Expect(live.Status.Conditions).To(HaveLen(1))
}

// TestOwnedByAppliesToAnObjectTheFakeClientHolds: unit tests run the Applier on the fake client,
// which gives objects no uid unless the test sets one; an owned apply to a child it holds works
// either way.
func TestOwnedByAppliesToAnObjectTheFakeClientHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  types.UID
	}{{"a child without a uid", ""}, {"a child with a uid", "child-uid"}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			scheme := testScheme()
			g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
			owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner", UID: "owner-uid"}}
			existing := someonesConfigMap("default", "child")
			existing.UID = tc.uid
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owner, existing).Build()
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

			// Adopted, then changed: both apply to the object the fake client holds.
			for _, step := range []struct {
				value  string
				policy ownership.AdoptionPolicy
			}{{"1", ownership.AdoptIfUnowned}, {"2", ownership.AdoptNever}} {
				desired := ownedConfigMap("default", "child", step.value)
				g.Expect(a.Apply(ctx, desired, patch.OwnedBy(owner, step.policy), patch.ForceConflicts(true))).To(BeTrue())
				live := &corev1.ConfigMap{}
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(desired), live)).To(Succeed())
				g.Expect(live.UID).To(Equal(tc.uid))
				g.Expect(live.Data).To(Equal(map[string]string{"value": step.value}))
				g.Expect(live.Labels).To(HaveKeyWithValue("by", "someone"), "another writer's label stays")
				g.Expect(ownership.Owns(owner, live)).To(BeTrue())
			}
		})
	}
}
