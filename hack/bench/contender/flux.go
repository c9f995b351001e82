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

	fluxconditions "github.com/fluxcd/pkg/runtime/conditions"
	fluxpatch "github.com/fluxcd/pkg/runtime/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// flux uses fluxcd/pkg/runtime as Flux's controllers do: a patch.Helper created after the read,
// controllerutil.AddFinalizer and conditions.Set on the object, then one Helper.Patch with the
// controller's conditions owned and status.observedGeneration set. The helper patches changed
// conditions first (a three-way merge onto the latest object, with an optimistic lock, retried
// five times on conflict), then metadata and spec, then the rest of the status, each a JSON merge
// patch. Errors are returned.
type flux struct {
	client     client.Client
	fieldOwner string
}

func newFlux(c client.Client, fieldOwner string) reconcile.Reconciler {
	return &flux{client: c, fieldOwner: fieldOwner}
}

// Reconcile implements reconcile.Reconciler.
func (r *flux) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	helper, err := fluxpatch.NewHelper(w, r.client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to create patch helper: %w", err)
	}

	if !w.DeletionTimestamp.IsZero() {
		if !controllerutil.RemoveFinalizer(w, Finalizer) {
			return ctrl.Result{}, nil
		}
		if err := helper.Patch(ctx, w, fluxpatch.WithFieldOwner(r.fieldOwner)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to remove finalizer: %w", err))
		}
		return ctrl.Result{}, nil
	}

	controllerutil.AddFinalizer(w, Finalizer)
	for _, c := range Desired(w) {
		fluxconditions.Set(w, &c)
	}
	if err := helper.Patch(ctx, w,
		fluxpatch.WithOwnedConditions{Conditions: OwnedTypes},
		fluxpatch.WithStatusObservedGeneration{},
		fluxpatch.WithFieldOwner(r.fieldOwner),
	); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to patch widget: %w", err))
	}
	return ctrl.Result{}, nil
}
