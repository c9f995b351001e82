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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUpToDate(t *testing.T) {
	desired := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx", "args": []any{"-v"}, "ports": []any{
					map[string]any{"containerPort": int64(80), "protocol": "TCP"},
				}},
			}}},
			"finalizers": []any{"a", "b"},
		},
	}
	// The live object as the API server returns it: defaults, another manager's fields.
	live := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web", "other": "x"}},
		"spec": map[string]any{
			"replicas":             float64(3),
			"revisionHistoryLimit": int64(10),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx", "args": []any{"-v"}, "imagePullPolicy": "Always", "ports": []any{
					map[string]any{"containerPort": int64(80), "protocol": "TCP"},
				}},
			}}},
			"finalizers": []any{"a", "b"},
		},
	}
	owned := `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:finalizers":{"v:\"a\"":{},"v:\"b\"":{}},` +
		`"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},"f:args":{},` +
		`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}`
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, FieldsV1: metav1.NewFieldsV1(fields)}
	}

	for _, tc := range []struct {
		name    string
		mutate  func(desired, live map[string]any)
		managed []metav1.ManagedFieldsEntry
		want    bool
	}{{
		name:    "every desired field is live and owned exactly",
		managed: []metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:other":{}}}}`), entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
		want:    true,
	}, {
		name:    "no managedFields (a cache that strips them)",
		managed: nil,
	}, {
		name:    "the manager's entry is for another subresource",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "status", owned)},
	}, {
		name:    "the manager's entry is an update, not an apply",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationUpdate, "", owned)},
	}, {
		name:    "a desired value differs",
		mutate:  func(d, _ map[string]any) { d["spec"].(map[string]any)["replicas"] = int64(4) },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name: "an atomic list differs",
		mutate: func(_, l map[string]any) {
			containers := l["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
			containers[0].(map[string]any)["args"] = []any{"-v", "-x"}
		},
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name:    "a desired field is not owned yet",
		mutate:  func(d, _ map[string]any) { d["metadata"].(map[string]any)["labels"].(map[string]any)["other"] = "x" },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name:    "an owned field is no longer desired (the apply would remove it)",
		mutate:  func(d, _ map[string]any) { delete(d["metadata"].(map[string]any), "labels") },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name: "a list element is owned by another key",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "",
			`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:finalizers":{"v:\"a\"":{},"v:\"c\"":{}},"f:template":{}}}`)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d, l := deepCopyMap(desired), deepCopyMap(live)
			if tc.mutate != nil {
				tc.mutate(d, l)
			}
			g.Expect(upToDate(d, l, tc.managed, "me", "")).To(Equal(tc.want))
		})
	}
}

func TestApplyCacheKeepsRecentEntriesWithinItsSize(t *testing.T) {
	g := NewWithT(t)
	c := newApplyCache(4)
	key := func(i int) applyKey {
		return applyKey{gvk: schema.GroupVersionKind{Kind: "ConfigMap"}, name: string(rune('a' + i))}
	}
	for i := range 10 {
		c.put(key(i), applyRecord{resourceVersion: string(rune('0' + i))})
		// Entry 0 is used all the time and stays.
		_, ok := c.get(key(0))
		g.Expect(ok).To(BeTrue(), "after put %d", i)
	}
	_, ok := c.get(key(1))
	g.Expect(ok).To(BeFalse(), "an entry not used for a while is dropped")
	r, ok := c.get(key(9))
	g.Expect(ok).To(BeTrue())
	g.Expect(r.resourceVersion).To(Equal("9"))
	g.Expect(len(c.cur) + len(c.old)).To(BeNumerically("<=", 4))

	c.forget(func(k applyKey) bool { return k == key(9) })
	_, ok = c.get(key(9))
	g.Expect(ok).To(BeFalse())
}
