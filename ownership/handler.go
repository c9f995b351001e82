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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueOwner returns an event handler that maps a child to its controlling owner of
// ownerType's kind, whichever mechanism records it, so that a change to a child in another
// namespace, or to a cluster-scoped child, reconciles its owner.
//
//   - A controller owner reference to ownerType's group and kind enqueues the owner; mapper
//     tells whether that kind is cluster-scoped (no namespace in the request) or namespaced
//     (the child's namespace).
//   - Tracking annotations naming ownerType's group and kind enqueue the owner they name.
//   - An update enqueues the owners of the old and the new object, so that both hear of a
//     child that changes hands. Owners of other kinds, and owner references without the
//     controller flag, are ignored.
//   - Requests name owners, not incarnations: a request for a deleted owner's name reaches the
//     object that has the name now, whose reconcile finds that it does not own the child.
//
// Register it with builder.Watches, once per kind of child:
//
//	ctrl.NewControllerManagedBy(mgr).
//		For(&v1alpha1.Cluster{}).
//		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.Cluster{})).
//		Complete(r)
//
// builder.Owns does the same for owner references only. Use Owns for kinds whose children are
// always in the owner's namespace (or whose owner is cluster-scoped), and Watches with
// EnqueueOwner for kinds that may have tracked children; not both for the same kind, which
// would watch it twice.
//
// When ownerType's kind is unknown to scheme, which also makes For(ownerType) fail, or the
// mapper does not know it, the handler logs the error on each event and enqueues nothing.
func EnqueueOwner(scheme *runtime.Scheme, mapper meta.RESTMapper, ownerType client.Object) handler.EventHandler {
	m := &ownerMapper{mapper: mapper}
	gvk, err := apiutil.GVKForObject(ownerType, scheme)
	if err != nil {
		m.err = fmt.Errorf("failed to find the kind of the owner type %T: %w", ownerType, err)
	} else {
		m.kind = gvk.GroupKind()
		m.version = gvk.Version
	}
	return handler.EnqueueRequestsFromMapFunc(m.requests)
}

type ownerMapper struct {
	mapper  meta.RESTMapper
	kind    schema.GroupKind
	version string
	err     error
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
		out = append(out, req)
	}
	return out
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
