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

package finalizer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

// holdFinalizer keeps a child in Terminating until the test removes it.
const holdFinalizer = "test.tenon.dev/hold"

func TestTrackedChildrenDeletesTheTrackedChildrenBeforeTheFinalizerGoes(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: c, Clock: clock,
		Steps: []finalizer.Step[*testtypes.Widget]{
			finalizer.TrackedChildren[*testtypes.Widget](c, []client.ObjectList{&corev1.ConfigMapList{}, &testtypes.FixtureList{}}),
		},
	}
	g.Expect(l.Steps[0].Name).To(Equal("tracked-children"))

	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	rival := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "rival", Namespace: ns}}
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	g.Expect(c.Create(ctx, rival)).To(Succeed())
	proceed, _, err := l.Reconcile(ctx, owner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeTrue())

	// Tracked: a ConfigMap in another namespace, held by a finalizer of its own, and a
	// cluster-scoped Fixture. Referenced: a ConfigMap next to the owner. The rival tracks one too.
	create := func(owner *testtypes.Widget, child client.Object) client.Object {
		t.Helper()
		_, _, err := ownership.Set(owner, child, env.Scheme())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Create(ctx, child)).To(Succeed())
		return child
	}
	held := create(owner, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: remote, Finalizers: []string{holdFinalizer}}})
	fixture := create(owner, &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: ns + "-owner"}})
	t.Cleanup(func() { _ = client.IgnoreNotFound(c.Delete(context.Background(), fixture)) })
	local := create(owner, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: ns}})
	rivals := create(rival, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rivals", Namespace: remote}})
	g.Expect(metav1.IsControlledBy(local, owner)).To(BeTrue())

	g.Expect(c.Delete(ctx, owner)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(owner), owner)).To(Succeed())

	// The first run deletes both tracked children and counts them: a deletion is not done until
	// a listing no longer finds the child.
	proceed, res, err := l.Reconcile(ctx, owner)
	g.Expect(err).NotTo(HaveOccurred(), "waiting is not an error")
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.RequeueAfter).To(Equal(2 * time.Second))
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(fixture), &testtypes.Fixture{}))).To(BeTrue(), "the Fixture is gone")
	var now corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(held), &now)).To(Succeed())
	g.Expect(now.DeletionTimestamp).NotTo(BeNil(), "the held child is being deleted")
	var latest testtypes.Widget
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(owner), &latest)).To(Succeed())
	g.Expect(conditions.Get(&latest, conditions.Deleting).Message).To(Equal(ours + ": step tracked-children: waiting for 2 tracked children to be deleted"))

	// A child being deleted still counts: the finalizer stays.
	clock.SetTime(clock.Now().Add(res.RequeueAfter))
	proceed, res, err = l.Reconcile(ctx, &latest)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.RequeueAfter).To(Equal(2 * time.Second))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(owner), &latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(ContainElement(ours))
	g.Expect(conditions.Get(&latest, conditions.Deleting).Message).To(Equal(ours + ": step tracked-children: waiting for 1 tracked children to be deleted"))

	// Once it is gone, the step is done and the owner goes.
	now.Finalizers = nil
	g.Expect(c.Update(ctx, &now)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(owner), &latest)).To(Succeed())
	clock.SetTime(clock.Now().Add(res.RequeueAfter))
	proceed, res, err = l.Reconcile(ctx, &latest)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(gone(ctx, owner)).To(BeTrue())

	// The rival's child is not the owner's to delete; the referenced one is the collector's.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rivals), &corev1.ConfigMap{})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(local), &corev1.ConfigMap{}))
	}).WithTimeout(60*time.Second).Should(BeTrue(), "the garbage collector deletes the referenced child")
}

func TestTrackedChildrenReturnsAFailedDeletionAsTheStepsError(t *testing.T) {
	g := NewWithT(t)
	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "shop", UID: "uid-owner"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "entry", Namespace: "directory"}}
	_, _, err := ownership.Set(owner, child, env.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	denied := apierrors.NewForbidden(corev1.Resource("configmaps"), "entry", errors.New("no RBAC"))
	c := fake.NewClientBuilder().WithScheme(env.Scheme()).WithObjects(child).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return denied },
	}).Build()
	step := finalizer.TrackedChildren[*testtypes.Widget](c, []client.ObjectList{&corev1.ConfigMapList{}})

	progress, err := step.Run(t.Context(), owner)

	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the error keeps its class: %v", err)
	g.Expect(progress).To(Equal(finalizer.Progress{}))
	g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(child), &corev1.ConfigMap{})).To(Succeed())
}

func ExampleTrackedChildren() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21"}}

	// The owner's entry in a directory namespace: an owner reference cannot cross namespaces,
	// so ownership tracks it with labels, which the garbage collector ignores.
	entry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shop.web", Namespace: "directory"}}
	if _, _, err := ownership.Set(owner, entry, scheme); err != nil {
		fmt.Println(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(owner).WithObjects(owner, entry).Build()

	clock := clocktesting.NewFakePassiveClock(time.Now())
	lifecycle := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: "apps.example.com/cleanup",
		Client:    c,
		Clock:     clock,
		Steps: []finalizer.Step[*testtypes.Widget]{
			finalizer.TrackedChildren[*testtypes.Widget](c, []client.ObjectList{&corev1.ConfigMapList{}}),
		},
	}
	_, _, _ = lifecycle.Reconcile(ctx, owner) // adds the finalizer

	// The owner is deleted: the step deletes the entry and waits until no listing finds it.
	_ = c.Delete(ctx, owner)
	_ = c.Get(ctx, client.ObjectKeyFromObject(owner), owner)
	_, res, err := lifecycle.Reconcile(ctx, owner)
	fmt.Println(res.RequeueAfter, err, conditions.Get(owner, conditions.Deleting).Message)
	clock.SetTime(clock.Now().Add(res.RequeueAfter))
	_, res, err = lifecycle.Reconcile(ctx, owner)
	fmt.Println(res.RequeueAfter, err)

	fmt.Println("entry gone:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(entry), &corev1.ConfigMap{})))
	fmt.Println("owner gone:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(owner), &testtypes.Widget{})))

	// Output:
	// 2s <nil> apps.example.com/cleanup: step tracked-children: waiting for 1 tracked children to be deleted
	// 0s <nil>
	// entry gone: true
	// owner gone: true
}
