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
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenon-dev/tenon/conditions"
)

// FuzzSetAndDelete runs random sequences of Set, Mark*, Delete and Summarize with random
// (sometimes invalid) inputs, and checks after each step that nothing panicked, that the list is
// one the API server accepts, with unique types in the documented order, and that a rejected
// call left the object untouched.
func FuzzSetAndDelete(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "Custom", "Because", "a message")
	f.Add([]byte{3, 3, 3, 0, 0, 0, 9, 9, 9}, "bad type", "bad reason", "\xff\xfe")
	f.Add([]byte{200, 17, 33, 250, 1}, "example.com/x", "R:1", "")
	f.Fuzz(func(t *testing.T, program []byte, extraType, extraReason, message string) {
		typePool := []string{"Ready", "Available", "Degraded", "Zeta", "Reconciling", "Stalled", "", "Bad Type", extraType}
		reasonPool := []string{"Succeeded", "Failed", "", "bad reason", extraReason}
		statusPool := []metav1.ConditionStatus{"True", "False", "Unknown", "", "Maybe"}
		pick := func(i *int, n int) int {
			if *i >= len(program) {
				return 0
			}
			v := int(program[*i]) % n
			*i++
			return v
		}

		w := widget(1)
		for i := 0; i < len(program); {
			op := pick(&i, 6)
			ct := typePool[pick(&i, len(typePool))]
			before := w.DeepCopy()
			var err error
			switch op {
			case 0, 1:
				c := metav1.Condition{
					Type: ct, Status: statusPool[pick(&i, len(statusPool))],
					Reason: reasonPool[pick(&i, len(reasonPool))], Message: message,
				}
				_, err = conditions.Set(w, c)
			case 2:
				_, err = conditions.MarkFalse(w, conditions.Type(ct), conditions.Reason(reasonPool[pick(&i, len(reasonPool))]), message)
			case 3:
				conditions.Delete(w, conditions.Type(ct))
			case 4:
				_, err = conditions.Set(w, conditions.Summary(w, conditions.Ready, []conditions.Type{"Available", conditions.Type(ct)}))
			case 5:
				w.Generation++
			}
			if err != nil {
				if diff := cmp.Diff(before, w); diff != "" {
					t.Fatalf("a rejected call (%v) modified the object:\n%s", err, diff)
				}
			}

			list := w.Status.Conditions
			if errs := metav1validation.ValidateConditions(list, field.NewPath("status", "conditions")); len(errs) > 0 {
				t.Fatalf("the API server would reject the list: %v\n%+v", errs.ToAggregate(), list)
			}
			if !slices.IsSortedFunc(list, func(a, b metav1.Condition) int { return compareTypes(a.Type, b.Type) }) {
				t.Fatalf("list is not in the documented order: %v", types(list))
			}
		}
	})
}

// compareTypes is the documented default order: Ready first, then alphabetical.
func compareTypes(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == string(conditions.Ready):
		return -1
	case b == string(conditions.Ready):
		return 1
	}
	return strings.Compare(a, b)
}
