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
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{testtypes.CRDDirectory()},
		Scheme:            scheme,
		GarbageCollector:  true,
	})
	os.Exit(env.Run(m))
}

// gcTimeout bounds waits for the garbage collector, which shares the CPU with other tests.
const gcTimeout = 60 * time.Second

// createOwned makes owner own child and creates it, returning the mechanism used.
func createOwned(t *testing.T, owner, child client.Object, opts ...ownership.SetOption) ownership.Mechanism {
	t.Helper()
	mechanism, _, err := ownership.Set(owner, child, scheme, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client().Create(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	return mechanism
}

// deleteAtEnd deletes cluster-scoped objects when the test ends; namespaces take care of the rest.
func deleteAtEnd(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		if err := client.IgnoreNotFound(env.Client().Delete(context.Background(), obj)); err != nil {
			t.Errorf("failed to delete %s: %v", obj.GetName(), err)
		}
	})
}

// gone returns a function for Eventually that succeeds once obj no longer exists.
func gone(ctx context.Context, obj client.Object) func() error {
	return func() error {
		err := env.Client().Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%s still exists", client.ObjectKeyFromObject(obj))
	}
}

func TestASameNamespaceChildIsCollectedWithItsOwner(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())

	child := configMap(ns, "child", "")
	g.Expect(createOwned(t, owner, child)).To(Equal(ownership.ControllerReference))
	g.Expect(metav1.IsControlledBy(child, owner)).To(BeTrue())

	g.Expect(env.Client().Delete(ctx, owner)).To(Succeed())
	g.Eventually(gone(ctx, child)).WithTimeout(gcTimeout).Should(Succeed(), "the garbage collector deletes the child")
}

// A reference across namespaces is what Set avoids: the garbage collector looks for the owner
// in the child's namespace, finds nothing, and deletes the child although its owner exists.
func TestACrossNamespaceOwnerReferenceGetsTheChildCollected(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns, other := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())

	wrong := configMap(other, "wrong", "")
	wrong.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: testtypes.GroupVersion.String(), Kind: "Widget", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
	}}
	g.Expect(env.Client().Create(ctx, wrong)).To(Succeed(), "the API server accepts the reference")
	tracked := configMap(other, "tracked", "")
	g.Expect(createOwned(t, owner, tracked)).To(Equal(ownership.TrackingLabels))

	g.Eventually(gone(ctx, wrong)).WithTimeout(gcTimeout).Should(Succeed(), "the garbage collector deletes the child of an owner it cannot find")
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(tracked), tracked)).To(Succeed(), "the tracked child stays")
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(owner), owner)).To(Succeed(), "the owner exists all along")
}

// childrenReconciler keeps three children of each Widget in its namespace: a ConfigMap next to
// it, a ConfigMap in another namespace and a cluster-scoped Fixture. A finalizer deletes the
// last two, which the garbage collector cannot reach.
type childrenReconciler struct {
	client.Client
	namespace, remote string
}

const childrenFinalizer = "test.tenon.dev/children"

var trackedKinds = []client.ObjectList{&corev1.ConfigMapList{}, &testtypes.FixtureList{}}

func (r *childrenReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return ctrl.Result{}, nil
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The finalizer deletes the tracked children, which the garbage collector cannot reach, and
	// goes once none is left (the finalizer package's TrackedChildren step does the same).
	if !w.DeletionTimestamp.IsZero() {
		remaining, err := ownership.DeleteTracked(ctx, r.Client, &w, trackedKinds, ownership.UseIndex(true))
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case remaining > 0:
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case controllerutil.RemoveFinalizer(&w, childrenFinalizer):
			return ctrl.Result{}, r.Update(ctx, &w)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&w, childrenFinalizer) {
		if err := r.Update(ctx, &w); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, child := range children(&w, r.remote) {
		desired := child.DeepCopyObject().(client.Object)
		_, err := controllerutil.CreateOrUpdate(ctx, r.Client, child, func() error {
			copyContent(desired, child)
			_, _, err := ownership.Set(&w, child, r.Scheme())
			return err
		})
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// children returns w's desired children.
func children(w *testtypes.Widget, remote string) []client.Object {
	data := map[string]string{"owner": w.Name}
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-local"}, Data: data},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: remote, Name: w.Name + "-remote"}, Data: data},
		&testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace + "-" + w.Name}, Spec: testtypes.WidgetSpec{Size: "small"}},
	}
}

