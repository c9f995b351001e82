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
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func named(name string, gen int64, cs ...metav1.Condition) *testtypes.Widget {
	w := widget(gen, cs...)
	w.Name = name
	return w
}

func TestMirror(t *testing.T) {
	tests := []struct {
		name        string
		source      *testtypes.Widget
		opts        []conditions.Option
		wantStatus  metav1.ConditionStatus
		wantReason  conditions.Reason
		wantMessage string
	}{
		{
			name:       "copies status, reason and message",
			source:     named("db", 2, cond("Ready", "False", "Recovering", "replaying WAL", 2, at(0))),
			wantStatus: "False", wantReason: "Recovering", wantMessage: "replaying WAL",
		},
		{
			name:       "a source condition for an older generation becomes Unknown",
			source:     named("db", 3, cond("Ready", "True", "Succeeded", "", 2, at(0))),
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved,
			wantMessage: "db: Ready computed for generation 2, current is 3",
		},
		{
			name:       "a missing source condition becomes Unknown by default",
			source:     named("db", 1),
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved, wantMessage: "db has no Ready condition",
		},
		{
			name:       "a missing source condition takes the fallback",
			source:     named("db", 1),
			opts:       []conditions.Option{conditions.Fallback{Status: "False", Reason: "NotCreated", Message: "database not created"}},
			wantStatus: "False", wantReason: "NotCreated", wantMessage: "database not created",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			parent := widget(7)

			changed := conditions.Set(parent, conditions.Mirror("DatabaseReady", tt.source, conditions.Ready, tt.opts...))

			g.Expect(changed).To(BeTrue())
			got := conditions.Get(parent, "DatabaseReady")
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(BeEquivalentTo(tt.wantReason))
			g.Expect(got.Message).To(Equal(tt.wantMessage))
			g.Expect(got.ObservedGeneration).To(BeEquivalentTo(7), "the mirror describes the parent's generation")
		})
	}
}

func TestMirrorKeepsTheSourcesTransitionTime(t *testing.T) {
	g := NewWithT(t)
	source := named("db", 2, cond("Ready", "False", "Recovering", "replaying WAL", 2, metav1.NewTime(at(0).Add(300*time.Millisecond))))
	parent := widget(7)

	conditions.Set(parent, conditions.Mirror("DatabaseReady", source, conditions.Ready))
	g.Expect(conditions.Get(parent, "DatabaseReady").LastTransitionTime.Time).To(BeTemporally("==", at(0).Time),
		"the time the source's condition changed, truncated to seconds")

	// A new message from the source is not a transition of the mirror.
	source.Status.Conditions[0].Message = "replaying WAL: 80%"
	conditions.Set(parent, conditions.Mirror("DatabaseReady", source, conditions.Ready))
	g.Expect(conditions.Get(parent, "DatabaseReady").LastTransitionTime.Time).To(BeTemporally("==", at(0).Time))

	// The source becomes Ready: the mirror takes the time the source changed.
	source.Status.Conditions[0] = cond("Ready", "True", "Succeeded", "", 2, at(40))
	conditions.Set(parent, conditions.Mirror("DatabaseReady", source, conditions.Ready))
	g.Expect(conditions.Get(parent, "DatabaseReady").LastTransitionTime.Time).To(BeTemporally("==", at(40).Time))

	// A stale source is Unknown since now: it is the mirror's own judgement, not the source's.
	source.Generation = 3
	start := time.Now().Truncate(time.Second)
	conditions.Set(parent, conditions.Mirror("DatabaseReady", source, conditions.Ready))
	g.Expect(conditions.Get(parent, "DatabaseReady").LastTransitionTime.Time).To(BeTemporally(">=", start))
}

func TestAggregate(t *testing.T) {
	ready := func(name string) *testtypes.Widget {
		return named(name, 1, cond("Ready", "True", "Succeeded", "", 1, at(0)))
	}
	tests := []struct {
		name        string
		sources     []*testtypes.Widget
		wantStatus  metav1.ConditionStatus
		wantReason  conditions.Reason
		wantMessage string
	}{
		{
			name:       "every source healthy",
			sources:    []*testtypes.Widget{ready("a"), ready("b")},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:       "no sources is vacuously healthy",
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name: "unhealthy sources are listed worst first, then by name",
			sources: []*testtypes.Widget{
				named("d", 1, cond("Ready", "Unknown", "Starting", "pulling image", 1, at(0))),
				ready("a"),
				named("c", 1, cond("Ready", "False", "CrashLoop", "exit 1", 1, at(0))),
				named("b", 1, cond("Ready", "False", "OOMKilled", "", 1, at(0))),
			},
			wantStatus: "False", wantReason: "OOMKilled",
			wantMessage: "3 of 4 not healthy: b: False (OOMKilled); c: exit 1; d: pulling image",
		},
		{
			name:       "missing and stale conditions are Unknown",
			sources:    []*testtypes.Widget{ready("a"), named("b", 1), named("c", 2, cond("Ready", "True", "Succeeded", "", 1, at(0)))},
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved,
			wantMessage: "2 of 3 not healthy: b: not reported; c: computed for generation 1, current is 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			parent := widget(1)

			conditions.Set(parent, conditions.Aggregate("ReplicasReady", tt.sources, conditions.Ready))

			got := conditions.Get(parent, "ReplicasReady")
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(BeEquivalentTo(tt.wantReason))
			g.Expect(got.Message).To(Equal(tt.wantMessage))
		})
	}
}

