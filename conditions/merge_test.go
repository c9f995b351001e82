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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

func TestPatchApply(t *testing.T) {
	mine := func(status metav1.ConditionStatus, msg string) metav1.Condition {
		return cond("Mine", status, "R", msg, 1, at(0))
	}
	theirs := func(status metav1.ConditionStatus, msg string) metav1.Condition {
		return cond("Theirs", status, "R", msg, 1, at(0))
	}
	list := func(cs ...metav1.Condition) []metav1.Condition { return cs }
	tests := []struct {
		name          string
		before, after []metav1.Condition
		latest        []metav1.Condition
		opts          []conditions.ApplyOption
		want          []metav1.Condition
		wantConflict  []conditions.Type
	}{
		{
			name:   "adds a new condition and keeps one another writer added",
			before: nil, after: list(mine("True", "")),
			latest: list(theirs("True", "")),
			want:   list(mine("True", ""), theirs("True", "")),
		},
		{
			name:   "changes a condition nobody else touched",
			before: list(mine("False", "")), after: list(mine("True", "")),
			latest: list(mine("False", ""), theirs("False", "")),
			want:   list(mine("True", ""), theirs("False", "")),
		},
		{
			name:   "removes a condition nobody else touched",
			before: list(mine("False", ""), theirs("True", "")), after: list(theirs("True", "")),
			latest: list(mine("False", ""), theirs("True", "x")),
			want:   list(theirs("True", "x")),
		},
		{
			name:   "a change already present on latest is a no-op",
			before: list(mine("False", "")), after: list(mine("True", "")),
			latest: list(mine("True", "")),
			want:   list(mine("True", "")),
		},
		{
			name:   "a condition changed by another writer is a conflict",
			before: list(mine("False", "")), after: list(mine("True", "")),
			latest:       list(mine("Unknown", "someone else")),
			wantConflict: []conditions.Type{"Mine"},
		},
		{
			name:   "a condition added by two writers differently is a conflict",
			before: nil, after: list(mine("True", "")),
			latest:       list(mine("False", "")),
			wantConflict: []conditions.Type{"Mine"},
		},
		{
			name:   "removing a condition another writer changed is a conflict",
			before: list(mine("False", "")), after: nil,
			latest:       list(mine("True", "changed")),
			wantConflict: []conditions.Type{"Mine"},
		},
		{
			name:   "an owned condition wins the conflict",
			before: list(mine("False", "")), after: list(mine("True", "")),
			latest: list(mine("Unknown", "someone else"), theirs("True", "")),
			opts:   []conditions.ApplyOption{conditions.OwnedConditions{"Mine"}},
			want:   list(mine("True", ""), theirs("True", "")),
		},
		{
			name:   "force overwrite wins every conflict",
			before: list(mine("False", "")), after: nil,
			latest: list(mine("True", "changed")),
			opts:   []conditions.ApplyOption{conditions.ForceOverwrite(true)},
			want:   []metav1.Condition{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			latest := widget(1, tt.latest...)
			snapshot := latest.DeepCopy()

			err := conditions.NewPatch(tt.before, tt.after).Apply(latest, tt.opts...)

			if tt.wantConflict != nil {
				var conflict *conditions.ConflictError
				g.Expect(errors.As(err, &conflict)).To(BeTrue(), "got %v", err)
				g.Expect(conflict.Types).To(Equal(tt.wantConflict))
				g.Expect(cmp.Diff(snapshot, latest)).To(BeEmpty(), "a conflict writes nothing")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cmp.Diff(tt.want, latest.Status.Conditions, cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }))).To(BeEmpty())
		})
	}
}

func TestPatchKeepsLatestTransitionTimeAndTheComputedGeneration(t *testing.T) {
	g := NewWithT(t)
	before := []metav1.Condition{cond("Ready", "False", "Waiting", "old", 1, at(0))}
	after := []metav1.Condition{cond("Ready", "False", "Waiting", "new", 1, at(0))}
	// Meanwhile the spec changed (generation 2) and another writer re-set the same status later.
	latest := widget(2, cond("Ready", "False", "Waiting", "old", 1, at(0)))

	g.Expect(conditions.NewPatch(before, after).Apply(latest)).To(Succeed())

	got := latest.Status.Conditions[0]
	g.Expect(got.Message).To(Equal("new"))
	g.Expect(got.ObservedGeneration).To(BeEquivalentTo(1), "the patch describes the generation it was computed for")
	g.Expect(got.LastTransitionTime.Time).To(BeTemporally("==", at(0).Time))
}

func TestNewPatchIsEmptyForEqualLists(t *testing.T) {
	g := NewWithT(t)
	cs := []metav1.Condition{cond("Ready", "True", "R", "", 1, at(0))}
	g.Expect(conditions.NewPatch(cs, cs).IsEmpty()).To(BeTrue())
	p := conditions.NewPatch(cs, nil)
	g.Expect(p.IsEmpty()).To(BeFalse())
	g.Expect(p.Types()).To(Equal([]conditions.Type{"Ready"}))
}
