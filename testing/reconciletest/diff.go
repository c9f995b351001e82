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

package reconciletest

import (
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/testing/faults"
)

// describeWrite explains what a write of the idempotency check changed: the patch it sent and,
// when the object was known before, a diff of the object.
func describeWrite(w faults.Call, before map[objectKey]map[string]any) string {
	var b strings.Builder
	if len(w.Patch) > 0 {
		b.WriteString("\npatch: " + string(w.Patch))
	}
	if w.Object == nil {
		return b.String()
	}
	old, known := before[objectKey{gk: w.GVK.GroupKind(), key: w.Key}]
	if !known {
		return b.String()
	}
	diff := cmp.Diff(old, normalized(w.Object))
	if diff == "" {
		b.WriteString("\nthe object did not change: the request was sent although the object was already as desired")
		return b.String()
	}
	b.WriteString("\nobject diff (-before +after):\n" + strings.TrimRight(diff, "\n"))
	return b.String()
}

// normalized returns obj as a map without the fields every write changes or that depend on how
// the object was read: resourceVersion, managedFields, apiVersion and kind.
func normalized(obj client.Object) map[string]any {
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = runtime.DeepCopyJSON(u.Object)
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return map[string]any{"error": err.Error()}
		}
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	return m
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
