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
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The keys of the [TrackingLabels] mechanism. They are shared by every controller built with
// this package, so that two controllers can never both track the same child, just as only one
// owner reference can be the controller.
const (
	// LabelOwnerUID is the label that holds the owner's metadata.uid. Being a label, it can be
	// selected on: `kubectl get configmaps -A -l ownership.tenon.dev/owner-uid=<uid>` lists the
	// tracked children of one owner, and a cache can be limited to tracked objects with an
	// "exists" selector on it. A UID is 36 characters, within the 63 a label value may have, and
	// it names one incarnation of the owner: a new object with the same name has a new UID.
	LabelOwnerUID = "ownership.tenon.dev/owner-uid"

	// AnnotationOwnerKind is the annotation that holds the owner's kind and group, as
	// "Kind.group" ("Cluster.apps.example.com"), or just "Kind" for the core group.
	AnnotationOwnerKind = "ownership.tenon.dev/owner-kind"

	// AnnotationOwnerNamespace is the annotation that holds the owner's namespace. It is absent
	// when the owner is cluster-scoped.
	AnnotationOwnerNamespace = "ownership.tenon.dev/owner-namespace"

	// AnnotationOwnerName is the annotation that holds the owner's name. Names may be longer
	// than a label value, so the identity lives in annotations and only the UID in a label.
	AnnotationOwnerName = "ownership.tenon.dev/owner-name"
)

// trackerOf returns the owner recorded by obj's tracking label and annotations. The label is
// what makes a child tracked; the annotations only describe the owner.
func trackerOf(obj metav1.Object) (Owner, bool) {
	uid := obj.GetLabels()[LabelOwnerUID]
	if uid == "" {
		return Owner{}, false
	}
	a := obj.GetAnnotations()
	gk := schema.ParseGroupKind(a[AnnotationOwnerKind])
	return Owner{
		Group: gk.Group, Kind: gk.Kind, Namespace: a[AnnotationOwnerNamespace], Name: a[AnnotationOwnerName], UID: types.UID(uid),
		Mechanism: TrackingLabels,
	}, true
}

// track writes owner's tracking label and annotations on obj and reports whether any changed.
func track(obj metav1.Object, owner reference) (changed bool) {
	labels, lc := put(obj.GetLabels(), LabelOwnerUID, string(owner.UID))
	if lc {
		obj.SetLabels(labels)
	}
	annotations := obj.GetAnnotations()
	var ac, c bool
	annotations, c = put(annotations, AnnotationOwnerKind, owner.groupKind().String())
	ac = ac || c
	if owner.Namespace != "" {
		annotations, c = put(annotations, AnnotationOwnerNamespace, owner.Namespace)
	} else {
		annotations, c = remove(annotations, AnnotationOwnerNamespace)
	}
	ac = ac || c
	annotations, c = put(annotations, AnnotationOwnerName, owner.Name)
	ac = ac || c
	if ac {
		obj.SetAnnotations(annotations)
	}
	return lc || ac
}

// untrack removes the tracking label and annotations from obj and reports whether there were
// any.
func untrack(obj metav1.Object) (changed bool) {
	labels, lc := remove(obj.GetLabels(), LabelOwnerUID)
	if lc {
		obj.SetLabels(labels)
	}
	annotations := obj.GetAnnotations()
	var ac bool
	for _, key := range []string{AnnotationOwnerKind, AnnotationOwnerNamespace, AnnotationOwnerName} {
		var c bool
		annotations, c = remove(annotations, key)
		ac = ac || c
	}
	if ac {
		obj.SetAnnotations(annotations)
	}
	return lc || ac
}

// put returns m with key set to value, and reports whether that changed anything. m itself is
// never modified: callers may share one labels map between several objects.
func put(m map[string]string, key, value string) (map[string]string, bool) {
	if v, ok := m[key]; ok && v == value {
		return m, false
	}
	out := make(map[string]string, len(m)+1)
	maps.Copy(out, m)
	out[key] = value
	return out, true
}

// remove returns m without key, and reports whether key was there. m itself is never modified.
func remove(m map[string]string, key string) (map[string]string, bool) {
	if _, ok := m[key]; !ok {
		return m, false
	}
	out := maps.Clone(m)
	delete(out, key)
	return out, true
}
