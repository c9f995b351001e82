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

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// tenonHelper uses tenon as its documentation shows: finalizer.Ensure (a guarded patch of the
// finalizer list, written only when missing), conditions.Set and status.observedGeneration on
// the object, and one patch.Helper.Patch with the controller's conditions owned and the
// controller's patch.History, so that a reconcile reading a cache that has not delivered its own
// last status write yet sends nothing instead of a status patch refused as stale.
// It is wrapped in requeue.WithBackoff, as tenon's documentation says to register a reconciler,
// which turns a conflict the helper could not resolve into a quiet requeue instead of a reconcile
// error; the benchmark counts those requeues separately.
type tenonHelper struct {
	client client.Client
	owned  patch.OwnedConditions
	writer *patch.Writer
}

func newTenon(c client.Client, fieldOwner string) reconcile.Reconciler {
	c = client.WithFieldOwner(c, fieldOwner)
	r := &tenonHelper{client: c, owned: ownedTypes(), writer: patch.NewWriter(c, patch.WriterOptions{History: &patch.History{}})}
	return requeue.WithBackoff(r, requeue.BackoffOptions{Name: "tenon", Registerer: prometheus.NewRegistry()})
}

// Reconcile implements reconcile.Reconciler.
func (r *tenonHelper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !w.DeletionTimestamp.IsZero() {
		_, err := finalizer.Remove(ctx, r.client, w, Finalizer)
		return ctrl.Result{}, err
	}
	if _, err := finalizer.Ensure(ctx, r.client, w, Finalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		// Deleted while the finalizer was being added: the next reconcile cleans up.
		return requeue.Done()
	}

	h, err := r.writer.NewHelper(w)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to create patch helper: %w", err)
	}
	setConditions(w)
	w.Status.ObservedGeneration = w.Generation
	return ctrl.Result{}, h.Patch(ctx, w, r.owned)
}

// setConditions sets the desired conditions on w with tenon's conditions.Set.
func setConditions(w *benchv1.Widget) {
	for _, c := range Desired(w) {
		conditions.Set(w, c)
	}
}

func ownedTypes() []conditions.Type {
	owned := make([]conditions.Type, 0, len(OwnedTypes))
	for _, t := range OwnedTypes {
		owned = append(owned, conditions.Type(t))
	}
	return owned
}
