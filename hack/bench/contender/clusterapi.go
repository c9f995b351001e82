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

package contender

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	capifinalizers "sigs.k8s.io/cluster-api/util/finalizers"
	capipatch "sigs.k8s.io/cluster-api/util/patch"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// clusterAPI uses cluster-api's utilities as its controllers do: finalizers.EnsureFinalizer right
// after the read (a JSON merge patch of the finalizer list, no optimistic lock), then a
// patch.Helper, conditions.Set (the v1beta2 functions on metav1.Condition) and one Helper.Patch
// with the controller's conditions owned and status.observedGeneration set. The helper patches
// changed conditions first (three-way merge onto the latest object, optimistic lock, retried on
// conflict), then metadata and spec, then the rest of the status. Errors are returned.
//
// cluster-api's controllers return right after EnsureFinalizer added the finalizer and wait for
// the watch event; this one goes on, as every contender does, which changes no write count.
type clusterAPI struct {
	client client.Client
}

func newClusterAPI(c client.Client, fieldOwner string) reconcile.Reconciler {
	// cluster-api's helper has no field-owner option; the client carries it.
	return &clusterAPI{client: client.WithFieldOwner(c, fieldOwner)}
}

// Reconcile implements reconcile.Reconciler.
func (r *clusterAPI) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !w.DeletionTimestamp.IsZero() {
		helper, err := capipatch.NewHelper(w, r.client)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to create patch helper: %w", err)
		}
		if !controllerutil.RemoveFinalizer(w, Finalizer) {
			return ctrl.Result{}, nil
		}
		if err := helper.Patch(ctx, w); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to remove finalizer: %w", err))
		}
		return ctrl.Result{}, nil
	}

	if _, err := capifinalizers.EnsureFinalizer(ctx, r.client, w, Finalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to add finalizer: %w", err))
	}
	helper, err := capipatch.NewHelper(w, r.client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to create patch helper: %w", err)
	}
	for _, c := range Desired(w) {
		capiconditions.Set(w, c)
	}
	if err := helper.Patch(ctx, w,
		capipatch.WithOwnedConditions{Conditions: OwnedTypes},
		capipatch.WithStatusObservedGeneration{},
	); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to patch widget: %w", err))
	}
	return ctrl.Result{}, nil
}
