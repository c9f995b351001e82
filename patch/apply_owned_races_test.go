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

// Adversarial tests of the Applier's creation-only apply: a child applied with OwnedBy that the
// Applier never applied and its reader does not hold is sent with a resourceVersion precondition
// no object meets, and read through the API reader only when the API server refuses it. Each
// test puts another writer, or the API server's own rules, in the way of that sequence.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
)

// hookedReader reads through Reader, and lets a test act around each read: around gets the
// number of the call (from 1) and the read itself, and returns the read's error.
type hookedReader struct {
	client.Reader
	around func(n int, read func() error) error

	mu    sync.Mutex
	calls int
}

func (r *hookedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	read := func() error { return r.Reader.Get(ctx, key, obj, opts...) }
	if r.around == nil {
		return read()
	}
	return r.around(n, read)
}

// locked labels c as the admission policy of denyLocked refuses to let anyone write it.
func locked(c *corev1.ConfigMap) *corev1.ConfigMap {
	c.Labels["locked"] = "true"
	return c
}

// someonesConfigMap is a ConfigMap another writer creates, nobody's child.
func someonesConfigMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"by": "someone"}},
		Data:       map[string]string{"value": "theirs"},
	}
}

// deleteNow deletes obj, which has no finalizers, and waits until the API server no longer has it.
func deleteNow(g Gomega, obj client.Object) {
	ctx := context.Background()
	g.Expect(env.Client().Delete(ctx, obj)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
	}).Should(BeTrue())
}

// TestCreateOnlyApplyNeverTakesAnObjectThatAppearsAfterItsCheck puts another writer between the
// Applier's read (or adoption check) and the apply that follows it. Whatever the object is by
// then, it must be checked against the adoption policy before anything is written to it.
func TestCreateOnlyApplyNeverTakesAnObjectThatAppearsAfterItsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		// remote puts the child in another namespace than its owner: tracked, not referenced.
		remote bool
		policy ownership.AdoptionPolicy
		// appliedBefore has the Applier create the child, and someone delete it, first: the
		// Applier then reads before it applies.
		appliedBefore bool
		// existing is created before the Applier's apply, when set.
		existing bool
		// around runs the Applier's first read through the API reader; it deletes what exists,
		// and has someone (a person, or the rival controller) create the object of the name.
		around func(g Gomega, ns string, rival client.Object, read func() error) error
		// wantRival is whether the object left is the rival's (otherwise it is someone's).
		wantRival bool
	}{{
		name:   "refused as a creation, the object is replaced by an unowned one after the read found none, under AdoptNever",
		policy: ownership.AdoptNever, existing: true,
		around: func(g Gomega, ns string, _ client.Object, read func() error) error {
			deleteNow(g, someonesConfigMap(ns, "child"))
			err := read()
			g.Expect(env.Client().Create(context.Background(), someonesConfigMap(ns, "child"))).To(Succeed())
			return err
		},
	}, {
		name:   "refused as a creation, the object is replaced by a rival's tracked one after the read found none",
		remote: true, policy: ownership.AdoptIfUnowned, existing: true, wantRival: true,
		around: func(g Gomega, ns string, rival client.Object, read func() error) error {
			deleteNow(g, someonesConfigMap(ns, "child"))
			err := read()
			rivalApply(g, rival, someonesConfigMap(ns, "child"))
			return err
		},
	}, {
		name:   "applied before and deleted since, an unowned object appears after the read found none, under AdoptNever",
		policy: ownership.AdoptNever, appliedBefore: true,
		around: func(g Gomega, ns string, _ client.Object, read func() error) error {
			err := read()
			g.Expect(env.Client().Create(context.Background(), someonesConfigMap(ns, "child"))).To(Succeed())
			return err
		},
	}, {
		name:   "refused as a creation, the unowned object checked is replaced by a rival's tracked one before the apply",
		remote: true, policy: ownership.AdoptIfUnowned, existing: true, wantRival: true,
		around: func(g Gomega, ns string, rival client.Object, read func() error) error {
			err := read()
			deleteNow(g, someonesConfigMap(ns, "child"))
			rivalApply(g, rival, someonesConfigMap(ns, "child"))
			return err
		},
	}, {
		name:   "refused as a creation, the unowned object checked is replaced by a rival's referenced one before the apply",
		policy: ownership.AdoptIfUnowned, existing: true, wantRival: true,
		around: func(g Gomega, ns string, rival client.Object, read func() error) error {
			err := read()
			deleteNow(g, someonesConfigMap(ns, "child"))
			rivalApply(g, rival, someonesConfigMap(ns, "child"))
			return err
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			childNS := ns
			if tc.remote {
				childNS = env.Namespace(t)
			}
			owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
			api := &hookedReader{Reader: env.Client()}
			a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})
			desired := func() *corev1.ConfigMap { return ownedConfigMap(childNS, "child", "mine") }
			if tc.appliedBefore {
				_, err := a.Apply(ctx, desired(), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
				g.Expect(err).NotTo(HaveOccurred())
				deleteNow(g, desired())
			}
			if tc.existing {
				g.Expect(env.Client().Create(ctx, someonesConfigMap(childNS, "child"))).To(Succeed())
			}
			api.around = func(n int, read func() error) error {
				if n == 1 {
					return tc.around(g, childNS, rival, read)
				}
				return read()
			}

			_, err := a.Apply(ctx, desired(), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
			live := liveOf(g, desired()).(*corev1.ConfigMap)
			g.Expect(ownership.Owns(owner, live)).To(BeFalse(), "the object that appeared is not taken:\n%s", cmp.Diff(someonesConfigMap(childNS, "child").Labels, live.Labels))
			var refused *ownership.AdoptionError
			g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
			if tc.wantRival {
				g.Expect(ownership.Owns(rival, live)).To(BeTrue(), "the rival keeps its child")
				g.Expect(refused.Owner).NotTo(BeNil())
				g.Expect(refused.Owner.UID).To(Equal(rival.GetUID()))
			}
			g.Expect(live.Data).To(Equal(map[string]string{"value": "theirs"}), "nothing of the Applier's is written")
		})
	}
}

