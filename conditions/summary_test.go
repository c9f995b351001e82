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

	"github.com/tenon-dev/tenon/conditions"
)

func TestSummary(t *testing.T) {
	const gen = 4
	deps := []conditions.Type{"ConfigReady", "WorkloadReady", conditions.Degraded}
	tests := []struct {
		name        string
		conditions  []metav1.Condition
		opts        []conditions.SummaryOption
		wantStatus  metav1.ConditionStatus
		wantReason  conditions.Reason
		wantMessage string
	}{
		{
			name: "every dependent healthy, Degraded False counts as healthy",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name: "a negative-polarity dependent True is unhealthy",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "True", "ReplicaLost", "1 of 3 replicas lost", gen, at(0)),
			},
			wantStatus: "False", wantReason: "ReplicaLost", wantMessage: "Degraded: 1 of 3 replicas lost",
		},
		{
			name: "the worst dependent gives the reason: False beats Unknown, first in order among equals",
			conditions: []metav1.Condition{
				cond("ConfigReady", "Unknown", "Pending", "waiting for config", gen, at(0)),
				cond("WorkloadReady", "False", "CrashLoop", "pod crashing", gen, at(0)),
				cond("Degraded", "True", "ReplicaLost", "replica lost", gen, at(0)),
			},
			wantStatus: "False", wantReason: "CrashLoop",
			wantMessage: "WorkloadReady: pod crashing; Degraded: replica lost; ConfigReady: waiting for config",
		},
		{
			name: "a missing dependent makes the summary Unknown",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved, wantMessage: "WorkloadReady: not reported",
		},
		{
			name: "a missing dependent listed in IgnoreIfMissing counts as healthy",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			opts:       []conditions.SummaryOption{conditions.IgnoreIfMissing{"WorkloadReady"}},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name: "a dependent computed for an older generation is not trusted",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen-1, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved,
			wantMessage: "ConfigReady: computed for generation 3, current is 4",
		},
		{
			name: "a custom negative-polarity type",
			conditions: []metav1.Condition{
				cond("ConfigReady", "False", "NoDrift", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			opts:       []conditions.SummaryOption{conditions.NegativePolarity{"ConfigReady"}},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name: "an empty message is described by status and reason",
			conditions: []metav1.Condition{
				cond("ConfigReady", "False", "Invalid", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			wantStatus: "False", wantReason: "Invalid", wantMessage: "ConfigReady: False (Invalid)",
		},
		{
			name: "WithTrueReason sets the reason and message of a True summary",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			opts:       []conditions.SummaryOption{conditions.WithTrueReason{Reason: "AllGood", Message: "3 of 3"}},
			wantStatus: "True", wantReason: "AllGood", wantMessage: "3 of 3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := widget(gen, tt.conditions...)

			got := conditions.Summary(w, conditions.Ready, deps, tt.opts...)

			g.Expect(got.Type).To(Equal("Ready"))
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(BeEquivalentTo(tt.wantReason))
			g.Expect(got.Message).To(Equal(tt.wantMessage))
			g.Expect(conditions.Has(w, conditions.Ready)).To(BeFalse(), "Summary does not modify the object")
		})
	}
}

func TestSummarizeSetsTheSummaryAndReportsChanges(t *testing.T) {
	g := NewWithT(t)
	w := widget(2, cond("ConfigReady", "True", "Applied", "", 2, at(0)))

	changed, err := conditions.Summarize(w, conditions.Ready, []conditions.Type{"ConfigReady"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
	g.Expect(conditions.IsCurrent(w, conditions.Ready)).To(BeTrue())

	changed, err = conditions.Summarize(w, conditions.Ready, []conditions.Type{"ConfigReady"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse(), "the same summary twice is not a change")
}

func TestSummaryIgnoresItselfAmongDependents(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, cond("Ready", "False", "Old", "", 1, at(0)), cond("A", "True", "R", "", 1, at(0)))

	got := conditions.Summary(w, conditions.Ready, []conditions.Type{conditions.Ready, "A"})

	g.Expect(got.Status).To(Equal(metav1.ConditionTrue))
}
