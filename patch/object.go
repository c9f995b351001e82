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

package patch

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// toMap returns obj as a JSON value. For an unstructured object it is the object's own map, which
// callers must not modify.
func toMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert %T to unstructured: %w", obj, err)
	}
	return m, nil
}

// newLike returns an empty object of obj's type with obj's name and namespace (and, for an
// unstructured object, its kind): something to decode a response or a read into, without stale
// fields surviving from a previous state.
func newLike(obj client.Object, gvk schema.GroupVersionKind) (client.Object, error) {
	var fresh client.Object
	if _, ok := obj.(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		fresh = u
	} else {
		t := reflect.TypeOf(obj)
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return nil, fmt.Errorf("%T is not a pointer to a struct", obj)
		}
		o, ok := reflect.New(t.Elem()).Interface().(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not a client.Object", obj)
		}
		fresh = o
	}
	fresh.SetName(obj.GetName())
	fresh.SetNamespace(obj.GetNamespace())
	return fresh, nil
}

// copyInto makes dst a shallow copy of src, an object of the same type.
func copyInto(dst, src client.Object) {
	if d, ok := dst.(*unstructured.Unstructured); ok {
		if s, ok := src.(*unstructured.Unstructured); ok {
			d.Object = s.Object
		}
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// deepCopyObject returns a deep copy of obj.
func deepCopyObject(obj client.Object) client.Object {
	c, _ := obj.DeepCopyObject().(client.Object)
	return c
}

// withStatusOf returns a copy of obj with the status of m, an object the server returned, or obj
// itself when the copy cannot be made.
func withStatusOf(obj client.Object, m map[string]any) client.Object {
	u, err := toMap(deepCopyObject(obj))
	if err != nil {
		return obj
	}
	if status, ok := m["status"]; ok {
		u["status"] = runtime.DeepCopyJSONValue(status)
	} else {
		delete(u, "status")
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return &unstructured.Unstructured{Object: u}
	}
	out := deepCopyObject(obj)
	reflect.ValueOf(out).Elem().Set(reflect.Zero(reflect.TypeOf(out).Elem()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return obj
	}
	return out
}
