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

package realkinds

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object returns k's seed as an unstructured object named name, in namespace (ignored for a
// cluster-scoped kind), status included.
func Object(k Kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: k.Seed()}
	u.SetGroupVersionKind(k.GVK)
	u.SetName(name)
	if k.Namespaced {
		u.SetNamespace(namespace)
	}
	return u
}

// CreateObject creates obj, an object of kind k as [Object] returns it, and writes its status
// through the status subresource; it returns the object as the API server then has it.
func CreateObject(ctx context.Context, c client.Client, k Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	status, hasStatus := obj.Object["status"]
	if err := c.Create(ctx, obj); err != nil {
		return nil, fmt.Errorf("failed to create %s %s: %w", k.GVK.Kind, obj.GetName(), err)
	}
	if hasStatus && !k.NoStatus {
		obj.Object["status"] = status
		if err := c.Status().Update(ctx, obj); err != nil {
			return nil, fmt.Errorf("failed to write the status of %s %s: %w", k.GVK.Kind, obj.GetName(), err)
		}
	}
	return obj, nil
}

// Create creates k's seed named name in namespace, as [CreateObject] does, deletes it when t
// ends (a cluster-scoped object outlives the test's namespace), and returns it as the API server
// has it. It fails t when the seed is refused.
func Create(t testing.TB, c client.Client, k Kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := CreateObject(t.Context(), c, k, Object(k, namespace, name))
	if err != nil {
		t.Fatalf("realkinds: %v", err)
	}
	if !k.Namespaced {
		t.Cleanup(func() {
			gone := &unstructured.Unstructured{}
			gone.SetGroupVersionKind(k.GVK)
			gone.SetName(obj.GetName())
			_ = client.IgnoreNotFound(c.Delete(context.Background(), gone))
		})
	}
	return obj
}