// rivalApply has the rival controller create child as its own.
func rivalApply(g Gomega, rival client.Object, child *corev1.ConfigMap) {
	_, err := patch.NewApplier(env.Client(), "rival-controller", patch.ApplierOptions{}).
		Apply(context.Background(), child, patch.OwnedBy(rival))
	g.Expect(err).NotTo(HaveOccurred())
}

// TestCreateOnlyApplyChecksWhatTheReadFindsAfterARefusal changes the object between the
// refused creation and the read that follows it: the read's answer is what the policy decides
// on, and a child that is gone by then is simply created.
func TestCreateOnlyApplyChecksWhatTheReadFindsAfterARefusal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remote bool
		// before runs right before the read: it deletes the existing object and may have the
		// rival create one.
		before    func(g Gomega, ns string, rival client.Object)
		wantRival bool
	}{{
		name:   "the object is deleted before the read: the child is created",
		before: func(g Gomega, ns string, _ client.Object) { deleteNow(g, someonesConfigMap(ns, "child")) },
	}, {
		name: "the object is replaced by a rival's referenced child before the read: refused",
		before: func(g Gomega, ns string, rival client.Object) {
			deleteNow(g, someonesConfigMap(ns, "child"))
			rivalApply(g, rival, someonesConfigMap(ns, "child"))
		},
		wantRival: true,
	}, {
		name: "the object is replaced by a rival's tracked child before the read: refused", remote: true,
		before: func(g Gomega, ns string, rival client.Object) {
			deleteNow(g, someonesConfigMap(ns, "child"))
			rivalApply(g, rival, someonesConfigMap(ns, "child"))
		},
		wantRival: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			childNS := ns
			if tc.remote {
				childNS = env.Namespace(t)
			}
			owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
			g.Expect(env.Client().Create(ctx, someonesConfigMap(childNS, "child"))).To(Succeed())
			var reads int
			api := &hookedReader{Reader: env.Client(), around: func(n int, read func() error) error {
				reads = n
				if n == 1 {
					tc.before(g, childNS, rival)
				}
				return read()
			}}
			writes := newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})

			changed, err := a.Apply(ctx, ownedConfigMap(childNS, "child", "mine"), patch.OwnedBy(owner), patch.ForceConflicts(true))
			live := liveOf(g, ownedConfigMap(childNS, "child", "")).(*corev1.ConfigMap)
			if tc.wantRival {
				var refused *ownership.AdoptionError
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
				g.Expect(refused.Owner).NotTo(BeNil())
				g.Expect(refused.Owner.UID).To(Equal(rival.GetUID()))
				g.Expect(ownership.Owns(rival, live)).To(BeTrue())
				g.Expect(live.Data).To(Equal(map[string]string{"value": "theirs"}))
				g.Expect(writes.take()).To(Equal(counts{"apply": 1}), "only the refused creation")
			} else {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeTrue())
				g.Expect(ownership.Owns(owner, live)).To(BeTrue())
				g.Expect(live.Labels).To(Equal(map[string]string{"app": "web"}), "a new object, nothing of the deleted one's")
				g.Expect(live.Data).To(Equal(map[string]string{"value": "mine"}))
				g.Expect(writes.take()).To(Equal(counts{"apply": 2}), "the refused creation, then the creation")
			}
			g.Expect(reads).To(Equal(1), "one read through the API reader")
		})
	}
}

