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

package testenv

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newLike returns an empty object of obj's type, to read into without merging into stale fields.
func newLike(e *Environment, obj client.Object) (client.Object, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(u.GroupVersionKind())
		return fresh, nil
	}
	gvk, err := apiutil.GVKForObject(obj, e.opts.Scheme)
	if err != nil {
		return nil, fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	fresh, err := e.opts.Scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("failed to create a %s: %w", gvk.Kind, err)
	}
	o, ok := fresh.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", fresh)
	}
	return o, nil
}

// copyInto overwrites dst with src, which has the same concrete type.
func copyInto(src, dst client.Object) error {
	sv, dv := reflect.ValueOf(src), reflect.ValueOf(dst)
	if sv.Type() != dv.Type() || sv.Kind() != reflect.Pointer {
		return fmt.Errorf("cannot copy %T into %T", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// kindOf names obj's kind for messages.
func kindOf(e *Environment, obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, e.opts.Scheme); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
