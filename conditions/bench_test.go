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
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// benchWidget has five conditions, as a typical operator's status does.
func benchWidget() *testtypes.Widget {
	w := widget(3)
	for _, ct := range []conditions.Type{conditions.Ready, "ConfigReady", "WorkloadReady", "DNSReady", conditions.Reconciling} {
		conditions.MarkTrue(w, ct, conditions.ReasonSucceeded, "fine")
	}
	return w
}

// BenchmarkSet compares conditions.Set with apimachinery's meta.SetStatusCondition, the baseline,
// on the same inputs: setting a condition equal to the current one, changing its message, and
// flipping its status. The apimachinery variant neither validates nor stamps observedGeneration.
func BenchmarkSet(b *testing.B) {
	unchanged := metav1.Condition{Type: "DNSReady", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "fine", ObservedGeneration: 3}
	messages := []string{"fine", "still fine"}
	statuses := []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse}

	b.Run("unchanged/tenon", func(b *testing.B) {
		w := benchWidget()
		b.ReportAllocs()
		for b.Loop() {
			conditions.Set(w, unchanged)
		}
	})
	b.Run("unchanged/apimachinery", func(b *testing.B) {
		w := benchWidget()
		b.ReportAllocs()
		for b.Loop() {
			meta.SetStatusCondition(&w.Status.Conditions, unchanged)
		}
	})
	b.Run("message/tenon", func(b *testing.B) {
		w := benchWidget()
		c := unchanged
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Message = messages[i%2]
			i++
			conditions.Set(w, c)
		}
	})
	b.Run("message/apimachinery", func(b *testing.B) {
		w := benchWidget()
		c := unchanged
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Message = messages[i%2]
			i++
			meta.SetStatusCondition(&w.Status.Conditions, c)
		}
	})
	b.Run("status/tenon", func(b *testing.B) {
		w := benchWidget()
		c := unchanged
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Status = statuses[i%2]
			i++
			conditions.Set(w, c)
		}
	})
	b.Run("status/apimachinery", func(b *testing.B) {
		w := benchWidget()
		c := unchanged
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Status = statuses[i%2]
			i++
			meta.SetStatusCondition(&w.Status.Conditions, c)
		}
	})
}

// BenchmarkSummarize measures computing and setting Ready from N dependents.
func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{3, 10} {
		b.Run(fmt.Sprintf("dependents=%d", n), func(b *testing.B) {
			w := widget(1)
			deps := make([]conditions.Type, n)
			for i := range deps {
				deps[i] = conditions.Type(fmt.Sprintf("Dep%02d", i))
				status := conditions.MarkTrue
				if i == n/2 {
					status = conditions.MarkFalse
				}
				status(w, deps[i], "R", "message")
			}
			b.ReportAllocs()
			for b.Loop() {
				conditions.Set(w, conditions.Summary(w, conditions.Ready, deps))
			}
		})
	}
}
