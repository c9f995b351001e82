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
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/objects"
)

// newLike returns an empty object of obj's type with obj's name and namespace (and, for an
// unstructured object, kind gvk): something to decode a response or a read into, without stale
// fields surviving from a previous state.
func newLike(obj client.Object, gvk schema.GroupVersionKind) (client.Object, error) {
	fresh, err := objects.Empty(obj)
	if err != nil {
		return nil, err
	}
	if u, ok := fresh.(*unstructured.Unstructured); ok && !gvk.Empty() {
		u.SetGroupVersionKind(gvk)
	}
	fresh.SetName(obj.GetName())
	fresh.SetNamespace(obj.GetNamespace())
	return fresh, nil
}

// deepCopyObject returns a deep copy of obj.
func deepCopyObject(obj client.Object) client.Object {
	c, _ := obj.DeepCopyObject().(client.Object)
	return c
}

// withStatusOf returns a copy of obj with the status of resp, an object the server returned
// (m is resp as a JSON value), or obj itself when the copy cannot be made. When both are of one
// Go type with a status field, the copy is made in that type, field for field; otherwise through
// their JSON values.
func withStatusOf(obj, resp client.Object, m map[string]any) client.Object {
	if out, ok := withTypedStatusOf(obj, resp); ok {
		return out
	}
	u, err := objects.ToMap(deepCopyObject(obj))
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

// withTypedStatusOf returns a deep copy of obj with a deep copy of resp's status field, when
// obj and resp are pointers to one struct type whose field Status is its "status"; ok is false
// otherwise.
func withTypedStatusOf(obj, resp client.Object) (client.Object, bool) {
	v, r := reflect.ValueOf(obj), reflect.ValueOf(resp)
	if v.Type() != r.Type() || v.Kind() != reflect.Pointer || v.IsNil() || r.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := v.Elem().Type().FieldByName("Status")
	if !ok || len(f.Index) != 1 {
		return nil, false
	}
	if name, _ := jsonField(f); name != "status" {
		return nil, false
	}
	out, from := deepCopyObject(obj), deepCopyObject(resp)
	if out == nil || from == nil {
		return nil, false
	}
	reflect.ValueOf(out).Elem().Field(f.Index[0]).Set(reflect.ValueOf(from).Elem().Field(f.Index[0]))
	return out, true
}
