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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// newOwner creates a Widget in ns, or a cluster-scoped Fixture when ns is empty, and returns it
// as the API server has it.
func newOwner(t *testing.T, ns, name string) client.Object {
	t.Helper()
	var owner client.Object = &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if ns == "" {
		owner = &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: name}}
		t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), owner)) })
	}
	if err := env.Client().Create(t.Context(), owner); err != nil {
		t.Fatalf("failed to create the owner: %v", err)
	}
	return owner
}

// ownedConfigMap is a desired ConfigMap, built from scratch as a controller does.
func ownedConfigMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Data:       map[string]string{"value": value},
	}
}

// liveOf reads obj's live state from the API server into a new object of its type.
func liveOf(g Gomega, obj client.Object) client.Object {
	live := obj.DeepCopyObject().(client.Object)
	g.Expect(env.Client().Get(context.Background(), client.ObjectKeyFromObject(obj), live)).To(Succeed())
	return live
}

func TestOwnedByAppliesAnOwnedChildInOneCall(t *testing.T) {
	type desiredFunc func(ns, remote, value string) client.Object
	for _, tc := range []struct {
		name string
		// ownerNamespace is "ns" for a Widget in the test's namespace, "" for a cluster-scoped
		// Fixture.
		ownerNamespace string
		desired        desiredFunc
		want           ownership.Mechanism
	}{{
		name: "a ConfigMap next to its owner gets an owner reference", ownerNamespace: "ns",
		desired: func(ns, _, v string) client.Object { return ownedConfigMap(ns, "local", v) },
		want:    ownership.ControllerReference,
	}, {
		name: "a ConfigMap in another namespace is tracked", ownerNamespace: "ns",
		desired: func(_, remote, v string) client.Object { return ownedConfigMap(remote, "remote", v) },
		want:    ownership.TrackingLabels,
	}, {
		name: "a cluster-scoped child of a namespaced owner is tracked", ownerNamespace: "ns",
		desired: func(ns, _, v string) client.Object {
			return &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: ns + "-fixture"}, Spec: testtypes.WidgetSpec{Size: v}}
		},
		want: ownership.TrackingLabels,
	}, {
		name: "a custom resource next to its owner gets an owner reference", ownerNamespace: "ns",
		desired: func(ns, _, v string) client.Object {
			return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}, Spec: testtypes.WidgetSpec{Size: v}}
		},
		want: ownership.ControllerReference,
	}, {
		name: "a child of a cluster-scoped owner gets an owner reference in any namespace", ownerNamespace: "",
		desired: func(_, remote, v string) client.Object { return ownedConfigMap(remote, "child", v) },
		want:    ownership.ControllerReference,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns, remote := env.Namespace(t), env.Namespace(t)
			ownerNamespace := ""
			if tc.ownerNamespace != "" {
				ownerNamespace = ns
			}
			owner := newOwner(t, ownerNamespace, "owner-"+remote)
			if child, ok := tc.desired(ns, remote, "").(*testtypes.Fixture); ok {
				t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), child)) })
			}
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

			obj := tc.desired(ns, remote, "1")
			changed, err := a.Apply(ctx, obj, patch.OwnedBy(owner))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}), "one read, one write")
			got, ok := ownership.OwnerOf(liveOf(g, obj))
			g.Expect(ok).To(BeTrue())
			g.Expect(got.UID).To(Equal(owner.GetUID()))
			g.Expect(got.Mechanism).To(Equal(tc.want))
			g.Expect(ownership.Owns(owner, obj)).To(BeTrue(), "obj holds the live object")
			if tc.want == ownership.ControllerReference {
				ref := metav1.GetControllerOf(obj)
				g.Expect(ref.BlockOwnerDeletion).To(Equal(ptr.To(true)), "BlockOwnerDeletion defaults to true")
			}

			// Nothing changed: no write, from the Applier's memory or, after a restart, from the
			// live object's managedFields.
			for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
				changed, err = applier.Apply(ctx, tc.desired(ns, remote, "1"), patch.OwnedBy(owner))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeFalse())
				g.Expect(c.take()).To(Equal(counts{"get": 1}))
			}

			// A change is one write, and the child stays owned.
			obj = tc.desired(ns, remote, "2")
			changed, err = a.Apply(ctx, obj, patch.OwnedBy(owner))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}))
			g.Expect(ownership.Owns(owner, liveOf(g, obj))).To(BeTrue())
		})
	}
}

