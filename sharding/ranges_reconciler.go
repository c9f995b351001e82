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

package sharding

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler wraps inner, the reconciler of the ring's main kind, so that it works only on the
// objects of the slices this shard holds. For each request it reads the object into a new
// object of obj's type through c (the manager's client: from the cache [Ranges.SelectCache]
// selected) and
//
//   - when it does not exist, calls inner, which sees it gone as after a delete: an object whose
//     slice this shard gave up leaves its cache, so inner must only forget what it keeps in
//     memory about it, as it does for a deleted one;
//   - when its slice (by its uid, [Ranges.SliceOf]) is not held by this shard, or is being given
//     up, returns without calling inner;
//   - otherwise calls inner, and the shard gives the slice up only after it returned.
//
// Build the reconcilers of every controller of the main kind from one Ranges: a slice is given
// up once none of them has a reconcile of its objects in flight.
//
// The slice is checked on the object read: a write addressed by name alone lands on whatever
// object has that name when it arrives, and an object deleted and created again under its name
// while a reconcile was in flight has a new uid, in another shard's slice. Make inner's writes
// to the object conditional on the uid it read: patch.Helper's writes test it; a raw patch can
// carry metadata.uid, which the API server takes as a precondition. Work that inner hands to
// goroutines of its own which outlive its Reconcile is not covered. obj may be a typed object,
// or an unstructured or metav1.PartialObjectMetadata one with its apiVersion and kind set.
func (r *Ranges) Reconciler(c client.Client, obj client.Object, inner reconcile.Reconciler) (reconcile.Reconciler, error) {
	switch {
	case c == nil:
		return nil, errors.New("failed to build the shard's reconciler: the client is nil")
	case obj == nil || reflect.ValueOf(obj).IsNil():
		return nil, errors.New("failed to build the shard's reconciler: the object is nil")
	case inner == nil:
		return nil, errors.New("failed to build the shard's reconciler: the reconciler is nil")
	}
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("failed to build the shard's reconciler: the %T has no apiVersion and kind", obj)
		}
	}
	return &rangeReconciler{ranges: r, client: c, proto: obj, inner: inner}, nil
}

// errNoUID is the error for an object without a uid, whose slice is unknown.
var errNoUID = errors.New("the object has no uid")

// rangeReconciler is what [Ranges.Reconciler] returns.
type rangeReconciler struct {
	ranges *Ranges
	client client.Client
	proto  client.Object
	inner  reconcile.Reconciler
}

// Reconcile implements reconcile.Reconciler: see [Ranges.Reconciler].
func (r *rangeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := newObjectLike(r.proto)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("failed to read %s to check its slice: %w", req.NamespacedName, err)
		}
		return r.inner.Reconcile(ctx, req)
	}
	if obj.GetUID() == "" {
		return ctrl.Result{}, fmt.Errorf("failed to check the slice of %s: %w", req.NamespacedName, errNoUID)
	}
	slice := r.ranges.SliceOf(string(obj.GetUID()))
	if !r.ranges.state.begin(slice) {
		log.FromContext(ctx).V(1).Info("Skipping an object of a slice this shard does not hold", "slice", slice)
		return ctrl.Result{}, nil
	}
	defer r.ranges.state.end(slice)
	return r.inner.Reconcile(ctx, req)
}

// newObjectLike returns an empty object of proto's type (and kind, for unstructured and
// metadata-only ones).
func newObjectLike(proto client.Object) client.Object {
	switch p := proto.(type) {
	case *unstructured.Unstructured:
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(p.GroupVersionKind())
		return fresh
	case *metav1.PartialObjectMetadata:
		fresh := &metav1.PartialObjectMetadata{}
		fresh.SetGroupVersionKind(p.GroupVersionKind())
		return fresh
	}
	return reflect.New(reflect.TypeOf(proto).Elem()).Interface().(client.Object)
}
