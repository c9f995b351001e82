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
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// verdict is what a status computation says about an object.
type verdict struct {
	Status  string
	Message string
}

// kstatusVerdict returns what cli-utils' kstatus computes for u, the reference.
func kstatusVerdict(t *testing.T, u *unstructured.Unstructured) verdict {
	t.Helper()
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus.Compute: %v", err)
	}
	return verdict{Status: string(res.Status), Message: res.Message}
}

// fromJSON returns obj as an API server client reads it: its JSON decoded into an unstructured
// object, with apiVersion and kind set.
func fromJSON(t *testing.T, w *testtypes.Widget) *unstructured.Unstructured {
	t.Helper()
	w = w.DeepCopy()
	w.APIVersion, w.Kind = testtypes.GroupVersion.String(), "Widget"
	data, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// generationCase is how an observedGeneration relates to metadata.generation.
type generationCase struct {
	name string
	// offset from metadata.generation, or absent when nil.
	offset *int64
}

var generationCases = []generationCase{
	{name: "equal", offset: ptr.To(int64(0))},
	{name: "below", offset: ptr.To(int64(-1))},
	{name: "absent"},
}

// matrixCondition is one of the three conditions kstatus reads, as the matrix varies it.
type matrixCondition struct {
	t      conditions.Type
	status metav1.ConditionStatus
	gen    generationCase
}

// TestComputeAgreesWithKstatusOnEveryCombination compares conditions.ComputeKStatus with cli-utils'
// kstatus on every combination of: Ready, Reconciling and Stalled each absent, True, False or
// Unknown, with observedGeneration equal to, below or absent relative to metadata.generation;
// every order of the conditions present; status.observedGeneration equal, below or absent; and
// deletionTimestamp set or not. Each object is computed three ways: kstatus on the object as read
// from the API server (JSON into unstructured), and conditions.ComputeKStatus on that unstructured
// object and on the typed Widget. Status and message must all be equal.
func TestComputeAgreesWithKstatusOnEveryCombination(t *testing.T) {
	const gen = 3
	statuses := []metav1.ConditionStatus{"", metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

	// options lists the states one condition type can be in: absent, or present with a status and
	// an observedGeneration.
	options := func(ct conditions.Type) []*matrixCondition {
		out := []*matrixCondition{nil}
		for _, s := range statuses[1:] {
			for _, g := range generationCases {
				out = append(out, &matrixCondition{t: ct, status: s, gen: g})
			}
		}
		return out
	}

	combinations, disagreements := 0, 0
	var report strings.Builder
	for _, ready := range options(conditions.Ready) {
		for _, reconciling := range options(conditions.Reconciling) {
			for _, stalled := range options(conditions.Stalled) {
				var present []matrixCondition
				for _, c := range []*matrixCondition{ready, reconciling, stalled} {
					if c != nil {
						present = append(present, *c)
					}
				}
				for _, order := range permutations(present) {
					for _, observed := range generationCases {
						for _, deleting := range []bool{false, true} {
							combinations++
							w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: gen}}
							for _, c := range order {
								cond := metav1.Condition{Type: string(c.t), Status: c.status, Reason: "Because", Message: "message of " + string(c.t), LastTransitionTime: at(0)}
								if c.gen.offset != nil {
									cond.ObservedGeneration = gen + *c.gen.offset
								}
								w.Status.Conditions = append(w.Status.Conditions, cond)
							}
							if observed.offset != nil {
								w.Status.ObservedGeneration = gen + *observed.offset
							}
							if deleting {
								w.DeletionTimestamp = ptr.To(at(0))
								w.Finalizers = []string{"test.tenon.dev/cleanup"}
							}

							u := fromJSON(t, w)
							want := kstatusVerdict(t, u)
							disagree := false
							for _, in := range []struct {
								name string
								obj  any
							}{{"unstructured", u}, {"typed", w}} {
								got := computeVerdict(t, in.obj)
								if diff := cmp.Diff(want, got); diff != "" {
									disagree = true
									if disagreements < 10 {
										fmt.Fprintf(&report, "%s, computed on the %s object (-kstatus +tenon):\n%s", describeCase(order, observed, deleting), in.name, diff)
									}
								}
							}
							if disagree {
								disagreements++
							}
						}
					}
				}
			}
		}
	}
	// Printed, not logged, so that every `go test` run shows the size of the matrix.
	fmt.Fprintf(os.Stdout, "kstatus matrix: %d combinations, %d disagreements with sigs.k8s.io/cli-utils/pkg/kstatus\n", combinations, disagreements)
	if disagreements > 0 {
		t.Fatalf("conditions.ComputeKStatus disagrees with kstatus on %d of %d combinations; the first:\n%s", disagreements, combinations, report.String())
	}
}

// computeVerdict returns what conditions.ComputeKStatus computes for obj.
func computeVerdict(t *testing.T, obj any) verdict {
	t.Helper()
	var res kstatusResult
	var err error
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		res, err = compute(o)
	case *testtypes.Widget:
		res, err = compute(o)
	default:
		t.Fatalf("unexpected %T", obj)
	}
	if err != nil {
		t.Fatalf("conditions.ComputeKStatus: %v", err)
	}
	return verdict{Status: string(res.Status), Message: res.Message}
}

func describeCase(order []matrixCondition, observed generationCase, deleting bool) string {
	parts := make([]string, 0, len(order)+2)
	for _, c := range order {
		parts = append(parts, fmt.Sprintf("%s=%s(observedGeneration %s)", c.t, c.status, c.gen.name))
	}
	parts = append(parts, "status.observedGeneration "+observed.name)
	if deleting {
		parts = append(parts, "deleting")
	}
	return strings.Join(parts, ", ")
}

// permutations returns every order of list.
func permutations[T any](list []T) [][]T {
	if len(list) <= 1 {
		return [][]T{append([]T(nil), list...)}
	}
	var out [][]T
	for i := range list {
		rest := make([]T, 0, len(list)-1)
		rest = append(rest, list[:i]...)
		rest = append(rest, list[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]T{list[i]}, p...))
		}
	}
	return out
}
