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

package objects

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Empty returns an empty object of obj's type, to read or decode into without fields of an
// earlier state surviving: for an unstructured object one of its apiVersion and kind, for a
// metadata-only object one of its TypeMeta, otherwise a new value of the struct obj points to.
// Name and namespace are not set. It fails when obj is not a pointer to a struct.
func Empty(obj client.Object) (client.Object, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(o.GroupVersionKind())
		return fresh, nil
	case *metav1.PartialObjectMetadata:
		return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta}, nil
	}
	t := reflect.TypeOf(obj)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	// A *T that is a client.Object has its methods on the pointer, so a new *T is one too.
	fresh, ok := reflect.New(t.Elem()).Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	return fresh, nil
}

// CopyInto makes dst a shallow copy of src, an object of the same type: dst shares src's
// maps and slices afterwards (an unstructured dst holds src's map itself). It fails, changing
// nothing, when the types differ.
func CopyInto(dst, src client.Object) error {
	if d, ok := dst.(*unstructured.Unstructured); ok {
		s, ok := src.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cannot copy %T into %T", src, dst)
		}
		d.Object = s.Object
		return nil
	}
	sv, dv := reflect.ValueOf(src), reflect.ValueOf(dst)
	if sv.Type() != dv.Type() || sv.Kind() != reflect.Pointer || sv.IsNil() || dv.IsNil() {
		return fmt.Errorf("cannot copy %T into %T", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// ToMap returns obj as a JSON value: for a typed object the one
// runtime.DefaultUnstructuredConverter returns, for an unstructured object the object's own map,
// which callers must not modify.
func ToMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	if _, ok := obj.(runtime.Unstructured); !ok {
		m, planned, err := toMapPlanned(obj)
		if err != nil {
			return nil, fmt.Errorf("failed to convert %T to unstructured: %w", obj, err)
		}
		if planned {
			return m, nil
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert %T to unstructured: %w", obj, err)
	}
	return m, nil
}