func TestOwnedByAppliesAnApplyConfiguration(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	desired := func(v string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap("entry", remote).WithLabels(map[string]string{"app": "web"}).WithData(map[string]string{"value": v})
	}

	ac := desired("1")
	changed, err := a.ApplyConfiguration(ctx, ac, patch.OwnedBy(owner))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}))
	g.Expect(ac.Labels).To(HaveKeyWithValue(ownership.LabelOwnerUID, string(owner.GetUID())), "ac holds the live object, tracked")
	g.Expect(ac.UID).NotTo(BeNil())

	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		changed, err = applier.ApplyConfiguration(ctx, desired("1"), patch.OwnedBy(owner))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(c.take()).To(Equal(counts{"get": 1}))
	}

	// A typed object with the same fields and owner is the same request: nothing to send.
	changed, err = a.Apply(ctx, ownedConfigMap(remote, "entry", "1"), patch.OwnedBy(owner))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}))
}

// outcomeOfApply is what an Apply with OwnedBy does with an existing child.
type outcomeOfApply int

const (
	applyTakes outcomeOfApply = iota
	applyRefusesUnowned
	applyRefusesOwned
)

func TestOwnedByNeverTakesAChildOwnedElsewhere(t *testing.T) {
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	rival := newOwner(t, ns, "rival")
	rivalApplier := patch.NewApplier(env.Client(), "rival-controller", patch.ApplierOptions{})

	// Each state makes a child as someone else left it; the owner then applies it.
	states := []struct {
		name      string
		namespace string
		make      func(g Gomega, child *corev1.ConfigMap)
		never     outcomeOfApply
		unown     outcomeOfApply
		always    outcomeOfApply
	}{{
		name: "unowned", namespace: ns,
		make:  func(g Gomega, child *corev1.ConfigMap) { g.Expect(env.Client().Create(ctx, child)).To(Succeed()) },
		never: applyRefusesUnowned, unown: applyTakes, always: applyTakes,
	}, {
		name: "shared", namespace: ns,
		make: func(g Gomega, child *corev1.ConfigMap) {
			g.Expect(controllerutil.SetOwnerReference(rival, child, env.Scheme())).To(Succeed())
			g.Expect(env.Client().Create(ctx, child)).To(Succeed())
		},
		never: applyRefusesUnowned, unown: applyRefusesUnowned, always: applyTakes,
	}, {
		name: "controlled", namespace: ns,
		make: func(g Gomega, child *corev1.ConfigMap) {
			_, err := rivalApplier.Apply(ctx, child, patch.OwnedBy(rival))
			g.Expect(err).NotTo(HaveOccurred())
		},
		never: applyRefusesOwned, unown: applyRefusesOwned, always: applyRefusesOwned,
	}, {
		name: "tracked", namespace: remote,
		make: func(g Gomega, child *corev1.ConfigMap) {
			_, err := rivalApplier.Apply(ctx, child, patch.OwnedBy(rival))
			g.Expect(err).NotTo(HaveOccurred())
		},
		never: applyRefusesOwned, unown: applyRefusesOwned, always: applyRefusesOwned,
	}}
	for _, state := range states {
		for _, p := range []struct {
			policy ownership.AdoptionPolicy
			want   outcomeOfApply
		}{{ownership.AdoptNever, state.never}, {ownership.AdoptIfUnowned, state.unown}, {ownership.AdoptAlways, state.always}} {
			t.Run(state.name+"/"+string(p.policy), func(t *testing.T) {
				g := NewWithT(t)
				name := strings.ToLower(fmt.Sprintf("%s-%s", state.name, p.policy))
				state.make(g, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: state.namespace, Name: name}, Data: map[string]string{"by": "someone else"}})
				before := liveOf(g, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: state.namespace, Name: name}}).(*corev1.ConfigMap)
				c := newCountingClient(t)
				a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

				obj := ownedConfigMap(state.namespace, name, "mine")
				_, err := a.Apply(ctx, obj, patch.OwnedBy(owner, p.policy), patch.ForceConflicts(true))

				now := liveOf(g, before).(*corev1.ConfigMap)
				var refused *ownership.AdoptionError
				switch p.want {
				case applyTakes:
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(ownership.Owns(owner, now)).To(BeTrue())
					g.Expect(ownership.Owns(rival, now)).To(BeFalse())
					g.Expect(now.OwnerReferences).To(ContainElements(before.OwnerReferences), "other owners' references stay")
					g.Expect(now.Data).To(HaveKeyWithValue("value", "mine"))
					return
				case applyRefusesUnowned:
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
					g.Expect(refused.Owner).To(BeNil())
					g.Expect(refused.Policy).To(Equal(p.policy))
				case applyRefusesOwned:
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
					g.Expect(refused.Owner).NotTo(BeNil())
					g.Expect(refused.Owner.UID).To(Equal(rival.GetUID()))
				}
				g.Expect(err).To(MatchError(ContainSubstring("failed to apply ConfigMap " + state.namespace + "/" + name)))
				g.Expect(c.take()).To(Equal(counts{"get": 1}), "nothing is sent")
				g.Expect(now.ResourceVersion).To(Equal(before.ResourceVersion))
				g.Expect(obj).To(Equal(ownedConfigMap(state.namespace, name, "mine")), "on error obj is not modified")
			})
		}
	}
}

