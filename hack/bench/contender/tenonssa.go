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

	"github.com/prometheus/client_golang/prometheus"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// tenonSSA writes the status with server-side apply: finalizer.Ensure as in the tenon contender,
// then conditions.Set and status.observedGeneration on the object read from the cache, and
// patch.Applier.ApplyStatus with the controller's conditions owned, under its own field manager.
// The Applier reads the live object from the manager's cache and skips the apply when it would
// change nothing. It is wrapped in requeue.WithBackoff, as the tenon contender is.
type tenonSSA struct {
	client  client.Client
	applier *patch.Applier
	opts    []patch.ApplyCallOption
}

func newTenonSSA(c client.Client, fieldOwner string) reconcile.Reconciler {
	return requeue.WithBackoff(&tenonSSA{
		client:  client.WithFieldOwner(c, fieldOwner),
		applier: patch.NewApplier(c, fieldOwner, patch.ApplierOptions{Reader: c}),
		opts:    []patch.ApplyCallOption{patch.OwnedConditions(ownedTypes()), patch.ForceConflicts(true)},
	}, requeue.BackoffOptions{Name: "tenon-ssa", Registerer: prometheus.NewRegistry()})
}

// Reconcile implements reconcile.Reconciler.
func (r *tenonSSA) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !w.DeletionTimestamp.IsZero() {
		removed, err := finalizer.Remove(ctx, r.client, w, Finalizer)
		if removed {
			r.applier.Forget(w)
		}
		return ctrl.Result{}, err
	}
	if _, err := finalizer.Ensure(ctx, r.client, w, Finalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return requeue.Done()
	}

	setConditions(w)
	w.Status.ObservedGeneration = w.Generation
	if _, err := r.applier.ApplyStatus(ctx, w, r.opts...); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to apply status: %w", err)
	}
	return requeue.Done()
}