// TestCreateOnlyApplyToAnObjectBeingDeleted applies a child whose name an object holds that is
// being deleted, held back by another writer's finalizer.
func TestCreateOnlyApplyToAnObjectBeingDeleted(t *testing.T) {
	const hold = "someone.example/hold"
	for _, tc := range []struct {
		name   string
		policy ownership.AdoptionPolicy
		// rival makes the object the rival's child.
		rival     bool
		wantTaken bool
	}{
		{name: "an unowned object under AdoptNever is refused", policy: ownership.AdoptNever},
		{name: "a rival's object under AdoptAlways is refused", policy: ownership.AdoptAlways, rival: true},
		{name: "an unowned object under AdoptIfUnowned is taken, and goes on being deleted", policy: ownership.AdoptIfUnowned, wantTaken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
			existing := someonesConfigMap(ns, "child")
			existing.Finalizers = []string{hold}
			if tc.rival {
				rivalApply(g, rival, existing)
			} else {
				g.Expect(env.Client().Create(ctx, existing)).To(Succeed())
			}
			t.Cleanup(func() {
				release := someonesConfigMap(ns, "child")
				_ = env.Client().Patch(context.Background(), release, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			})
			g.Expect(env.Client().Delete(ctx, someonesConfigMap(ns, "child"))).To(Succeed())
			before := liveOf(g, existing).(*corev1.ConfigMap)
			g.Expect(before.DeletionTimestamp).NotTo(BeNil())

			writes := newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: env.Client()})
			_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
			live := liveOf(g, existing).(*corev1.ConfigMap)
			g.Expect(live.DeletionTimestamp).NotTo(BeNil(), "still being deleted")
			g.Expect(live.Finalizers).To(Equal([]string{hold}), "the other writer's finalizer stays")
			g.Expect(live.Labels).To(HaveKeyWithValue("by", "someone"), "the other writer's label stays")
			if !tc.wantTaken {
				var refused *ownership.AdoptionError
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
				g.Expect(live.ResourceVersion).To(Equal(before.ResourceVersion), "nothing is written")
				g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ownership.Owns(owner, live)).To(BeTrue())
			g.Expect(live.Data).To(Equal(map[string]string{"value": "mine"}))
			g.Expect(writes.take()).To(Equal(counts{"apply": 2}))
		})
	}
}

// TestCreateOnlyApplyRefusesAChildAnotherControllerHolds covers the kinds and marks a rival's
// child can have when the Applier's reader does not hold it: under every policy that could
// take an unowned object, the rival's stays the rival's, with nothing written.
func TestCreateOnlyApplyRefusesAChildAnotherControllerHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		// child returns the child, in ns (the owner's) or remote.
		child func(ns, remote string) client.Object
		// shared gives the rival an owner reference without the controller flag instead.
		shared bool
	}{{
		name:  "a ConfigMap the rival references",
		child: func(ns, _ string) client.Object { return ownedConfigMap(ns, "child", "theirs") },
	}, {
		name:  "a ConfigMap the rival tracks in another namespace",
		child: func(_, remote string) client.Object { return ownedConfigMap(remote, "child", "theirs") },
	}, {
		name: "a cluster-scoped Fixture the rival tracks",
		child: func(_, remote string) client.Object {
			return &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: remote + "-fixture"}, Spec: testtypes.WidgetSpec{Size: "theirs"}}
		},
	}, {
		name: "a Widget the rival references",
		child: func(ns, _ string) client.Object {
			return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}, Spec: testtypes.WidgetSpec{Size: "theirs"}}
		},
	}, {
		name:  "a ConfigMap with the rival's owner reference without the controller flag, under AdoptIfUnowned",
		child: func(ns, _ string) client.Object { return ownedConfigMap(ns, "child", "theirs") }, shared: true,
	}} {
		policies := []ownership.AdoptionPolicy{ownership.AdoptIfUnowned, ownership.AdoptAlways}
		if tc.shared {
			policies = policies[:1]
		}
		for _, policy := range policies {
			t.Run(tc.name+"/"+string(policy), func(t *testing.T) {
				g := NewWithT(t)
				ctx := t.Context()
				ns, remote := env.Namespace(t), env.Namespace(t)
				owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
				theirs := tc.child(ns, remote)
				if theirs.GetNamespace() == "" {
					t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), theirs)) })
				}
				if tc.shared {
					g.Expect(controllerutil.SetOwnerReference(rival, theirs, env.Scheme())).To(Succeed())
					g.Expect(env.Client().Create(ctx, theirs)).To(Succeed())
				} else {
					_, err := patch.NewApplier(env.Client(), "rival-controller", patch.ApplierOptions{}).Apply(ctx, theirs, patch.OwnedBy(rival))
					g.Expect(err).NotTo(HaveOccurred())
				}
				before := liveOf(g, theirs)

				api, writes := newCountingClient(t), newCountingClient(t)
				a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})
				mine := tc.child(ns, remote)
				mine.SetLabels(map[string]string{"app": "mine"})
				_, err := a.Apply(ctx, mine, patch.OwnedBy(owner, policy), patch.ForceConflicts(true))
				var refused *ownership.AdoptionError
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
				if tc.shared {
					g.Expect(refused.Owner).To(BeNil())
					g.Expect(refused.OwnerReferences).To(HaveLen(1))
					g.Expect(refused.OwnerReferences[0].UID).To(Equal(rival.GetUID()))
				} else {
					g.Expect(refused.Owner).NotTo(BeNil())
					g.Expect(refused.Owner.UID).To(Equal(rival.GetUID()))
					g.Expect(err.Error()).To(ContainSubstring("rival"), "the error names the rival")
				}
				g.Expect(writes.take()).To(Equal(counts{"apply": 1}), "only the refused creation")
				g.Expect(api.take()).To(Equal(counts{"get": 1}))
				after := liveOf(g, theirs)
				g.Expect(after.GetResourceVersion()).To(Equal(before.GetResourceVersion()), "nothing is written")
				g.Expect(mine.GetLabels()).To(Equal(map[string]string{"app": "mine"}), "on error obj is not modified")
			})
		}
	}
}

