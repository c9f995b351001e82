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
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// printRequests wraps c so that it prints each patch it sends: the subresource and the paths
// the JSON Patch touches.
func printRequests(c client.WithWatch) client.Client {
	printPatch := func(sub string, obj client.Object, p client.Patch) {
		data, _ := p.Data(obj)
		var ops []struct{ Op, Path string }
		_ = json.Unmarshal(data, &ops)
		var paths []string
		for _, o := range ops {
			paths = append(paths, o.Op+" "+o.Path)
		}
		fmt.Printf("PATCH%s: %s\n", sub, strings.Join(paths, ", "))
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			printPatch("", obj, p)
			return c.Patch(ctx, obj, p, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			printPatch(" "+sub, obj, p)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
}

func ExampleHelper_Patch() {
	scheme := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(scheme))
	stored := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default", Labels: map[string]string{"team": "a"}}}
	c := printRequests(fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(stored).Build())
	ctx := context.Background()

	reconcile := func() error {
		w := &testtypes.Widget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "example"}, w); err != nil {
			return err
		}
		h, err := patch.NewHelper(w, c)
		if err != nil {
			return err
		}
		controllerutil.AddFinalizer(w, "example.com/cleanup")
		if _, err := conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "all replicas ready"); err != nil {
			return err
		}
		w.Status.ObservedGeneration = w.Generation // what requeue.Report does at the end of a reconcile
		return h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready})
	}

	fmt.Println("first reconcile:")
	if err := reconcile(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("second reconcile:")
	if err := reconcile(); err != nil {
		fmt.Println(err)
	}

	w := &testtypes.Widget{}
	_ = c.Get(ctx, client.ObjectKeyFromObject(stored), w)
	fmt.Println("labels:", w.Labels, "finalizers:", w.Finalizers, "ready:", conditions.IsTrue(w, conditions.Ready))
	// Output:
	// first reconcile:
	// PATCH: test /metadata/finalizers, add /metadata/finalizers
	// PATCH status: replace /metadata/resourceVersion, add /status
	// second reconcile:
	// labels: map[team:a] finalizers: [example.com/cleanup] ready: true
}

func ExampleHelper_Patch_conditions() {
	scheme := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(scheme))
	stored := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"},
		Status: testtypes.WidgetStatus{Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Starting", LastTransitionTime: metav1.Unix(1_700_000_000, 0)},
			{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", LastTransitionTime: metav1.Unix(1_700_000_000, 0)},
		}}}
	c := printRequests(fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(stored).Build())
	ctx := context.Background()

	w := &testtypes.Widget{}
	_ = c.Get(ctx, client.ObjectKeyFromObject(stored), w)
	h, _ := patch.NewHelper(w, c)

	// Another controller updates its condition meanwhile: w is stale.
	other := w.DeepCopy()
	_, _ = conditions.MarkFalse(other, "Synced", "Lagging", "3 changes behind")
	_ = c.Status().Update(ctx, other)

	// This controller's change to Ready is written in place; Synced is left as the other
	// controller wrote it.
	_, _ = conditions.MarkTrue(w, conditions.Ready, "Running", "")
	if err := h.Patch(ctx, w); err != nil {
		fmt.Println(err)
	}
	for _, c := range w.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason)
	}
	// Output:
	// PATCH status: test /status/conditions/0, replace /status/conditions/0
	// Ready True Running
	// Synced False Lagging
}

// The 409 on a status update, and the helper that avoids it. A reconcile reads an object, and
// before it writes the status, something else changes the object: a user edits a label, another
// controller adds its finalizer. An Update sends the whole object with the resourceVersion it
// read, and the API server refuses it. The helper sends only this reconcile's change, and when
// that needs the resourceVersion lock (here: the first condition), it reads the latest object,
// carries the change over and sends again.
func ExampleHelper_Patch_staleObject() {
	scheme := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(scheme))
	stored := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"}}
	c := printRequests(fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(stored).Build())
	ctx := context.Background()

	w := &testtypes.Widget{}
	_ = c.Get(ctx, client.ObjectKeyFromObject(stored), w)
	h, _ := patch.NewHelper(w, c)

	// Someone else writes the object: w is now stale.
	other := w.DeepCopy()
	other.Labels = map[string]string{"team": "b"}
	_ = c.Update(ctx, other)

	_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
	err := c.Status().Update(ctx, w.DeepCopy())
	fmt.Println("update:", apierrors.IsConflict(err))

	// The first status patch is refused as the Update was; the second one, built on the latest
	// object, goes through.
	err = h.Patch(ctx, w)
	fmt.Println("patch:", err, "labels:", w.Labels, "ready:", conditions.IsTrue(w, conditions.Ready))
	// Output:
	// update: true
	// PATCH status: replace /metadata/resourceVersion, add /status
	// PATCH status: replace /metadata/resourceVersion, add /status
	// patch: <nil> labels: map[team:b] ready: true
}

func ExampleApplier_Apply() {
	c := fake.NewClientBuilder().WithReturnManagedFields().Build()
	a := patch.NewApplier(c, "example-controller", patch.ApplierOptions{})
	ctx := context.Background()

	for i := range 3 {
		desired := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"},
			Data:       map[string]string{"replicas": "3"},
		}
		changed, err := a.Apply(ctx, desired, patch.ForceOwnership(true))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("apply %d: changed=%v resourceVersion=%s\n", i+1, changed, desired.ResourceVersion)
	}
	// Output:
	// apply 1: changed=true resourceVersion=1
	// apply 2: changed=false resourceVersion=1
	// apply 3: changed=false resourceVersion=1
}

func ExampleApplier_ApplyStatus() {
	c := fake.NewClientBuilder().WithReturnManagedFields().WithObjects(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
	}).Build()
	ctx := context.Background()
	// Two controllers, each with its own field manager, own a condition of one object each.
	network := patch.NewApplier(c, "network-controller", patch.ApplierOptions{})
	storage := patch.NewApplier(c, "storage-controller", patch.ApplierOptions{})
	// Each builds its condition from scratch every reconcile, without a transition time.
	status := func(t conditions.Type, s metav1.ConditionStatus, reason, message string) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Status: policyv1.PodDisruptionBudgetStatus{Conditions: []metav1.Condition{
				{Type: string(t), Status: s, Reason: reason, Message: message},
			}},
		}
	}

	first := status("NetworkReady", metav1.ConditionTrue, "Allocated", "1 address")
	_, _ = network.ApplyStatus(ctx, first, patch.OwnedConditions{"NetworkReady"})
	_, _ = storage.ApplyStatus(ctx, status("StorageReady", metav1.ConditionFalse, "Attaching", "volume pending"), patch.OwnedConditions{"StorageReady"})
	later := status("NetworkReady", metav1.ConditionTrue, "Allocated", "2 addresses")
	_, _ = network.ApplyStatus(ctx, later, patch.OwnedConditions{"NetworkReady"})

	for _, cond := range later.Status.Conditions {
		fmt.Println(cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	was := first.Status.Conditions[0].LastTransitionTime
	kept := later.Status.Conditions[0].LastTransitionTime.Equal(&was)
	fmt.Println("transition time kept:", kept)
	// Output:
	// NetworkReady True Allocated 2 addresses
	// StorageReady False Attaching volume pending
	// transition time kept: true
}
