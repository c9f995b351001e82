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

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func TestSummary(t *testing.T) {
	const gen = 4
	deps := []conditions.Type{"ConfigReady", "WorkloadReady", conditions.Degraded}
	tests := []struct {
		name        string
		conditions  []metav1.Condition
		opts        []conditions.Option
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
			opts:       []conditions.Option{conditions.IgnoreIfMissing{"WorkloadReady"}},
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
			name: "a dependent without an observedGeneration is not known to be stale",
			conditions: []metav1.Condition{
				cond("ConfigReady", "True", "Applied", "", 0, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name: "a custom negative-polarity type",
			conditions: []metav1.Condition{
				cond("ConfigReady", "False", "NoDrift", "", gen, at(0)),
				cond("WorkloadReady", "True", "Available", "", gen, at(0)),
				cond("Degraded", "False", "AsExpected", "", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"ConfigReady"}},
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
			opts:       []conditions.Option{conditions.TrueReason{Reason: "AllGood", Message: "3 of 3"}},
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
			g.Expect(conditions.Get(w, conditions.Ready)).To(BeNil(), "Summary does not modify the object")
		})
	}
}

func TestSummarizeSetsTheSummaryAndReportsChanges(t *testing.T) {
	g := NewWithT(t)
	w := widget(2, cond("ConfigReady", "True", "Applied", "", 2, at(0)))

	changed := conditions.Set(w, conditions.Summary(w, conditions.Ready, []conditions.Type{"ConfigReady"}))
	g.Expect(changed).To(BeTrue())
	g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
	g.Expect(conditions.IsCurrent(w, conditions.Ready)).To(BeTrue())

	changed = conditions.Set(w, conditions.Summary(w, conditions.Ready, []conditions.Type{"ConfigReady"}))
	g.Expect(changed).To(BeFalse(), "the same summary twice is not a change")
}

func TestSummaryIgnoresItselfAmongDependents(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, cond("Ready", "False", "Old", "", 1, at(0)), cond("A", "True", "R", "", 1, at(0)))

	got := conditions.Summary(w, conditions.Ready, []conditions.Type{conditions.Ready, "A"})

	g.Expect(got.Status).To(Equal(metav1.ConditionTrue))
}

