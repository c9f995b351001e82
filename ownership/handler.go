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

package ownership

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueOwner returns an event handler that maps a child to its controlling owner of
// ownerType's kind, whichever mechanism records it, so that a change to a child in another
// namespace, or to a cluster-scoped child, reconciles its owner. c is the manager (or cluster)
// whose controller the handler feeds: its scheme, RESTMapper and cache.
//
//   - A controller owner reference to ownerType's group and kind enqueues the owner; c's
//     RESTMapper tells whether that kind is cluster-scoped (no namespace in the request) or
//     namespaced (the child's namespace).
//   - Tracking annotations naming ownerType's group and kind enqueue the owner they name.
//   - An update enqueues the owners of the old and the new object, so that both hear of a
//     child that changes hands. Owners of other kinds, and owner references without the
//     controller flag, are ignored.
//   - An owner that c's cache cannot hold is not enqueued: one in a namespace outside a cache
//     limited to namespaces (cache.Options.DefaultNamespaces), such as the owner of a
//     cluster-scoped child that another instance of the operator, or another test, manages.
//     Its reconcile could only fail to read it. The handler asks the cache for the owner, as
//     ownerType's Go type, on each event; the controller's For(ownerType) keeps that informer.
//   - Requests name owners, not incarnations: a request for a deleted owner's name reaches the
//     object that has the name now, whose reconcile finds that it does not own the child.
//
// Register it with builder.Watches, once per kind of child:
//
//	ctrl.NewControllerManagedBy(mgr).
//		For(&v1alpha1.Cluster{}).
//		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(mgr, &v1alpha1.Cluster{})).
//		Complete(r)
//
// builder.Owns does the same for owner references only. Use Owns for kinds whose children are
// always in the owner's namespace (or whose owner is cluster-scoped), and Watches with
// EnqueueOwner for kinds that may have tracked children; not both for the same kind, which
// would watch it twice.
//
// When ownerType's kind is unknown to c's scheme, which also makes For(ownerType) fail, or the
// RESTMapper does not know it, the handler logs the error on each event and enqueues nothing.
func EnqueueOwner(c cluster.Cluster, ownerType client.Object) handler.EventHandler {
	m := &ownerMapper{mapper: c.GetRESTMapper(), cache: c.GetCache()}
	gvk, err := apiutil.GVKForObject(ownerType, c.GetScheme())
	if err != nil {
		m.err = fmt.Errorf("failed to find the kind of the owner type %T: %w", ownerType, err)
	} else {
		m.kind = gvk.GroupKind()
		m.version = gvk.Version
		m.prototype = ownerType
	}
	return handler.EnqueueRequestsFromMapFunc(m.requests)
}

type ownerMapper struct {
	mapper    meta.RESTMapper
	cache     client.Reader
	kind      schema.GroupKind
	version   string
	prototype client.Object
	err       error
}

func (m *ownerMapper) requests(ctx context.Context, child client.Object) []reconcile.Request {
	if m.err != nil {
		log.FromContext(ctx).Error(m.err, "Cannot map the child to its owner")
		return nil
	}
	if isNil(child) {
		return nil
	}
	var out []reconcile.Request
	for _, o := range owners(child) {
		if o.GroupKind() != m.kind || o.Name == "" {
			continue
		}
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}}
		if o.Mechanism == ControllerReference && o.Namespace != "" {
			namespaced, err := m.namespaced()
			if err != nil {
				log.FromContext(ctx).Error(err, "Cannot map the child to its owner", "ownerKind", m.kind.String())
				continue
			}
			if !namespaced {
				req.Namespace = ""
			}
		}
		if !m.cacheable(ctx, req) {
			continue
		}
		out = append(out, req)
	}
	return out
}

// cacheable reports whether the cache can hold the owner req names: reading it succeeds or
// finds nothing. Any other answer, such as "unknown namespace for the cache" from a cache
// limited to namespaces, means the owner's reconcile could not read it either.
func (m *ownerMapper) cacheable(ctx context.Context, req reconcile.Request) bool {
	if m.cache == nil {
		return true
	}
	owner := newObjectLike(m.prototype)
	err := m.cache.Get(ctx, req.NamespacedName, owner, client.UnsafeDisableDeepCopy)
	if err == nil || apierrors.IsNotFound(err) {
		return true
	}
	log.FromContext(ctx).V(1).Info("Ignoring a child whose owner the cache cannot hold",
		"ownerKind", m.kind.String(), "owner", req.String(), "reason", err.Error())
	return false
}

// namespaced reports whether the owner kind is namespaced. The mapper is asked on each event,
// not once, because the owner's CRD may be installed after the controller starts; a
// controller-runtime mapper caches the answer.
func (m *ownerMapper) namespaced() (bool, error) {
	if m.mapper == nil {
		return false, fmt.Errorf("failed to find the scope of %s: no RESTMapper", m.kind)
	}
	mapping, err := m.mapper.RESTMapping(m.kind, m.version)
	if err != nil {
		return false, fmt.Errorf("failed to find the scope of %s: %w", m.kind, err)
	}
	return mapping.Scope.Name() != meta.RESTScopeNameRoot, nil
}

// newObjectLike returns an empty object of obj's Go type to read into, keeping the kind of an
// unstructured or metadata-only object.
func newObjectLike(obj client.Object) client.Object {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(o.GroupVersionKind())
		return fresh
	case *metav1.PartialObjectMetadata:
		return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta}
	}
	fresh, _ := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	return fresh
}
