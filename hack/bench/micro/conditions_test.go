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

package micro

import (
	"testing"
	"time"

	fluxconditions "github.com/fluxcd/pkg/runtime/conditions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"

	"github.com/tenon-dev/tenon/conditions"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
	"github.com/tenon-dev/tenon/hack/bench/contender"
)

// setter is one library's way of setting a condition on a Widget.
type setter struct {
	lib string
	set func(w *benchv1.Widget, c metav1.Condition) error
}

// setters lists the libraries, the baseline first.
var setters = []setter{
	{"apimachinery", func(w *benchv1.Widget, c metav1.Condition) error {
		// meta.SetStatusCondition does not stamp the generation; a caller must.
		c.ObservedGeneration = w.Generation
		meta.SetStatusCondition(&w.Status.Conditions, c)
		return nil
	}},
	{"tenon", func(w *benchv1.Widget, c metav1.Condition) error {
		conditions.Set(w, c)
		return nil
	}},
	{"flux", func(w *benchv1.Widget, c metav1.Condition) error {
		fluxconditions.Set(w, &c)
		return nil
	}},
	{"cluster-api", func(w *benchv1.Widget, c metav1.Condition) error {
		capiconditions.Set(w, c)
		return nil
	}},
}

// readyWidget returns a Widget whose controller conditions are set and current, as after a
// reconcile, with one condition of another writer.
func readyWidget() *benchv1.Widget {
	w := &benchv1.Widget{}
	w.Name, w.Namespace, w.Generation = "w", "default", 3
	w.Spec = benchv1.WidgetSpec{Size: "m", Replicas: ptr.To[int32](1), Color: "blue"}
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, c := range contender.Desired(w) {
		c.ObservedGeneration, c.LastTransitionTime = w.Generation, now
		w.Status.Conditions = append(w.Status.Conditions, c)
	}
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: "Writer0", Status: metav1.ConditionTrue,
		Reason: "Edited", Message: "1", ObservedGeneration: 3, LastTransitionTime: now})
	w.Status.ObservedGeneration = w.Generation
	return w
}

// BenchmarkSetCondition sets one condition on an object with five:
//
//   - op=unchanged: the condition as it already is (the steady-state reconcile);
//   - op=changed: the status flips on every call, so every call is a transition.
func BenchmarkSetCondition(b *testing.B) {
	for _, s := range setters {
		b.Run("lib="+s.lib+"/op=unchanged", func(b *testing.B) {
			w := readyWidget()
			c := contender.Desired(w)[1]
			b.ReportAllocs()
			for b.Loop() {
				if err := s.set(w, c); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("lib="+s.lib+"/op=changed", func(b *testing.B) {
			w := readyWidget()
			on := contender.Desired(w)[1]
			off := on
			off.Status, off.Reason = metav1.ConditionFalse, "SizeMissing"
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c := on
				if i%2 == 0 {
					c = off
				}
				if err := s.set(w, c); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