func TestSummaryFollowsThePolarityOfTheTarget(t *testing.T) {
	const gen = 2
	tests := []struct {
		name        string
		target      conditions.Type
		dependents  []conditions.Type
		conditions  []metav1.Condition
		opts        []conditions.Option
		wantStatus  metav1.ConditionStatus
		wantReason  conditions.Reason
		wantMessage string
	}{
		{
			name:       "a positive target is True when every dependent is healthy",
			target:     conditions.Ready,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{
				cond("DiskPressure", "False", "AsExpected", "", gen, at(0)),
				cond("NetworkReady", "True", "Up", "", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:       "a positive target is False when a negative dependent is True",
			target:     conditions.Ready,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{
				cond("DiskPressure", "True", "DiskFull", "disk 97% full", gen, at(0)),
				cond("NetworkReady", "True", "Up", "", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "False", wantReason: "DiskFull", wantMessage: "DiskPressure: disk 97% full",
		},
		{
			name:       "a standard negative target is False when every dependent is healthy",
			target:     conditions.Degraded,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{
				cond("DiskPressure", "False", "AsExpected", "", gen, at(0)),
				cond("NetworkReady", "True", "Up", "", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "False", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:       "a standard negative target is True when a negative dependent is True",
			target:     conditions.Degraded,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{
				cond("DiskPressure", "True", "DiskFull", "disk 97% full", gen, at(0)),
				cond("NetworkReady", "True", "Up", "", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "True", wantReason: "DiskFull", wantMessage: "DiskPressure: disk 97% full",
		},
		{
			name:       "a standard negative target is True when a positive dependent is False",
			target:     conditions.Degraded,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{
				cond("DiskPressure", "False", "AsExpected", "", gen, at(0)),
				cond("NetworkReady", "False", "LinkDown", "eth0 down", gen, at(0)),
			},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "True", wantReason: "LinkDown", wantMessage: "NetworkReady: eth0 down",
		},
		{
			name:       "a negative target is Unknown when a dependent is missing",
			target:     conditions.Degraded,
			dependents: []conditions.Type{"DiskPressure", "NetworkReady"},
			conditions: []metav1.Condition{cond("NetworkReady", "True", "Up", "", gen, at(0))},
			opts:       []conditions.Option{conditions.NegativePolarity{"DiskPressure"}},
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved, wantMessage: "DiskPressure: not reported",
		},
		{
			name:       "a target declared negative with NegativePolarity is True when unhealthy",
			target:     "Impaired",
			dependents: []conditions.Type{"NetworkReady"},
			conditions: []metav1.Condition{cond("NetworkReady", "False", "LinkDown", "eth0 down", gen, at(0))},
			opts:       []conditions.Option{conditions.NegativePolarity{"Impaired"}},
			wantStatus: "True", wantReason: "LinkDown", wantMessage: "NetworkReady: eth0 down",
		},
		{
			name:       "a target declared negative with NegativePolarity is False when healthy, with the healthy reason",
			target:     "Impaired",
			dependents: []conditions.Type{"NetworkReady"},
			conditions: []metav1.Condition{cond("NetworkReady", "True", "Up", "", gen, at(0))},
			opts:       []conditions.Option{conditions.NegativePolarity{"Impaired"}, conditions.TrueReason{Reason: "AsExpected", Message: "all links up"}},
			wantStatus: "False", wantReason: "AsExpected", wantMessage: "all links up",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := widget(gen, tt.conditions...)

			changed := conditions.Set(w, conditions.Summary(w, tt.target, tt.dependents, tt.opts...))

			g.Expect(changed).To(BeTrue())
			got := conditions.Get(w, tt.target)
			want := cond(tt.target, tt.wantStatus, tt.wantReason, tt.wantMessage, gen, got.LastTransitionTime)
			g.Expect(cmp.Diff(want, *got)).To(BeEmpty())
		})
	}
}

func TestSummariesChainAcrossPolarities(t *testing.T) {
	replica := func(name string, degraded metav1.ConditionStatus) *testtypes.Widget {
		return named(name, 1, cond(conditions.Degraded, degraded, "Checked", "replica "+name+" degraded="+string(degraded), 1, at(0)))
	}
	tests := []struct {
		name         string
		replicas     []*testtypes.Widget
		wantDegraded metav1.ConditionStatus
		wantReady    metav1.ConditionStatus
	}{
		{
			name:         "every replica healthy: Degraded False, Ready True",
			replicas:     []*testtypes.Widget{replica("a", "False"), replica("b", "False")},
			wantDegraded: "False", wantReady: "True",
		},
		{
			name:         "one replica degraded: Degraded True, Ready False",
			replicas:     []*testtypes.Widget{replica("a", "False"), replica("b", "True")},
			wantDegraded: "True", wantReady: "False",
		},
		{
			name:         "one replica unknown: Degraded Unknown, Ready Unknown",
			replicas:     []*testtypes.Widget{replica("a", "False"), replica("b", "Unknown")},
			wantDegraded: "Unknown", wantReady: "Unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			parent := widget(1)

			conditions.Set(parent, conditions.Aggregate(conditions.Degraded, tt.replicas, conditions.Degraded))
			conditions.Set(parent, conditions.Summary(parent, conditions.Ready, []conditions.Type{conditions.Degraded}))

			// The same chain through Summarize: the parent's Degraded summarised from its own
			// per-replica conditions.
			perReplica := widget(1)
			var deps []conditions.Type
			for _, r := range tt.replicas {
				ct := conditions.Type(r.Name + "Degraded")
				deps = append(deps, ct)
				conditions.Set(perReplica, cond(ct, conditions.Get(r, conditions.Degraded).Status, "Checked", "", 0, metav1.Time{}))
			}
			negative := conditions.NegativePolarity(deps)
			conditions.Set(perReplica, conditions.Summary(perReplica, conditions.Degraded, deps, negative))
			conditions.Set(perReplica, conditions.Summary(perReplica, conditions.Ready, []conditions.Type{conditions.Degraded}, negative))

			for _, obj := range []*testtypes.Widget{parent, perReplica} {
				g.Expect(conditions.Get(obj, conditions.Degraded).Status).To(Equal(tt.wantDegraded))
				g.Expect(conditions.Get(obj, conditions.Ready).Status).To(Equal(tt.wantReady))
			}
		})
	}
}