func TestOwnedByChecksAChildTheCacheDoesNotHold(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	rival := newOwner(t, ns, "rival")

	// The manager's cache holds only the objects this controller labels, as operators
	// configure it to save memory.
	const managedBy = "app.kubernetes.io/managed-by"
	mgr := env.NewManager(t, manager.Options{Cache: cache.Options{
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{managedBy: "tenon-test"}),
	}})
	testenv.StartManager(t, mgr)
	desired := func(name string) *corev1.ConfigMap {
		cm := ownedConfigMap(remote, name, "mine")
		cm.Labels[managedBy] = "tenon-test"
		return cm
	}

	// The rival tracks an unlabelled entry of the name the owner wants: the cache does not hold it.
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: remote, Name: "entry"}, Data: map[string]string{"by": "rival"}}
	_, _, err := ownership.Set(rival, taken, env.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Create(ctx, taken)).To(Succeed())
	g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(taken), &corev1.ConfigMap{})).To(MatchError(ContainSubstring("not found")), "the cache does not hold it")

	api := newCountingClient(t)
	writes := newCountingClient(t)
	a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: mgr.GetClient(), APIReader: api})
	_, err = a.Apply(ctx, desired("entry"), patch.OwnedBy(owner), patch.ForceConflicts(true))
	var refused *ownership.AdoptionError
	g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
	g.Expect(refused.Owner.UID).To(Equal(rival.GetUID()))
	g.Expect(writes.take()).To(Equal(counts{"apply": 1}), "an apply that may only create, refused")
	g.Expect(api.take()).To(Equal(counts{"get": 1}), "then one read from the API server")
	live := liveOf(g, taken)
	g.Expect(ownership.Owns(rival, live)).To(BeTrue())
	g.Expect(live.GetResourceVersion()).To(Equal(taken.ResourceVersion), "nothing is written")

	// A child that does not exist costs its apply and no read when it is created, and nothing
	// once the cache holds it.
	changed, err := a.Apply(ctx, desired("fresh"), patch.OwnedBy(owner), patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(api.take()).To(BeEmpty())
	g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
	g.Eventually(func(g Gomega) {
		changed, err := a.Apply(ctx, desired("fresh"), patch.OwnedBy(owner), patch.ForceConflicts(true))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(api.take()).To(BeEmpty(), "the cache holds the labelled child")
	}).WithTimeout(10 * time.Second).Should(Succeed())
	g.Expect(writes.take()).To(BeEmpty())

	// Without an APIReader the Applier cannot check the rival's entry, which the cache hides: its
	// apply may only create, and the API server refuses it. Nothing is taken over, even with
	// ForceConflicts; the conflict says what to set.
	blind := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: mgr.GetClient()})
	_, err = blind.Apply(ctx, desired("entry"), patch.OwnedBy(owner), patch.ForceConflicts(true))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
	g.Expect(err).To(MatchError(ContainSubstring("APIReader")))
	live = liveOf(g, taken)
	g.Expect(ownership.Owns(rival, live)).To(BeTrue(), cmp.Diff(taken.Labels, live.GetLabels()))
	g.Expect(live.GetResourceVersion()).To(Equal(taken.ResourceVersion), "nothing is written")
}

func TestOwnedByReportsWhatItCannotDo(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	_, err := a.Apply(ctx, ownedConfigMap(ns, "a", "1"), patch.OwnedBy(nil))
	g.Expect(err).To(MatchError(ContainSubstring("owner and child must not be nil")))
	notRead := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-read"}}
	_, err = a.Apply(ctx, ownedConfigMap(ns, "a", "1"), patch.OwnedBy(notRead))
	g.Expect(err).To(MatchError(ContainSubstring("has no UID")))
	_, err = a.Apply(ctx, ownedConfigMap(ns, "a", "1"), patch.OwnedBy(owner, ownership.RequireMechanism(ownership.ControllerReference)))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = a.Apply(ctx, ownedConfigMap(env.Namespace(t), "a", "1"), patch.OwnedBy(owner, ownership.RequireMechanism(ownership.ControllerReference)))
	var scopeErr *ownership.ScopeError
	g.Expect(errors.As(err, &scopeErr)).To(BeTrue(), "want an *ownership.ScopeError, got %v", err)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	_, err = a.ApplyStatus(ctx, w, patch.OwnedBy(owner))
	g.Expect(err).To(MatchError(ContainSubstring("OwnedBy applies to the object, not to its status")))
	g.Expect(writes(c.take())).To(Equal(1), "only the allowed apply was sent")
}

