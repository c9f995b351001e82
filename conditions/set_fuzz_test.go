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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// FuzzSetAndDelete runs random sequences of Set, Mark*, Delete and Summarize with random
// (sometimes invalid) inputs, and checks after each step that nothing panicked, that the
// condition set is stored as given (normalised: observed generation, transition time in whole
// seconds, valid UTF-8), that the list has unique types in the documented order, and that the
// API server would accept the list whenever Validate accepts each of its conditions.
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
			var set *metav1.Condition
			marked := false
			switch op {
			case 0, 1:
				c := metav1.Condition{
					Type: ct, Status: statusPool[pick(&i, len(statusPool))],
					Reason: reasonPool[pick(&i, len(reasonPool))], Message: message,
				}
				conditions.Set(w, c)
				set = &c
			case 2:
				reason := reasonPool[pick(&i, len(reasonPool))]
				conditions.MarkFalse(w, conditions.Type(ct), conditions.Reason(reason), message)
				set = &metav1.Condition{Type: ct, Status: metav1.ConditionFalse, Reason: reason, Message: message}
				marked = true
			case 3:
				conditions.Delete(w, conditions.Type(ct))
				if got := conditions.Get(w, conditions.Type(ct)); got != nil {
					t.Fatalf("Delete(%q) left %+v", ct, *got)
				}
			case 4:
				c := conditions.Summary(w, conditions.Ready, []conditions.Type{"Available", conditions.Type(ct)})
				conditions.Set(w, c)
				set = &c
			case 5:
				w.Generation++
			}
			if set != nil {
				checkStored(t, w, *set, marked)
			}
			checkList(t, w.Status.Conditions)
		}
	})
}

// checkStored checks that w holds c as Set stores it: its type, status and reason as given,
// valid or not, its message with invalid UTF-8 replaced (and, when marked, truncated to the API
// server's limit, as the Mark functions do), the observed generation w's, and a transition time
// in whole seconds.
func checkStored(t *testing.T, w *testtypes.Widget, c metav1.Condition, marked bool) {
	t.Helper()
	got := conditions.Get(w, conditions.Type(c.Type))
	switch {
	case got == nil:
		t.Fatalf("%+v was not stored", c)
	case got.Status != c.Status || got.Reason != c.Reason:
		t.Fatalf("stored %+v for %+v", *got, c)
	case !storedMessage(got.Message, c.Message, marked):
		t.Fatalf("stored message %q for %q", got.Message, c.Message)
	case got.ObservedGeneration != w.Generation:
		t.Fatalf("stored observedGeneration %d, want %d", got.ObservedGeneration, w.Generation)
	case got.LastTransitionTime.IsZero() || got.LastTransitionTime.Nanosecond() != 0:
		t.Fatalf("stored lastTransitionTime %v, want whole seconds", got.LastTransitionTime)
	}
}

// storedMessage reports whether got is what Set (or, when marked, a Mark function) stores for
// the message given.
func storedMessage(got, given string, marked bool) bool {
	want := strings.ToValidUTF8(given, "\uFFFD")
	if !marked || len(want) <= 32768 {
		return got == want
	}
	return len(got) <= 32768 && strings.HasSuffix(got, "…") && strings.HasPrefix(want, strings.TrimSuffix(got, "…"))
}

// checkList checks that list has each type once, in the documented order, and that the API
// server accepts it when Validate accepts each of its conditions.
func checkList(t *testing.T, list []metav1.Condition) {
	t.Helper()
	if !slices.IsSortedFunc(list, func(a, b metav1.Condition) int { return compareTypes(a.Type, b.Type) }) {
		t.Fatalf("list is not in the documented order: %v", types(list))
	}
	for i := 1; i < len(list); i++ {
		if list[i].Type == list[i-1].Type {
			t.Fatalf("type %q appears twice: %v", list[i].Type, types(list))
		}
	}
	valid := !slices.ContainsFunc(list, func(c metav1.Condition) bool { return conditions.Validate(c) != nil })
	if errs := metav1validation.ValidateConditions(list, field.NewPath("status", "conditions")); valid && len(errs) > 0 {
		t.Fatalf("Validate accepts every condition, but the API server would reject the list: %v\n%+v", errs.ToAggregate(), list)
	}
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
