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

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
)

func ExampleOwnedBy() {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	// Two owners, custom resources as read from the API server.
	cluster := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21"}}
	rival := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", UID: "9d2e4b1a-7c3f-4e8d-b6a5-1f0c2d3e4a5b"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, rival).WithReturnManagedFields().Build()
	ctx := context.Background()
	a := patch.NewApplier(c, "cluster-controller", patch.ApplierOptions{})

	// One call sets the owner's mark and applies: an owner reference next to the owner, tracking
	// labels in another namespace, where no owner reference can point back.
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}, Data: map[string]string{"port": "8080"}}
	entry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "directory", Name: "shop.web"}, Data: map[string]string{"dns": "web.shop.example.com"}}
	for _, child := range []*corev1.ConfigMap{config, entry} {
		changed, err := a.Apply(ctx, child, patch.OwnedBy(cluster), patch.ForceConflicts(true))
		owner, _ := ownership.OwnerOf(child)
		fmt.Println(child.Namespace, child.Name, changed, err, owner.Mechanism, owner.Name)
	}

	// A child another owner controls is not taken: the error says who controls it, and nothing
	// is sent.
	other := patch.NewApplier(c, "api-controller", patch.ApplierOptions{})
	if _, err := other.Apply(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shared"}}, patch.OwnedBy(rival)); err != nil {
		fmt.Println(err)
	}
	_, err := a.Apply(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shared"}}, patch.OwnedBy(cluster), patch.ForceConflicts(true))
	var refused *ownership.AdoptionError
	if errors.As(err, &refused) && refused.Owner != nil {
		fmt.Println("controlled by", refused.Owner.Name)
	}
	fmt.Println(err)

	// Output:
	// shop web-config true <nil> ControllerReference web
	// directory shop.web true <nil> TrackingLabels web
	// controlled by api
	// failed to apply ConfigMap shop/shared: ConfigMap shop/shared is already controlled by Widget.test.tenon.dev shop/api (uid 9d2e4b1a-7c3f-4e8d-b6a5-1f0c2d3e4a5b, through an owner reference)
}

func ExampleApplier_ApplyConfiguration() {
	c := fake.NewClientBuilder().WithReturnManagedFields().Build()
	a := patch.NewApplier(c, "example-controller", patch.ApplierOptions{})
	ctx := context.Background()

	for i := range 3 {
		// Built from scratch each time: an apply configuration declares only what is set.
		desired := corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"replicas": "3"})
		changed, err := a.ApplyConfiguration(ctx, desired, patch.ForceConflicts(true))
		if err != nil {
			fmt.Println(err)
			return
		}
		// desired now holds the live object.
		fmt.Printf("apply %d: changed=%v resourceVersion=%s\n", i+1, changed, *desired.ResourceVersion)
	}
	// Output:
	// apply 1: changed=true resourceVersion=1
	// apply 2: changed=false resourceVersion=1
	// apply 3: changed=false resourceVersion=1
}

func ExampleApplier_ApplyStatusConfiguration() {
	c := fake.NewClientBuilder().WithReturnManagedFields().WithObjects(&policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
	}).Build()
	ctx := context.Background()
	a := patch.NewApplier(c, "network-controller", patch.ApplierOptions{})

	// The reconcile computes its conditions as []metav1.Condition (here with apimachinery's
	// helper), then converts them with client-go's builders, leaving the transition time to the
	// Applier: carried over while the status does not change, the current time when it does.
	status := func(message string) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
		var computed []metav1.Condition
		meta.SetStatusCondition(&computed, metav1.Condition{Type: "NetworkReady", Status: metav1.ConditionTrue, Reason: "Allocated", Message: message})
		s := policyv1ac.PodDisruptionBudgetStatus()
		for _, cond := range computed {
			s.WithConditions(metav1ac.Condition().WithType(cond.Type).WithStatus(cond.Status).WithReason(cond.Reason).WithMessage(cond.Message))
		}
		return policyv1ac.PodDisruptionBudget("web", "default").WithStatus(s)
	}

	first := status("1 address")
	_, _ = a.ApplyStatusConfiguration(ctx, first, patch.OwnedConditions{"NetworkReady"})
	later := status("2 addresses")
	changed, err := a.ApplyStatusConfiguration(ctx, later, patch.OwnedConditions{"NetworkReady"})
	fmt.Println("changed:", changed, err)

	cond := later.Status.Conditions[0] // later holds the live object
	fmt.Println(*cond.Type, *cond.Status, *cond.Reason, *cond.Message)
	fmt.Println("transition time kept:", cond.LastTransitionTime.Equal(first.Status.Conditions[0].LastTransitionTime))
	// Output:
	// changed: true <nil>
	// NetworkReady True Allocated 2 addresses
	// transition time kept: true
}
