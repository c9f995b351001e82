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

package conditions_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func TestUnstructuredRoundTrip(t *testing.T) {
	g := NewWithT(t)
	typed := widget(3, cond("Ready", "True", "Succeeded", "ok", 3, at(0)))
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}

	a, err := conditions.FromUnstructured(u)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conditions.IsTrue(a, conditions.Ready)).To(BeTrue())
	g.Expect(a.GetName()).To(Equal("w"))

	conditions.MarkFalse(a, "Available", "Down", "no endpoints")

	// The change is in the unstructured object itself.
	var back testtypes.Widget
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &back)).To(Succeed())
	g.Expect(types(back.Status.Conditions)).To(Equal([]string{"Ready", "Available"}))
	g.Expect(back.Status.Conditions[1].ObservedGeneration).To(BeEquivalentTo(3))

	g.Expect(conditions.Delete(a, "Available")).To(BeTrue())
	g.Expect(conditions.Delete(a, conditions.Ready)).To(BeTrue())
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions")
	g.Expect(found).To(BeFalse(), "an empty list removes the field")
}

func TestFromUnstructuredRejectsMalformedConditions(t *testing.T) {
	tests := []struct {
		name   string
		status any
		want   string
	}{
		{"conditions is not a list", map[string]any{"conditions": "Ready"}, "failed to read status.conditions"},
		{"an item is not an object", map[string]any{"conditions": []any{"Ready"}}, "status.conditions[0] of Thing t: not an object"},
		{"a field has the wrong type", map[string]any{"conditions": []any{map[string]any{"type": int64(1)}}}, "status.conditions[0] of Thing t"},
		{"a value JSON cannot hold", map[string]any{"conditions": []any{map[string]any{"type": 1}}}, "status.conditions[0] of Thing t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			u := &unstructured.Unstructured{Object: map[string]any{"kind": "Thing", "metadata": map[string]any{"name": "t"}, "status": tt.status}}
			_, err := conditions.FromUnstructured(u)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestComputeAndCheckOnUnstructured(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"kind":     "Thing",
		"metadata": map[string]any{"name": "t", "generation": int64(1)},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "Succeeded", "message": "",
				"observedGeneration": int64(1), "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z"),
			}},
		},
	}}

	res, err := compute(u)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Status).To(Equal(conditions.KStatusCurrent))
}