func copyContent(from, to client.Object) {
	switch f := from.(type) {
	case *corev1.ConfigMap:
		to.(*corev1.ConfigMap).Data = f.Data
	case *testtypes.Fixture:
		to.(*testtypes.Fixture).Spec = f.Spec
	}
}

func TestTrackedChildrenReconcileTheirOwnerAndAreCleanedUp(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)

	mgr := env.NewManager(t, ctrl.Options{})
	for _, kind := range []client.Object{&corev1.ConfigMap{}, &testtypes.Fixture{}} {
		g.Expect(mgr.GetFieldIndexer().IndexField(ctx, kind, ownership.IndexField, ownership.Index)).To(Succeed())
	}
	enqueue := ownership.EnqueueOwner(mgr, &testtypes.Widget{})
	g.Expect(ctrl.NewControllerManagedBy(mgr).
		For(&testtypes.Widget{}).
		Watches(&corev1.ConfigMap{}, enqueue).
		Watches(&testtypes.Fixture{}, enqueue).
		Named("children").
		Complete(&childrenReconciler{Client: mgr.GetClient(), namespace: ns, remote: remote})).To(Succeed())
	testenv.StartManager(t, mgr)

	owner := widget(ns, "owner", "")
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	desired := children(owner, remote)
	local, remoteChild, clusterChild := desired[0].(*corev1.ConfigMap), desired[1].(*corev1.ConfigMap), desired[2].(*testtypes.Fixture)
	deleteAtEnd(t, clusterChild)

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(owner), owner)).To(Succeed())
		for _, child := range desired {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(child), child)).To(Succeed())
			g.Expect(ownership.Owns(owner, child)).To(BeTrue())
		}
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(metav1.IsControlledBy(local, owner)).To(BeTrue(), "the local child has an owner reference")
	g.Expect(remoteChild.Labels).To(HaveKeyWithValue(ownership.LabelOwnerUID, string(owner.UID)), "the remote child is tracked")
	g.Expect(clusterChild.Labels).To(HaveKeyWithValue(ownership.LabelOwnerUID, string(owner.UID)), "the cluster-scoped child is tracked")

	// The index and the label selector find the same children.
	for _, useIndex := range []bool{true, false} {
		var reader client.Reader = env.Client()
		if useIndex {
			reader = mgr.GetClient()
		}
		g.Eventually(func(g Gomega) {
			var cms corev1.ConfigMapList
			g.Expect(ownership.ListChildren(ctx, reader, owner, &cms, ownership.UseIndex(useIndex))).To(Succeed())
			g.Expect(configMapKeys(&cms)).To(ConsistOf(client.ObjectKeyFromObject(local).String(), client.ObjectKeyFromObject(remoteChild).String()))
			var fixtures testtypes.FixtureList
			g.Expect(ownership.ListChildren(ctx, reader, owner, &fixtures, ownership.UseIndex(useIndex))).To(Succeed())
			g.Expect(fixtures.Items).To(HaveLen(1))
		}).WithTimeout(30*time.Second).Should(Succeed(), "UseIndex(%t)", useIndex)
	}

	// Edits to the tracked children reach the owner, whose reconcile puts them back. Nothing
	// else would reconcile it: the owner does not change.
	remoteChild.Data = map[string]string{"owner": "someone else"}
	g.Expect(env.Client().Update(ctx, remoteChild)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(remoteChild), remoteChild)).To(Succeed())
		g.Expect(remoteChild.Data).To(Equal(map[string]string{"owner": owner.Name}))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the owner was reconciled after the edit to its ConfigMap in another namespace")
	clusterChild.Spec.Size = "huge"
	g.Expect(env.Client().Update(ctx, clusterChild)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(clusterChild), clusterChild)).To(Succeed())
		g.Expect(clusterChild.Spec.Size).To(Equal("small"))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the owner was reconciled after the edit to its cluster-scoped Fixture")

	// Deleting the owner: its finalizer deletes the tracked children, the collector the other.
	g.Expect(env.Client().Delete(ctx, owner)).To(Succeed())
	for _, obj := range []client.Object{owner, remoteChild, clusterChild, local} {
		g.Eventually(gone(ctx, obj)).WithTimeout(gcTimeout).Should(Succeed())
	}
}