func TestAggregateListsAtMostTenSources(t *testing.T) {
	g := NewWithT(t)
	var sources []*testtypes.Widget
	for i := range 25 {
		sources = append(sources, named(fmt.Sprintf("r%02d", i), 1, cond("Ready", "False", "Down", "down", 1, at(0))))
	}
	parent := widget(1)

	conditions.Set(parent, conditions.Aggregate("ReplicasReady", sources, conditions.Ready))

	msg := conditions.Get(parent, "ReplicasReady").Message
	g.Expect(msg).To(HavePrefix("25 of 25 not healthy: r00: down;"))
	g.Expect(msg).To(HaveSuffix("r09: down; and 15 more"))
}

func TestAggregateFollowsThePolarityOfTheTarget(t *testing.T) {
	tests := []struct {
		name       string
		target     conditions.Type
		sourceType conditions.Type
		sources    []*testtypes.Widget
		wantStatus metav1.ConditionStatus
		wantReason conditions.Reason
	}{
		{
			name:   "a positive target from a negative source type: a degraded replica makes it False",
			target: "ReplicasHealthy", sourceType: conditions.Degraded,
			sources: []*testtypes.Widget{
				named("a", 1, cond("Degraded", "False", "AsExpected", "", 1, at(0))),
				named("b", 1, cond("Degraded", "True", "DiskFull", "disk full", 1, at(0))),
			},
			wantStatus: "False", wantReason: "DiskFull",
		},
		{
			name:   "a positive target from a negative source type: no degraded replica makes it True",
			target: "ReplicasHealthy", sourceType: conditions.Degraded,
			sources: []*testtypes.Widget{
				named("a", 1, cond("Degraded", "False", "AsExpected", "", 1, at(0))),
			},
			wantStatus: "True", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:   "a negative target from the same negative type: a degraded replica makes it True",
			target: conditions.Degraded, sourceType: conditions.Degraded,
			sources: []*testtypes.Widget{
				named("a", 1, cond("Degraded", "False", "AsExpected", "", 1, at(0))),
				named("b", 1, cond("Degraded", "True", "DiskFull", "disk full", 1, at(0))),
			},
			wantStatus: "True", wantReason: "DiskFull",
		},
		{
			name:   "a negative target from the same negative type: no degraded replica makes it False",
			target: conditions.Degraded, sourceType: conditions.Degraded,
			sources: []*testtypes.Widget{
				named("a", 1, cond("Degraded", "False", "AsExpected", "", 1, at(0))),
			},
			wantStatus: "False", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:   "a negative target from a positive source type: a replica not Ready makes it True",
			target: conditions.Degraded, sourceType: conditions.Ready,
			sources: []*testtypes.Widget{
				named("a", 1, cond("Ready", "True", "Succeeded", "", 1, at(0))),
				named("b", 1, cond("Ready", "False", "CrashLoop", "exit 1", 1, at(0))),
			},
			wantStatus: "True", wantReason: "CrashLoop",
		},
		{
			name:   "a negative target with no sources is healthy: False",
			target: conditions.Degraded, sourceType: conditions.Degraded,
			wantStatus: "False", wantReason: conditions.ReasonSucceeded,
		},
		{
			name:   "a negative target is Unknown while a source has not reported",
			target: conditions.Degraded, sourceType: conditions.Degraded,
			sources:    []*testtypes.Widget{named("a", 1)},
			wantStatus: "Unknown", wantReason: conditions.ReasonNotObserved,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			parent := widget(1)

			conditions.Set(parent, conditions.Aggregate(tt.target, tt.sources, tt.sourceType))

			got := conditions.Get(parent, tt.target)
			g.Expect(got.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Reason).To(BeEquivalentTo(tt.wantReason))
		})
	}
}
