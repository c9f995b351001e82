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
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Mechanism is how a child records the owner that controls it.
type Mechanism string

const (
	// ControllerReference is an entry of the child's metadata.ownerReferences with Controller
	// set to true. The garbage collector deletes the child after its owner, and builder.Owns
	// maps the child's events to the owner. Kubernetes allows it when the owner is
	// cluster-scoped, or when owner and child are in the same namespace.
	ControllerReference Mechanism = "ControllerReference"

	// TrackingLabels is the label [LabelOwnerUID] plus the annotations [AnnotationOwnerKind],
	// [AnnotationOwnerNamespace] and [AnnotationOwnerName] on the child. [Set] uses it where an
	// owner reference is not allowed: for a child in another namespace than its namespaced
	// owner, and for a cluster-scoped child of a namespaced owner. The garbage collector ignores
	// it: [DeleteTracked] deletes such children from the owner's finalizer, and [EnqueueOwner]
	// maps their events to the owner.
	TrackingLabels Mechanism = "TrackingLabels"
)

// Owner is the object that controls a child, and how the child records it. See [OwnerOf].
type Owner struct {
	// Group is the owner's API group; empty for the core group.
	Group string
	// Kind is the owner's kind, such as "Cluster".
	Kind string
	// Namespace is empty for a cluster-scoped owner. For [ControllerReference] it is the
	// child's namespace, since an owner reference records none (see [OwnerOf]).
	Namespace string
	// Name is the owner's name.
	Name string
	// UID is the owner's metadata.uid: it tells apart two owners that had the same name at
	// different times.
	UID types.UID

	// Mechanism is how the child records the owner.
	Mechanism Mechanism
}

// GroupKind returns the group and kind of o.
func (o Owner) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: o.Group, Kind: o.Kind}
}

// String returns "Kind.group namespace/name", the form kubectl accepts ("ConfigMap ns/name" for
// the core group, "Kind.group name" for cluster-scoped objects). The UID is not part of it.
func (o Owner) String() string {
	return o.reference().String()
}

func (o Owner) reference() reference {
	return reference{Group: o.Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

// reference identifies an object independently of its API version. Kind may be empty in errors
// about objects whose kind could not be determined, and UID for an object not created yet.
type reference struct {
	Group, Kind, Namespace, Name string
	UID                          types.UID
}

func (r reference) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// String returns "Kind.group namespace/name", as [Owner.String].
func (r reference) String() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	if kind := r.groupKind().String(); kind != "" {
		return kind + " " + name
	}
	return name
}

// referenceTo returns obj's reference, with its kind from scheme (or obj's TypeMeta).
func referenceTo(obj client.Object, scheme *runtime.Scheme) (reference, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return reference{}, fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	return reference{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}, nil
}

// describe returns obj's reference for messages; the kind is left empty when it is unknown.
func describe(obj client.Object, scheme *runtime.Scheme) reference {
	if scheme != nil {
		if ref, err := referenceTo(obj, scheme); err == nil {
			return ref
		}
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	return reference{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// controllerOf returns the owner recorded by obj's controller reference. An owner reference
// has no namespace: the owner is in obj's namespace, or cluster-scoped.
func controllerOf(obj metav1.Object) (Owner, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return Owner{}, false
	}
	return ownerFrom(*ref, obj.GetNamespace()), true
}

// ownerFrom returns the owner that ref, on a child in childNamespace, names.
func ownerFrom(ref metav1.OwnerReference, childNamespace string) Owner {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return Owner{Group: gv.Group, Kind: ref.Kind, Namespace: childNamespace, Name: ref.Name, UID: ref.UID, Mechanism: ControllerReference}
}

// owners returns the owners obj records, its controller reference first. Usually there is at
// most one; there are two when two controllers each used another mechanism.
func owners(obj metav1.Object) []Owner {
	var out []Owner
	if o, ok := controllerOf(obj); ok {
		out = append(out, o)
	}
	if o, ok := trackerOf(obj); ok {
		out = append(out, o)
	}
	return out
}

// isNil reports whether obj is nil or a typed nil pointer.
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
