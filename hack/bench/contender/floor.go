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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// floor writes exactly what must change and nothing else, with no library: one merge patch of
// the finalizer list and one merge patch of the status to converge, none at steady state. Both
// carry the resourceVersion (optimistic locking), so a stale read fails with a 409 instead of
// overwriting another writer; the error is returned and controller-runtime retries with backoff.
//
// It is the baseline for write counts: no correct controller that writes the finalizer and the
// status in separate requests, as the status subresource requires, can send fewer.
type floor struct {
	client     client.Client
	fieldOwner string
}

func newFloor(c client.Client, fieldOwner string) reconcile.Reconciler {
	return &floor{client: c, fieldOwner: fieldOwner}
}

// Reconcile implements reconcile.Reconciler.
func (r *floor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	lock := client.MergeFromWithOptimisticLock{}

	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.release(ctx, w)
	}

	if !hasFinalizer(w) {
		base := w.DeepCopy()
		w.Finalizers = append(w.Finalizers, Finalizer)
		if err := r.client.Patch(ctx, w, client.MergeFromWithOptions(base, lock), client.FieldOwner(r.fieldOwner)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to add finalizer: %w", err)
		}
	}

	base := w.DeepCopy()
	changed := setStatus(w)
	if !changed {
		return ctrl.Result{}, nil
	}
	if err := r.client.Status().Patch(ctx, w, client.MergeFromWithOptions(base, lock), client.FieldOwner(r.fieldOwner)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to patch status: %w", err)
	}
	return ctrl.Result{}, nil
}

// release removes the floor's finalizer from w, which is being deleted.
func (r *floor) release(ctx context.Context, w *benchv1.Widget) error {
	if !hasFinalizer(w) {
		return nil
	}
	base := w.DeepCopy()
	kept := make([]string, 0, len(w.Finalizers))
	for _, f := range w.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	w.Finalizers = kept
	lock := client.MergeFromWithOptimisticLock{}
	if err := r.client.Patch(ctx, w, client.MergeFromWithOptions(base, lock), client.FieldOwner(r.fieldOwner)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("failed to remove finalizer: %w", err))
	}
	return nil
}

// setStatus sets w's desired conditions and observed generation, a condition's transition time
// moving only when its status does, and reports whether anything changed.
func setStatus(w *benchv1.Widget) (changed bool) {
	now := metav1.Now().Rfc3339Copy() // the API server stores seconds
	for _, want := range Desired(w) {
		want.ObservedGeneration = w.Generation
		got := findCondition(w.Status.Conditions, want.Type)
		switch {
		case got == nil:
			want.LastTransitionTime = now
			w.Status.Conditions = append(w.Status.Conditions, want)
			changed = true
		case got.Status != want.Status:
			want.LastTransitionTime = now
			*got = want
			changed = true
		case got.Reason != want.Reason || got.Message != want.Message || got.ObservedGeneration != want.ObservedGeneration:
			want.LastTransitionTime = got.LastTransitionTime
			*got = want
			changed = true
		}
	}
	if w.Status.ObservedGeneration != w.Generation {
		w.Status.ObservedGeneration = w.Generation
		changed = true
	}
	return changed
}