// TestCreateOnlyApplyAdoptsWithoutRemovingAnotherWritersFields adopts, under AdoptIfUnowned,
// an unowned custom resource with a status subresource that another writer created and wrote
// the status of: its spec fields and status stay.
func TestCreateOnlyApplyAdoptsWithoutRemovingAnotherWritersFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		child func(ns string) client.Object
	}{
		{"a namespaced Widget", func(ns string) client.Object {
			return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}}
		}},
		{"a cluster-scoped Fixture", func(ns string) client.Object {
			return &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: ns + "-child"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			theirs := &unstructured.Unstructured{}
			theirs.SetGroupVersionKind(testtypes.GroupVersion.WithKind(kindName(tc.child(ns))))
			theirs.SetNamespace(tc.child(ns).GetNamespace())
			theirs.SetName(tc.child(ns).GetName())
			theirs.SetLabels(map[string]string{"by": "someone"})
			g.Expect(unstructured.SetNestedField(theirs.Object, int64(3), "spec", "replicas")).To(Succeed())
			g.Expect(unstructured.SetNestedField(theirs.Object, "blue", "spec", "color")).To(Succeed())
			g.Expect(env.Client().Create(ctx, theirs)).To(Succeed())
			if theirs.GetNamespace() == "" {
				t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), theirs)) })
			}
			g.Expect(unstructured.SetNestedField(theirs.Object, "Running", "status", "phase")).To(Succeed())
			g.Expect(env.Client().Status().Update(ctx, theirs)).To(Succeed())

			writes := newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: env.Client()})
			mine := tc.child(ns)
			mine.SetLabels(map[string]string{"app": "mine"})
			setSize(mine, "large")
			changed, err := a.Apply(ctx, mine, patch.OwnedBy(owner), patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(writes.take()).To(Equal(counts{"apply": 2}), "the refused creation, then the adoption")

			live := liveOf(g, theirs).(*unstructured.Unstructured)
			g.Expect(ownership.Owns(owner, live)).To(BeTrue())
			spec, _, _ := unstructured.NestedMap(live.Object, "spec")
			g.Expect(spec).To(Equal(map[string]any{"replicas": int64(3), "color": "blue", "size": "large"}), "the other writer's spec fields stay")
			phase, _, _ := unstructured.NestedString(live.Object, "status", "phase")
			g.Expect(phase).To(Equal("Running"), "the status stays")
			g.Expect(live.GetLabels()).To(And(HaveKeyWithValue("by", "someone"), HaveKeyWithValue("app", "mine")))
		})
	}
}

// kindName returns the kind of a testtypes object.
func kindName(obj client.Object) string {
	if _, ok := obj.(*testtypes.Fixture); ok {
		return "Fixture"
	}
	return "Widget"
}

// setSize sets spec.size of a Widget or Fixture.
func setSize(obj client.Object, size string) {
	switch o := obj.(type) {
	case *testtypes.Widget:
		o.Spec.Size = size
	case *testtypes.Fixture:
		o.Spec.Size = size
	}
}

// TestCreateOnlyApplyRemembersNothingOfARefusal applies a child the policy refuses twice, then
// once more after a person deleted the object in the way: the Applier's memory of applies
// holds nothing of the refusals, so the child is then created as any other, for its apply alone.
func TestCreateOnlyApplyRemembersNothingOfARefusal(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	g.Expect(env.Client().Create(ctx, someonesConfigMap(ns, "child"))).To(Succeed())
	api, writes := newCountingClient(t), newCountingClient(t)
	a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})

	for range 2 {
		_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner, ownership.AdoptNever))
		var refused *ownership.AdoptionError
		g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
		g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
		g.Expect(api.take()).To(Equal(counts{"get": 1}))
	}

	deleteNow(g, someonesConfigMap(ns, "child"))
	changed, err := a.Apply(ctx, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner, ownership.AdoptNever))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
	g.Expect(api.take()).To(BeEmpty(), "created without a read")
	live := liveOf(g, ownedConfigMap(ns, "child", "")).(*corev1.ConfigMap)
	g.Expect(ownership.Owns(owner, live)).To(BeTrue())
	g.Expect(live.Labels).To(Equal(map[string]string{"app": "web"}))

	changed, err = a.Apply(ctx, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner, ownership.AdoptNever))
	g.Expect(err).NotTo(HaveOccurred(), "the Applier's own child is no adoption")
	g.Expect(changed).To(BeFalse())
	g.Expect(writes.take()).To(BeEmpty())
	g.Expect(api.take()).To(Equal(counts{"get": 1}))
}