// TestOwnedByCreatesAChildTheReaderDoesNotHoldWithoutReadingIt checks, for every sort of kind,
// that a child the Applier never applied and its reader does not hold costs one apply and no
// read when it does not exist, and that the API server refuses that apply, writing nothing, when
// an object of the child's name exists, which is then checked against the adoption policy.
func TestOwnedByCreatesAChildTheReaderDoesNotHoldWithoutReadingIt(t *testing.T) {
	service := func(ns, name string) client.Object {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			},
		}
	}
	statefulSet := func(ns, name string) client.Object {
		sts := desiredStatefulSet(ns, 1).(*appsv1.StatefulSet)
		sts.Name = name
		return sts
	}
	widget := func(ns, name string) client.Object {
		return &testtypes.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
			Spec:       testtypes.WidgetSpec{Size: "large"},
		}
	}
	unstructuredConfigMap := func(ns, name string) client.Object {
		u := desiredConfigMap(ns, 1).(*unstructured.Unstructured)
		u.SetName(name)
		return u
	}
	for _, tc := range []struct {
		name string
		// desired returns the desired child; in ns, or in remote for a tracked one.
		desired func(ns, name string) client.Object
		tracked bool
	}{
		{"ConfigMap", func(ns, name string) client.Object { return ownedConfigMap(ns, name, "mine") }, false},
		{"tracked ConfigMap in another namespace", func(ns, name string) client.Object { return ownedConfigMap(ns, name, "mine") }, true},
		{"unstructured ConfigMap", unstructuredConfigMap, false},
		{"Service", service, false},
		{"StatefulSet", statefulSet, false},
		{"custom resource", widget, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			childNS := ns
			if tc.tracked {
				childNS = env.Namespace(t)
			}
			owner := newOwner(t, ns, "owner")
			api, writes := newCountingClient(t), newCountingClient(t)
			a := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})

			// Absent: one apply, no read.
			changed, err := a.Apply(ctx, tc.desired(childNS, "fresh"), patch.OwnedBy(owner), patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
			g.Expect(api.take()).To(BeEmpty(), "no read on creation")
			g.Expect(ownership.Owns(owner, liveOf(g, tc.desired(childNS, "fresh")))).To(BeTrue())

			// Applied before, and still not in the reader: read first, and nothing to send.
			changed, err = a.Apply(ctx, tc.desired(childNS, "fresh"), patch.OwnedBy(owner), patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(api.take()).To(Equal(counts{"get": 1}))
			g.Expect(writes.take()).To(BeEmpty())

			// Applied before and deleted since: read, then created again.
			g.Expect(env.Client().Delete(ctx, tc.desired(childNS, "fresh"))).To(Succeed())
			g.Eventually(func() error {
				return env.Client().Get(ctx, client.ObjectKeyFromObject(tc.desired(childNS, "fresh")), tc.desired(childNS, "fresh"))
			}).Should(MatchError(ContainSubstring("not found")))
			changed, err = a.Apply(ctx, tc.desired(childNS, "fresh"), patch.OwnedBy(owner), patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(api.take()).To(Equal(counts{"get": 1}))
			g.Expect(writes.take()).To(Equal(counts{"apply": 1}))
			g.Expect(ownership.Owns(owner, liveOf(g, tc.desired(childNS, "fresh")))).To(BeTrue())

			// An object of the name exists that nobody owns: the creation is refused with nothing
			// written, and the policy decides.
			existing := tc.desired(childNS, "existing")
			existing.SetLabels(map[string]string{"by": "someone"})
			g.Expect(env.Client().Create(ctx, existing)).To(Succeed())
			never := patch.NewApplier(writes, "tenon-test", patch.ApplierOptions{Reader: laggingReader{}, APIReader: api})
			_, err = never.Apply(ctx, tc.desired(childNS, "existing"), patch.OwnedBy(owner, ownership.AdoptNever), patch.ForceConflicts(true))
			var refused *ownership.AdoptionError
			g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
			g.Expect(writes.take()).To(Equal(counts{"apply": 1}), "the apply that may only create")
			g.Expect(api.take()).To(Equal(counts{"get": 1}))
			live := liveOf(g, existing)
			g.Expect(live.GetResourceVersion()).To(Equal(existing.GetResourceVersion()), "nothing is written")
			g.Expect(live.GetLabels()).To(Equal(map[string]string{"by": "someone"}))

			changed, err = a.Apply(ctx, tc.desired(childNS, "existing"), patch.OwnedBy(owner), patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred(), "AdoptIfUnowned takes a child nobody owns")
			g.Expect(changed).To(BeTrue())
			g.Expect(writes.take()).To(Equal(counts{"apply": 2}), "refused, then the apply")
			g.Expect(api.take()).To(Equal(counts{"get": 1}))
			live = liveOf(g, existing)
			g.Expect(ownership.Owns(owner, live)).To(BeTrue())
			g.Expect(live.GetLabels()).To(HaveKeyWithValue("by", "someone"), "another writer's label stays")
		})
	}
}
