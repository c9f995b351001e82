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
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// controllerUtil uses controller-runtime's own helpers: controllerutil.CreateOrPatch reads the
// object, runs a mutate function that adds the finalizer and sets the conditions (with
// meta.SetStatusCondition), and sends a JSON merge patch (client.MergeFrom, no optimistic lock)
// of metadata and spec, then one of the status, each only when it changed. Errors are returned.
//
// A merge patch replaces lists whole: the status patch carries the full status.conditions list
// as this reconcile saw it, so a condition another writer changed after the cache was filled is
// overwritten with the stale copy, and one it added is dropped.
type controllerUtil struct {
	client client.Client
}

func newControllerutil(c client.Client, fieldOwner string) reconcile.Reconciler {
	return &controllerUtil{client: client.WithFieldOwner(c, fieldOwner)}
}

// errGone stops CreateOrPatch from creating a Widget that was deleted: it creates the object
// when it does not exist, which a controller of that object must never do.
var errGone = errors.New("widget is gone")

// Reconcile implements reconcile.Reconciler.
func (r *controllerUtil) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &benchv1.Widget{}
	w.Name, w.Namespace = req.Name, req.Namespace
	_, err := controllerutil.CreateOrPatch(ctx, r.client, w, func() error {
		if w.ResourceVersion == "" {
			return errGone
		}
		if !w.DeletionTimestamp.IsZero() {
			controllerutil.RemoveFinalizer(w, Finalizer)
			return nil
		}
		controllerutil.AddFinalizer(w, Finalizer)
		for _, c := range Desired(w) {
			c.ObservedGeneration = w.Generation
			meta.SetStatusCondition(&w.Status.Conditions, c)
		}
		w.Status.ObservedGeneration = w.Generation
		return nil
	})
	if errors.Is(err, errGone) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("failed to create or patch widget: %w", err))
	}
	return ctrl.Result{}, nil
}