// denyLocked makes the API server deny, in namespace ns, the creation and update of a ConfigMap
// labelled "locked" with a ValidatingAdmissionPolicy, and waits until it does. It returns the
// policy's name, which the denial names.
func denyLocked(t *testing.T, ns string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	name := "deny-locked-" + ns
	forbidden := metav1.StatusReasonForbidden
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: "!has(object.metadata.labels) || !('locked' in object.metadata.labels)",
				Message:    "ConfigMaps labelled locked are read-only",
				Reason:     &forbidden,
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		g.Expect(env.Client().Create(ctx, obj)).To(Succeed())
		t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), obj)) })
	}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe", Labels: map[string]string{"locked": "true"}}}
	// The API server's admission learns of a new policy through its informer: seconds on a
	// loaded machine.
	g.Eventually(func() bool {
		return apierrors.IsForbidden(env.Client().Create(ctx, probe.DeepCopy(), client.DryRunAll))
	}).WithTimeout(30*time.Second).Should(BeTrue(), "the API server enforces the policy")
	return name
}

// exhaustQuota makes the API server refuse every new ConfigMap in namespace ns with a
// ResourceQuota that allows none, and waits until it does.
func exhaustQuota(t *testing.T, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	none := corev1.ResourceList{"count/configmaps": resource.MustParse("0")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "none"}, Spec: corev1.ResourceQuotaSpec{Hard: none}}
	g.Expect(env.Client().Create(ctx, quota)).To(Succeed())
	// No quota controller runs in the test environment: write the status it would.
	quota.Status = corev1.ResourceQuotaStatus{Hard: none, Used: none}
	g.Expect(env.Client().Status().Update(ctx, quota)).To(Succeed())
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
	g.Eventually(func() error {
		return env.Client().Create(ctx, probe.DeepCopy(), client.DryRunAll)
	}).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("exceeded quota")))
}