func TestARecreatedOwnerDoesNotInheritItsPredecessorsChildren(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)

	first := widget(ns, "owner", "")
	g.Expect(c.Create(ctx, first)).To(Succeed())
	local := configMap(ns, "local", "")
	g.Expect(createOwned(t, first, local)).To(Equal(ownership.ControllerReference))
	left := configMap(remote, "left", "")
	g.Expect(createOwned(t, first, left)).To(Equal(ownership.TrackingLabels))
	leftFixture := fixture(ns+"-left", "")
	deleteAtEnd(t, leftFixture)
	g.Expect(createOwned(t, first, leftFixture)).To(Equal(ownership.TrackingLabels))

	// The first owner goes without cleaning up (no finalizer), and a second takes its name.
	g.Expect(c.Delete(ctx, first)).To(Succeed())
	g.Eventually(gone(ctx, first)).WithTimeout(30 * time.Second).Should(Succeed())
	second := widget(ns, "owner", "")
	g.Expect(c.Create(ctx, second)).To(Succeed())
	g.Expect(second.UID).NotTo(Equal(first.UID))

	// The collector deletes the referenced child: its owner's UID is gone, whatever the name.
	g.Eventually(gone(ctx, local)).WithTimeout(gcTimeout).Should(Succeed())

	// The tracked ones are not the second owner's.
	g.Expect(ownership.Owns(second, left)).To(BeFalse())
	g.Expect(ownership.Owns(second, leftFixture)).To(BeFalse())
	var cms corev1.ConfigMapList
	g.Expect(ownership.ListChildren(ctx, c, second, &cms)).To(Succeed())
	g.Expect(cms.Items).To(BeEmpty())
	var fixtures testtypes.FixtureList
	g.Expect(ownership.ListChildren(ctx, c, second, &fixtures)).To(Succeed())
	g.Expect(fixtures.Items).To(BeEmpty())
	remaining, err := ownership.DeleteTracked(ctx, c, second, trackedKinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(left), left)).To(Succeed(), "the second owner's cleanup leaves it alone")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(leftFixture), leftFixture)).To(Succeed())

	_, _, err = ownership.Set(second, left, scheme)
	var refused *ownership.AdoptionError
	g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
	g.Expect(refused.PreviousIncarnation).To(BeTrue())
	g.Expect(refused.Owner).NotTo(BeNil())
	g.Expect(refused.Owner.UID).To(Equal(first.UID))

	// Unless it adopts them on purpose.
	_, changed, err := ownership.Set(second, left, scheme, ownership.AdoptAlways)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.Update(ctx, left)).To(Succeed())
	g.Expect(ownership.ListChildren(ctx, c, second, &cms)).To(Succeed())
	g.Expect(configMapKeys(&cms)).To(Equal([]string{client.ObjectKeyFromObject(left).String()}))
}

func TestPruneDeletesExactlyTheChildrenNoLongerDesired(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	rival := widget(ns, "rival", "")
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	g.Expect(c.Create(ctx, rival)).To(Succeed())

	// Five children, three referenced and two tracked, and objects that are not children.
	var all []*corev1.ConfigMap
	for i, namespace := range []string{ns, ns, ns, remote, remote} {
		child := configMap(namespace, fmt.Sprintf("child-%d", i), "")
		createOwned(t, owner, child)
		all = append(all, child)
	}
	unowned := configMap(ns, "unowned", "")
	g.Expect(c.Create(ctx, unowned)).To(Succeed())
	rivals := configMap(ns, "rivals", "")
	createOwned(t, rival, rivals)
	rivalsTracked := configMap(remote, "rivals-tracked", "")
	createOwned(t, rival, rivalsTracked)

	keep := []client.ObjectKey{client.ObjectKeyFromObject(all[1]), client.ObjectKeyFromObject(all[3])}
	var list corev1.ConfigMapList
	deleted, err := ownership.Prune(ctx, c, owner, &list, keep)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys(deleted)).To(ConsistOf(keys([]*corev1.ConfigMap{all[0], all[2], all[4]})))
	g.Expect(configMapKeys(&list)).To(ConsistOf(keys([]*corev1.ConfigMap{all[1], all[3]})))

	for _, obj := range []*corev1.ConfigMap{all[0], all[2], all[4]} {
		g.Expect(gone(ctx, obj)()).To(Succeed())
	}
	for _, obj := range []*corev1.ConfigMap{all[1], all[3], unowned, rivals, rivalsTracked} {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%s stays", obj.Name)
	}

	deleted, err = ownership.Prune(ctx, c, owner, &corev1.ConfigMapList{}, keep)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeEmpty(), "pruning again deletes nothing")
}

