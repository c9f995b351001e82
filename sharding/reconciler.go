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
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler wraps r, the reconciler of the ring's main kind, so that it works only on the
// objects this shard holds and hands the others over. For each request it reads the object
// into a new object of obj's type through c (the manager's client: from the cache) and
//
//   - when it does not exist, calls r, which sees it gone as after a delete: an object that
//     left this shard's cache is no longer this shard's, so r must only forget what it keeps
//     in memory about it, as it does for a deleted one;
//   - when its shard label names another shard or none, returns without calling r: it was
//     assigned elsewhere and this shard's cache has not caught up yet;
//   - when it carries the drain label, acknowledges the drain without calling r: it removes the
//     shard and drain labels with one JSON patch that tests the object's uid and that the shard
//     label still names this shard, and never touches anything else. The sharder then assigns
//     the object to its new shard;
//   - otherwise calls r.
//
// controller-runtime never runs two reconciles of one key at once in one controller, so the
// acknowledgement comes after the key's reconcile in flight in this controller, if any, has
// returned. An operator may run several controllers for its main kind (one for the spec, one
// for a subresource): build all their reconcilers from one Shard that [New] returned, or from
// copies of it. Then the acknowledgement also waits for the reconciles of the object in flight
// in the other controllers, and none of them starts one once a drain was seen: once the
// acknowledgement is written, this shard starts no work on the object, and every write of its
// reconcilers for the object happened before it. Work that r hands to goroutines of its own
// which outlive its Reconcile is not covered. A write addressed by name alone lands on whatever
// object has that name when it arrives, which may be an object deleted and created again under
// the name meanwhile, held by another shard: make r's writes to the object conditional on the
// uid it read (patch.Helper's writes test it).
//
// A refused acknowledgement (the object changed its shard, lost the drain label or is gone) is
// not an error: the change that refused it reaches the controller as an event. A fenced client
// (see [ForManager]) refuses the acknowledgement, like every write, once the shard may have
// lost its Lease; the sharder then moves the object without it.
//
// c must read obj's kind from the cache [Shard.SelectCache] selected, as the manager's client
// does for typed objects: for unstructured ones set client.CacheOptions.Unstructured in the
// manager's client options. A client that reads from the API server finds an object that left
// the shard still there, on another shard, and the wrapped reconciler is never told it left.
//
// obj may be a typed object, an unstructured one or a metav1.PartialObjectMetadata (for a
// controller that watches metadata only); the last two must have their apiVersion and kind set.
// Reconciler returns an error when c, obj or r is nil, or obj has no kind it can read.
func (s Shard) Reconciler(c client.Client, obj client.Object, r reconcile.Reconciler) (reconcile.Reconciler, error) {
	switch {
	case c == nil:
		return nil, errors.New("failed to build the shard's reconciler: the client is nil")
	case obj == nil || reflect.ValueOf(obj).IsNil():
		return nil, errors.New("failed to build the shard's reconciler: the object is nil")
	case r == nil:
		return nil, errors.New("failed to build the shard's reconciler: the reconciler is nil")
	}
	kind := reflect.TypeOf(obj).String()
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("failed to build the shard's reconciler: the %T has no apiVersion and kind", obj)
		}
		kind = gvk.String()
	}
	f := s.flights
	if f == nil {
		f = newFlights()
	}
	return &reconciler{shard: s, client: c, proto: obj, kind: kind, inner: r, flights: f}, nil
}

// reconciler is what [Shard.Reconciler] returns.
type reconciler struct {
	shard  Shard
	client client.Client
	proto  client.Object
	// kind names the prototype's kind in the keys of flights.
	kind    string
	inner   reconcile.Reconciler
	flights *flights
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile implements reconcile.Reconciler: see [Shard.Reconciler].
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := r.kind + " " + req.String()
	obj := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("failed to read %s to check its shard: %w", req.NamespacedName, err)
		}
		return r.run(ctx, key, "", req)
	}
	switch {
	case !r.shard.assigned(obj):
		log.FromContext(ctx).V(1).Info("Skipping an object of another shard", "shard", obj.GetLabels()[r.shard.ShardLabel()])
		return ctrl.Result{}, nil
	case r.shard.Draining(obj):
		if err := r.flights.drain(ctx, key, obj.GetResourceVersion()); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to wait for the reconciles of %s in flight before its drain: %w", req.NamespacedName, err)
		}
		return ctrl.Result{}, r.acknowledge(ctx, obj)
	}
	return r.run(ctx, key, obj.GetResourceVersion(), req)
}

// run calls the wrapped reconciler for the object read at resourceVersion rv ("" when it is
// gone), unless the object is being handed over.
func (r *reconciler) run(ctx context.Context, key, rv string, req ctrl.Request) (ctrl.Result, error) {
	if !r.flights.begin(key, rv) {
		log.FromContext(ctx).V(1).Info("Skipping an object this shard is handing over")
		return ctrl.Result{}, nil
	}
	defer r.flights.end(key)
	return r.inner.Reconcile(ctx, req)
}

// newObject returns an empty object of the prototype's type (and kind, for unstructured and
// metadata-only ones).
func (r *reconciler) newObject() client.Object { return newObjectLike(r.proto) }

// acknowledge removes the shard and drain labels from obj, which this shard holds. Until a
// reconciler of the shard reads the object gone, or back on this shard without the drain label
// at a newer resourceVersion, none of them calls theirs for it.
func (r *reconciler) acknowledge(ctx context.Context, obj client.Object) error {
	body, err := r.shard.acknowledgement(obj)
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body))
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Acknowledged the drain: the object leaves this shard", "shard", r.shard.Name)
		return nil
	case apierrors.IsInvalid(err), apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// A test failed: the object is no longer this shard's, or no longer draining. The
		// write that changed it is on its way to the cache as an event, whose reconcile finds
		// out which.
		log.FromContext(ctx).V(1).Info("The drain's acknowledgement was refused: the object changed", "reason", err.Error())
		return nil
	}
	return fmt.Errorf("failed to acknowledge the drain of %s: %w", client.ObjectKeyFromObject(obj), err)
}

// acknowledgement returns the JSON patch that removes the shard and drain labels from obj if
// it is still the object the cache showed and still this shard's.
func (s Shard) acknowledgement(obj client.Object) ([]byte, error) {
	shardPath := "/metadata/labels/" + escapePointer(s.ShardLabel())
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": string(obj.GetUID())},
		{"op": "test", "path": shardPath, "value": s.Name},
		{"op": "remove", "path": shardPath},
		{"op": "remove", "path": "/metadata/labels/" + escapePointer(s.DrainLabel())},
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the drain's acknowledgement: %w", err)
	}
	return body, nil
}

// escapePointer escapes a map key for a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