// TestCreateOnlyApplyKeepsTheClassOfTheAPIServersRefusal has the API server refuse the apply
// for a reason of its own, with or without an object of the child's name: the caller gets
// that refusal, of its class, naming what is wrong, and never a conflict the precondition
// caused or an adoption that did not happen.
func TestCreateOnlyApplyKeepsTheClassOfTheAPIServersRefusal(t *testing.T) {
	for _, tc := range []struct {
		name string
		// existing, when set, is created in namespace ns first; then setup prepares ns.
		setup    func(t *testing.T, ns string) (setting string)
		existing func(ns string) client.Object
		// desired is the child the Applier applies in ns.
		desired func(ns string) client.Object
		policy  ownership.AdoptionPolicy
		noForce bool
		// is is the class of the error; contains are substrings of its message ({setting} is
		// what setup returned).
		is       func(error) bool
		contains []string
		// wantAdoptionError expects an *ownership.AdoptionError instead.
		wantAdoptionError bool
	}{{
		name: "an invalid label value on creation is Invalid and names the field",
		desired: func(ns string) client.Object {
			c := ownedConfigMap(ns, "child", "mine")
			c.Labels["tier"] = "not a label value!"
			return c
		},
		is:       apierrors.IsInvalid,
		contains: []string{"metadata.labels", "not a label value!"},
	}, {
		name: "a custom resource field of the wrong type on creation names the field",
		desired: func(ns string) client.Object {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": "many"}}}
			u.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
			u.SetNamespace(ns)
			u.SetName("child")
			return u
		},
		is:       isUntypeable,
		contains: []string{".spec.replicas", "expected numeric"},
	}, {
		// The API server types an apply before it checks the precondition: the caller learns
		// what is wrong with its request rather than what the policy thinks of the object.
		name: "a custom resource field of the wrong type names the field, even when an object of the name exists",
		existing: func(ns string) client.Object {
			return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}}
		},
		desired: func(ns string) client.Object {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": "many"}}}
			u.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
			u.SetNamespace(ns)
			u.SetName("child")
			return u
		},
		policy:   ownership.AdoptNever,
		is:       isUntypeable,
		contains: []string{".spec.replicas", "expected numeric"},
	}, {
		name:     "a child in a namespace that does not exist is NotFound",
		desired:  func(ns string) client.Object { return ownedConfigMap(ns+"-missing", "child", "mine") },
		is:       apierrors.IsNotFound,
		contains: []string{"-missing"},
	}, {
		name:     "a quota that allows no more ConfigMaps is Forbidden on creation",
		setup:    func(t *testing.T, ns string) string { exhaustQuota(t, ns); return "exceeded quota" },
		desired:  func(ns string) client.Object { return ownedConfigMap(ns, "child", "mine") },
		is:       apierrors.IsForbidden,
		contains: []string{"{setting}", "count/configmaps"},
	}, {
		name:     "an admission policy that denies the creation is Forbidden",
		setup:    denyLocked,
		desired:  func(ns string) client.Object { return locked(ownedConfigMap(ns, "child", "mine")) },
		is:       apierrors.IsForbidden,
		contains: []string{"{setting}", "read-only"},
	}, {
		name:     "an admission policy that denies the update of the object adopted is Forbidden",
		setup:    denyLocked,
		existing: func(ns string) client.Object { return locked(someonesConfigMap(ns, "child")) },
		desired:  func(ns string) client.Object { return ownedConfigMap(ns, "child", "mine") },
		is:       apierrors.IsForbidden,
		contains: []string{"{setting}", "read-only"},
	}, {
		name:     "an admission policy that would deny the update does not hide the refusal of AdoptNever",
		setup:    denyLocked,
		existing: func(ns string) client.Object { return locked(someonesConfigMap(ns, "child")) },
		desired:  func(ns string) client.Object { return ownedConfigMap(ns, "child", "mine") },
		policy:   ownership.AdoptNever, wantAdoptionError: true,
	}, {
		name: "the data of an immutable ConfigMap adopted is Invalid and names the field",
		existing: func(ns string) client.Object {
			c := someonesConfigMap(ns, "child")
			c.Immutable = ptr.To(true)
			return c
		},
		desired:  func(ns string) client.Object { return ownedConfigMap(ns, "child", "mine") },
		is:       apierrors.IsInvalid,
		contains: []string{"data", "immutable"},
	}, {
		name:     "a field another manager set, without ForceConflicts, is a conflict that names the field",
		existing: func(ns string) client.Object { return someonesConfigMap(ns, "child") },
		desired:  func(ns string) client.Object { return ownedConfigMap(ns, "child", "mine") },
		noForce:  true,
		is:       apierrors.IsConflict,
		contains: []string{".data.value"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			var before client.Object
			if tc.existing != nil {
				existing := tc.existing(ns)
				g.Expect(env.Client().Create(ctx, existing)).To(Succeed())
				before = liveOf(g, existing)
			}
			var setting string
			if tc.setup != nil {
				setting = tc.setup(t, ns)
			}
			api, writes := newCountingClient(t), newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})
			policy := tc.policy
			if policy == "" {
				policy = ownership.AdoptIfUnowned
			}

			_, err := a.Apply(ctx, tc.desired(ns), patch.OwnedBy(owner, policy), patch.ForceConflicts(!tc.noForce))
			g.Expect(err).To(HaveOccurred())
			var refused *ownership.AdoptionError
			if tc.wantAdoptionError {
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
			} else {
				g.Expect(errors.As(err, &refused)).To(BeFalse(), "no adoption error: %v", err)
				g.Expect(tc.is(err)).To(BeTrue(), "the class of %v (reason %s)", err, apierrors.ReasonForError(err))
				if !tc.noForce {
					g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "not a conflict: %v", err)
				}
				for _, want := range tc.contains {
					if want == "{setting}" {
						want = setting
					}
					g.Expect(err.Error()).To(ContainSubstring(want))
				}
				g.Expect(err.Error()).NotTo(ContainSubstring("the object has been modified"), "not the precondition's refusal")
			}
			t.Logf("%v; requests: %v %v", err, writes.take(), api.take())
			if before == nil {
				g.Expect(apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(tc.desired(ns)), tc.desired(ns)))).To(BeTrue(), "nothing is created")
				return
			}
			after := liveOf(g, before)
			g.Expect(after.GetResourceVersion()).To(Equal(before.GetResourceVersion()), "nothing is written")
		})
	}
}

// isUntypeable reports whether err is the API server's refusal of an apply it cannot type
// against the kind's schema: a 500 without a reason.
func isUntypeable(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 500 && strings.Contains(err.Error(), "failed to create typed patch object")
}

// TestTwoReplicasCreatingTheSameChildAtOnce runs the creation of the same children from two
// Appliers at once, each with a reader that does not hold them, as two replicas of a
// controller (or two controllers) that both just started would.
func TestTwoReplicasCreatingTheSameChildAtOnce(t *testing.T) {
	const children = 8
	for _, tc := range []struct {
		name string
		// rivals gives the second Applier another owner and field manager: another controller.
		rivals bool
		policy ownership.AdoptionPolicy
	}{
		{name: "two replicas of one controller, under AdoptNever, both succeed", policy: ownership.AdoptNever},
		{name: "two controllers, under AdoptIfUnowned, one takes each child and the other is refused", rivals: true, policy: ownership.AdoptIfUnowned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owners := []client.Object{newOwner(t, ns, "owner"), nil}
			managers := []string{"tenon-test", "tenon-test"}
			owners[1] = owners[0]
			if tc.rivals {
				owners[1], managers[1] = newOwner(t, ns, "rival"), "rival-controller"
			}
			appliers := make([]*patch.Applier, 2)
			for i := range appliers {
				appliers[i] = patch.NewApplier(newCountingClient(t), managers[i], patch.ApplierOptions{Reader: laggingReader{}, APIReader: env.Client()})
			}
			errs := make([][2]error, children)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c := range children {
				for i := range 2 {
					wg.Go(func() {
						<-start
						desired := ownedConfigMap(ns, fmt.Sprintf("child-%d", c), managers[i])
						_, errs[c][i] = appliers[i].Apply(ctx, desired, patch.OwnedBy(owners[i], tc.policy), patch.ForceConflicts(true))
					})
				}
			}
			close(start)
			wg.Wait()

			for c := range children {
				live := liveOf(g, ownedConfigMap(ns, fmt.Sprintf("child-%d", c), "")).(*corev1.ConfigMap)
				g.Expect(live.OwnerReferences).To(HaveLen(1), "one owner reference on child-%d", c)
				if !tc.rivals {
					g.Expect(errs[c][0]).NotTo(HaveOccurred())
					g.Expect(errs[c][1]).NotTo(HaveOccurred())
					g.Expect(ownership.Owns(owners[0], live)).To(BeTrue())
					continue
				}
				winner := slices.IndexFunc(owners, func(o client.Object) bool { return ownership.Owns(o, live) })
				g.Expect(winner).NotTo(Equal(-1), "child-%d has one of the two owners", c)
				g.Expect(errs[c][winner]).NotTo(HaveOccurred())
				var refused *ownership.AdoptionError
				g.Expect(errors.As(errs[c][1-winner], &refused)).To(BeTrue(), "want an *ownership.AdoptionError for the loser of child-%d, got %v", c, errs[c][1-winner])
				g.Expect(refused.Owner.UID).To(Equal(owners[winner].GetUID()))
				g.Expect(live.Data).To(Equal(map[string]string{"value": managers[winner]}), "the winner's data, nothing of the loser's")
			}
		})
	}
}