func TestPruneDoesNotDeleteAnObjectRecreatedUnderTheSameName(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	child := configMap(ns, "child", "")
	createOwned(t, owner, child)
	stale := child.DeepCopy()

	// The child is deleted and made again: same name, new UID.
	g.Expect(env.Client().Delete(ctx, child)).To(Succeed())
	recreated := configMap(ns, "child", "")
	createOwned(t, owner, recreated)
	g.Expect(recreated.UID).NotTo(Equal(stale.UID))

	// A reader that lags behind still lists the old one.
	direct, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	lagging := interceptor.NewClient(direct, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			list.(*corev1.ConfigMapList).Items = []corev1.ConfigMap{*stale}
			return nil
		},
	})
	deleted, err := ownership.Prune(ctx, lagging, owner, &corev1.ConfigMapList{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleted).To(BeEmpty())
	var now corev1.ConfigMap
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(recreated), &now)).To(Succeed())
	g.Expect(now.UID).To(Equal(recreated.UID), "the UID precondition protected the new object")

	remaining, err := ownership.DeleteTracked(ctx, lagging, owner, []client.ObjectList{&corev1.ConfigMapList{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero(), "the stale child is not tracked, so it does not count")
}

func TestAdoptionOnTheAPIServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	rival := widget(ns, "rival", "")
	for _, w := range []*testtypes.Widget{owner, rival} {
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}

	// Each case makes a child as someone else left it; the owner then tries to take it.
	states := []struct {
		name      string
		namespace string
		make      func(t *testing.T, child *corev1.ConfigMap)
		never     outcome
		unown     outcome
		always    outcome
	}{{
		name: "unowned", namespace: ns,
		make: func(t *testing.T, child *corev1.ConfigMap) {
			g := NewWithT(t)
			g.Expect(c.Create(ctx, child)).To(Succeed())
		},
		never: refusesNotAdopted, unown: takes, always: takes,
	}, {
		name: "shared", namespace: ns,
		make: func(t *testing.T, child *corev1.ConfigMap) {
			g := NewWithT(t)
			g.Expect(controllerutil.SetOwnerReference(rival, child, scheme)).To(Succeed())
			g.Expect(c.Create(ctx, child)).To(Succeed())
		},
		never: refusesNotAdopted, unown: refusesNotAdopted, always: takes,
	}, {
		name: "controlled", namespace: ns,
		make:  func(t *testing.T, child *corev1.ConfigMap) { createOwned(t, rival, child) },
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name: "tracked", namespace: remote,
		make:  func(t *testing.T, child *corev1.ConfigMap) { createOwned(t, rival, child) },
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}}
	for _, state := range states {
		for _, p := range []struct {
			policy ownership.AdoptionPolicy
			want   outcome
		}{{ownership.AdoptNever, state.never}, {ownership.AdoptIfUnowned, state.unown}, {ownership.AdoptAlways, state.always}} {
			t.Run(state.name+"/"+string(p.policy), func(t *testing.T) {
				g := NewWithT(t)
				child := configMap(state.namespace, strings.ToLower(state.name+"-"+string(p.policy)), "")
				state.make(t, child)
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(child), child)).To(Succeed())
				before := child.DeepCopy()

				_, _, err := ownership.Set(owner, child, scheme, p.policy)
				if p.want == takes {
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(c.Update(ctx, child)).To(Succeed())
				} else {
					g.Expect(err).To(HaveOccurred())
				}

				var now corev1.ConfigMap
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(child), &now)).To(Succeed())
				switch p.want {
				case takes:
					g.Expect(ownership.Owns(owner, &now)).To(BeTrue())
					g.Expect(ownership.Owns(rival, &now)).To(BeFalse())
					g.Expect(now.OwnerReferences).To(ContainElements(before.OwnerReferences), "other owners' references stay")
				case refusesAlreadyOwned:
					var refused *ownership.AdoptionError
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
					g.Expect(refused.Owner).NotTo(BeNil())
					g.Expect(refused.Owner.UID).To(Equal(rival.UID))
					g.Expect(ownership.Owns(rival, &now)).To(BeTrue(), "the rival keeps its child")
				case refusesNotAdopted:
					var refused *ownership.AdoptionError
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
					g.Expect(refused.Owner).To(BeNil())
					g.Expect(ownership.Owns(owner, &now)).To(BeFalse())
				}
			})
		}
	}
}

