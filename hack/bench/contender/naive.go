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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// naive is the style of kubebuilder's generated sample controllers: Update to add the finalizer,
// meta.SetStatusCondition for each condition, and a Status().Update at the end of every
// reconcile, whether anything changed or not. A write that fails with a conflict is retried
// (retry.RetryOnConflict, five attempts) after re-fetching the object, as the sample advises;
// when the retries run out the error is returned.
//
// It leaves out the sample's extra first write (conditions set to Unknown before any work), to
// keep the logic identical to the other contenders'.
type naive struct {
	client client.Client
}

func newNaive(c client.Client, fieldOwner string) reconcile.Reconciler {
	return &naive{client: client.WithFieldOwner(c, fieldOwner)}
}

// Reconcile implements reconcile.Reconciler.
func (r *naive) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !w.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(w, Finalizer) {
			return ctrl.Result{}, nil
		}
		err := r.updateWithRetry(ctx, req, w, func(w *benchv1.Widget) bool {
			return controllerutil.RemoveFinalizer(w, Finalizer)
		})
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !controllerutil.ContainsFinalizer(w, Finalizer) {
		err := r.updateWithRetry(ctx, req, w, func(w *benchv1.Widget) bool {
			return controllerutil.AddFinalizer(w, Finalizer)
		})
		if err != nil {
			return ctrl.Result{}, err
		}
	}

	setStatus := func(w *benchv1.Widget) {
		for _, c := range Desired(w) {
			c.ObservedGeneration = w.Generation
			meta.SetStatusCondition(&w.Status.Conditions, c)
		}
		w.Status.ObservedGeneration = w.Generation
	}
	setStatus(w)
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
				return err
			}
			setStatus(w)
		}
		first = false
		return r.client.Status().Update(ctx, w)
	})
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to update status: %w", err))
	}
	return ctrl.Result{}, nil
}

// updateWithRetry applies mutate to w and updates it, re-fetching and applying mutate again after
// each conflict. mutate reports whether it changed anything; when it did not, nothing is sent.
func (r *naive) updateWithRetry(ctx context.Context, req ctrl.Request, w *benchv1.Widget, mutate func(*benchv1.Widget) bool) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
				return err
			}
		}
		first = false
		if !mutate(w) {
			return nil
		}
		return r.client.Update(ctx, w)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to update finalizers: %w", err)
	}
	return err
}