// TestCreateOnlyApplyRereadsAnObjectThatChangedSinceItsRead counts the requests of an apply
// whose object another writer changes between the Applier's read and its apply: the apply is
// refused and the object read again, a bounded number of times, and a conflict over a field
// another manager owns is returned at once.
func TestCreateOnlyApplyRereadsAnObjectThatChangedSinceItsRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		// changes is how many reads another writer follows with a change of the object.
		changes int
		noForce bool
		// wantConflict expects the error to be a conflict; otherwise the child is adopted.
		wantConflict bool
		wantApplies  int
		wantReads    int
	}{
		{name: "changed after the first read: read again and adopted", changes: 1, wantApplies: 3, wantReads: 2},
		{name: "changed after every read: a conflict after three applies", changes: 99, wantConflict: true, wantApplies: 3, wantReads: 2},
		{name: "a field another manager owns: the conflict at once", noForce: true, wantConflict: true, wantApplies: 2, wantReads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			g.Expect(env.Client().Create(ctx, someonesConfigMap(ns, "child"))).To(Succeed())
			api := &hookedReader{Reader: env.Client(), around: func(n int, read func() error) error {
				err := read()
				if n <= tc.changes {
					change := someonesConfigMap(ns, "child")
					body := fmt.Sprintf(`{"metadata":{"annotations":{"change":"%d"}}}`, n)
					g.Expect(env.Client().Patch(context.Background(), change, client.RawPatch(types.MergePatchType, []byte(body)))).To(Succeed())
				}
				return err
			}}
			writes := newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})

			_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner), patch.ForceConflicts(!tc.noForce))
			live := liveOf(g, someonesConfigMap(ns, "child")).(*corev1.ConfigMap)
			g.Expect(writes.take()).To(Equal(counts{"apply": tc.wantApplies}))
			g.Expect(api.calls).To(Equal(tc.wantReads))
			if tc.wantConflict {
				g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
				g.Expect(ownership.Owns(owner, live)).To(BeFalse())
				g.Expect(live.Data).To(Equal(map[string]string{"value": "theirs"}))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ownership.Owns(owner, live)).To(BeTrue())
			g.Expect(live.Annotations).To(HaveKeyWithValue("change", "1"), "the other writer's change stays")
		})
	}
}

// heldReader is a cache that lags: it holds the objects put in it, as they were when put.
type heldReader struct {
	client.Reader
	held map[client.ObjectKey]client.Object
}