func TestServerSideApplyDoesNotStealAChild(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	rival := widget(ns, "rival", "")
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	g.Expect(c.Create(ctx, rival)).To(Succeed())

	// apply builds the desired child from scratch, as a controller using server-side apply
	// does, makes owner its owner with the live object in view, and applies it with force.
	apply := func(w *testtypes.Widget, name string) error {
		desired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: remote, Name: name}, Data: map[string]string{"by": w.Name}}
		var live corev1.ConfigMap
		if err := client.IgnoreNotFound(c.Get(ctx, client.ObjectKeyFromObject(desired), &live)); err != nil {
			return err
		}
		if _, _, err := ownership.Set(w, desired, scheme, ownership.Existing{Object: &live}); err != nil {
			return err
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetAPIVersion("v1")
		obj.SetKind("ConfigMap")
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("controller-"+w.Name), client.ForceOwnership)
	}

	g.Expect(apply(rival, "contested")).To(Succeed())
	err := apply(owner, "contested")
	var refused *ownership.AdoptionError
	g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)

	var now corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: remote, Name: "contested"}, &now)).To(Succeed())
	g.Expect(ownership.Owns(rival, &now)).To(BeTrue())
	g.Expect(now.Data).To(Equal(map[string]string{"by": rival.Name}))

	g.Expect(apply(owner, "own")).To(Succeed())
	g.Expect(apply(owner, "own")).To(Succeed(), "applying again is fine")
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: remote, Name: "own"}, &now)).To(Succeed())
	g.Expect(ownership.Owns(owner, &now)).To(BeTrue())
}

func TestDeleteTrackedAsksTheAPIServerBeforeItReportsNoneLeft(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	child := configMap(remote, "tracked", "")
	g.Expect(createOwned(t, owner, child)).To(Equal(ownership.TrackingLabels))

	// A cache that has not seen the child yet (created moments ago, or while its watch was
	// broken) lists nothing.
	direct, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	behind := interceptor.NewClient(direct, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return nil },
	})
	lists := []client.ObjectList{&corev1.ConfigMapList{}}

	remaining, err := ownership.DeleteTracked(ctx, behind, owner, lists)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero(), "without APIReader, 0 means none in the cache")
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})).To(Succeed(), "and the child would leak")

	remaining, err = ownership.DeleteTracked(ctx, behind, owner, lists, ownership.UseIndex(true), ownership.APIReader(direct))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(1), "the API server has the child: it is deleted and counted")
	g.Eventually(gone(ctx, child)).WithTimeout(30 * time.Second).Should(Succeed())

	remaining, err = ownership.DeleteTracked(ctx, behind, owner, lists, ownership.APIReader(direct))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero(), "none left on the API server either")
}

// A cluster-scoped child that another test (or another instance of the operator) tracks, for an
// owner in a namespace outside a manager's cache, made that manager's EnqueueOwner enqueue the
// owner, whose reconcile could only fail: "unknown namespace for the cache" (issue 26, item 10).
func TestAManagerLimitedToNamespacesIsNotAskedToReconcileOwnersOutsideThem(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns, elsewhere := env.Namespace(t), env.Namespace(t)

	// The informer lists Fixtures by name, and the work queue hands out requests of the
	// initial list in that order: the other test's child first, then this test's.
	leftover := set(t, widget(elsewhere, "owner", "uid-elsewhere"), fixture("a-"+elsewhere, ""))
	mine := set(t, widget(ns, "owner", "uid-mine"), fixture("b-"+ns, ""))
	for _, obj := range []client.Object{leftover, mine} {
		g.Expect(env.Client().Create(ctx, obj)).To(Succeed())
		deleteAtEnd(t, obj)
	}

	mgr := env.NewManager(t, ctrl.Options{}, ns)
	rec := reconciletest.Record(reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
		// As an owner's reconcile starts: read it through the manager's cache.
		return ctrl.Result{}, client.IgnoreNotFound(mgr.GetClient().Get(ctx, req.NamespacedName, &testtypes.Widget{}))
	}))
	g.Expect(ctrl.NewControllerManagedBy(mgr).
		For(&testtypes.Widget{}).
		Watches(&testtypes.Fixture{}, ownership.EnqueueOwner(mgr, &testtypes.Widget{})).
		Named("scoped").
		Complete(rec)).To(Succeed())
	testenv.StartManager(t, mgr)

	g.Eventually(rec.Steps).WithTimeout(30*time.Second).Should(ContainElement(HaveField("Request", request(ns, "owner"))),
		"the owner of this test's child is reconciled")
	g.Expect(rec.Steps()).To(HaveEach(HaveField("Request.Namespace", ns)),
		"no owner outside the manager's namespace is reconciled")
	g.Expect(rec.Steps()).NotTo(ContainElement(matchers.HaveFailed()))
}
