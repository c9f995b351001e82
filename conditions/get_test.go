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

	"github.com/tenon-dev/tenon/conditions"
)

func TestGetters(t *testing.T) {
	w := widget(5,
		cond("Ready", "True", "R", "", 5, at(0)),
		cond("Available", "False", "R", "", 5, at(0)),
		cond("Progressing", "Unknown", "R", "", 4, at(0)),
	)
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"IsTrue Ready", conditions.IsTrue(w, conditions.Ready), true},
		{"IsTrue Available", conditions.IsTrue(w, conditions.Available), false},
		{"IsTrue of a missing condition", conditions.IsTrue(w, conditions.Degraded), false},
		{"IsFalse Available", conditions.IsFalse(w, conditions.Available), true},
		{"IsFalse of a missing condition", conditions.IsFalse(w, conditions.Degraded), false},
		{"IsUnknown Progressing", conditions.IsUnknown(w, conditions.Progressing), true},
		{"IsUnknown of a missing condition", conditions.IsUnknown(w, conditions.Degraded), true},
		{"IsUnknown Ready", conditions.IsUnknown(w, conditions.Ready), false},
		{"IsCurrent Ready", conditions.IsCurrent(w, conditions.Ready), true},
		{"IsCurrent of a lagging condition", conditions.IsCurrent(w, conditions.Progressing), false},
		{"IsCurrent of a missing condition", conditions.IsCurrent(w, conditions.Degraded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.got).To(Equal(tt.want))
		})
	}
}

func TestGetReturnsACopy(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, cond("Ready", "True", "R", "m", 1, at(0)))

	c := conditions.Get(w, conditions.Ready)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Message).To(Equal("m"))
	c.Message = "changed"
	g.Expect(w.Status.Conditions[0].Message).To(Equal("m"))

	g.Expect(conditions.Get(w, conditions.Stalled)).To(BeNil())
}

func TestIsReadyRequiresACurrentReadyCondition(t *testing.T) {
	tests := []struct {
		name     string
		gen      int64
		readyGen int64
		status   string
		observed int64
		want     bool
	}{
		{"Ready True for the current generation", 3, 3, "True", 3, true},
		{"Ready True for an older generation", 3, 2, "True", 3, false},
		{"Ready True but status.observedGeneration lags", 3, 3, "True", 2, false},
		{"Ready False", 3, 3, "False", 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := widget(tt.gen, cond("Ready", metav1.ConditionStatus(tt.status), "R", "", tt.readyGen, at(0)))
			w.Status.ObservedGeneration = tt.observed
			NewWithT(t).Expect(conditions.IsReady(w)).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(conditions.IsReady(widget(1))).To(BeFalse(), "no Ready condition")
}

func TestIsReadyReadsTheObservedGenerationOfAnyObject(t *testing.T) {
	g := NewWithT(t)
	lagging := map[string]any{
		"metadata": map[string]any{"name": "u", "generation": int64(2)},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "R", "message": "",
				"observedGeneration": int64(2), "lastTransitionTime": "2026-11-29T12:00:00Z",
			}},
		},
	}
	a, err := conditions.FromUnstructured(&unstructured.Unstructured{Object: lagging})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(conditions.IsReady(a)).To(BeFalse(), "status.observedGeneration 1 lags generation 2")
	_, err = conditions.SetObservedGeneration(a.Unstructured)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conditions.IsReady(a)).To(BeTrue())
}