func (r heldReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	held, ok := r.held[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	return env.Scheme().Convert(held.DeepCopyObject(), obj, nil)
}

// appliedChild applies desired with opts (OwnedBy among them) through a fresh Applier, as the
// Applier under test once did, and returns the child as the API server then has it: what a
// reader that lags goes on holding.
func appliedChild(g Gomega, desired client.Object, opts ...patch.ApplyCallOption) client.Object {
	first := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
	_, err := first.Apply(context.Background(), desired, opts...)
	g.Expect(err).NotTo(HaveOccurred())
	return liveOf(g, desired)
}

// TestOwnedByNeverTakesAnObjectThatReplacedTheOneItsReaderHolds has the Applier's reader, a
// cache that lags, hold the owner's child as it was applied, while on the API server the child
// is gone, or another writer's object of the same name has replaced it. The check passes on
// what the reader holds; the apply must not change any other object than that one.
func TestOwnedByNeverTakesAnObjectThatReplacedTheOneItsReaderHolds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    ownership.AdoptionPolicy
		apiReader bool
		// replace puts in place of the deleted child: someone's object, a rival's child, or
		// nothing.
		replace string
		// want is "conflict", "refused" (an AdoptionError), "adopted" or "created".
		want        string
		wantApplies int
		wantReads   int
	}{
		{name: "replaced by someone's object, without an API reader, under AdoptNever", policy: ownership.AdoptNever, replace: "someone", want: "conflict", wantApplies: 1},
		{name: "replaced by someone's object, without an API reader, under AdoptIfUnowned", policy: ownership.AdoptIfUnowned, replace: "someone", want: "conflict", wantApplies: 1},
		{name: "replaced by a rival's child, without an API reader", policy: ownership.AdoptIfUnowned, replace: "rival", want: "conflict", wantApplies: 1},
		{name: "deleted since, without an API reader", policy: ownership.AdoptIfUnowned, want: "conflict", wantApplies: 1},
		{name: "replaced by someone's object, under AdoptNever: read and refused", policy: ownership.AdoptNever, apiReader: true, replace: "someone", want: "refused", wantApplies: 1, wantReads: 1},
		{name: "replaced by a rival's child: read and refused", policy: ownership.AdoptIfUnowned, apiReader: true, replace: "rival", want: "refused", wantApplies: 1, wantReads: 1},
		{name: "replaced by someone's object, under AdoptIfUnowned: read, checked and adopted", policy: ownership.AdoptIfUnowned, apiReader: true, replace: "someone", want: "adopted", wantApplies: 2, wantReads: 1},
		{name: "deleted since: read, found gone and created", policy: ownership.AdoptNever, apiReader: true, want: "created", wantApplies: 2, wantReads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			rival := newOwner(t, ns, "rival")
			key := client.ObjectKey{Namespace: ns, Name: "child"}

			// The child as the Applier applied it, and as its reader goes on holding it.
			held := appliedChild(g, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
			deleteNow(g, held)
			switch tc.replace {
			case "someone":
				g.Expect(env.Client().Create(ctx, someonesConfigMap(ns, "child"))).To(Succeed())
			case "rival":
				rivalApply(g, rival, someonesConfigMap(ns, "child"))
			}
			var before client.Object
			if tc.replace != "" {
				before = liveOf(g, someonesConfigMap(ns, "child"))
			}

			writes := newCountingClient(t)
			opts := patch.ApplierOptions{Reader: heldReader{held: map[client.ObjectKey]client.Object{key: held}}}
			api := &hookedReader{Reader: env.Client()}
			if tc.apiReader {
				opts.APIReader = api
			}
			a := patch.NewApplier(writes, "tenon-test", opts)
			// A change, so that what the reader holds cannot prove the apply needless.
			_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "changed"), patch.OwnedBy(owner, tc.policy), patch.ForceConflicts(true))
			g.Expect(writes.take()).To(Equal(counts{"apply": tc.wantApplies}))
			g.Expect(api.calls).To(Equal(tc.wantReads))

			live := &corev1.ConfigMap{}
			getErr := env.Client().Get(ctx, key, live)
			switch tc.want {
			case "conflict", "refused":
				if tc.want == "conflict" {
					g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
				} else {
					var refused *ownership.AdoptionError
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an AdoptionError, got %v", err)
				}
				if tc.replace == "" {
					g.Expect(apierrors.IsNotFound(getErr)).To(BeTrue(), "nothing is created in place of the object held: %v", getErr)
					return
				}
				g.Expect(getErr).NotTo(HaveOccurred())
				g.Expect(live.ResourceVersion).To(Equal(before.GetResourceVersion()), "the object that replaced the child is not written")
				g.Expect(ownership.Owns(owner, live)).To(BeFalse())
			case "adopted", "created":
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(getErr).NotTo(HaveOccurred())
				g.Expect(ownership.Owns(owner, live)).To(BeTrue())
				g.Expect(live.Data).To(Equal(map[string]string{"value": "changed"}))
				if tc.want == "adopted" {
					g.Expect(live.UID).To(Equal(before.GetUID()))
					g.Expect(live.Labels).To(HaveKeyWithValue("by", "someone"), "another writer's label stays")
				} else {
					g.Expect(live.UID).NotTo(Equal(held.GetUID()))
				}
			}
		})
	}
}

// TestOwnedByAppliesToTheObjectItsReaderHoldsInOneRequest is the control of the test above: a
// reader that holds the object as the API server has it costs one apply, uid and all.
func TestOwnedByAppliesToTheObjectItsReaderHoldsInOneRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	held := appliedChild(g, ownedConfigMap(ns, "child", "mine"), patch.OwnedBy(owner), patch.ForceConflicts(true))

	writes := newCountingClient(t)
	api := &hookedReader{Reader: env.Client()}
	a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{
		Reader: heldReader{held: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(held): held}}, APIReader: api,
	})
	changed, err := a.Apply(ctx, ownedConfigMap(ns, "child", "changed"), patch.OwnedBy(owner), patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
	g.Expect(api.calls).To(BeZero())
	live := liveOf(g, held).(*corev1.ConfigMap)
	g.Expect(live.UID).To(Equal(held.GetUID()))
	g.Expect(live.Data).To(Equal(map[string]string{"value": "changed"}))
}
