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

package observe_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func cond(t, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: message,
		LastTransitionTime: metav1.Unix(1_700_000_000, 0)}
}

func widget(cs ...metav1.Condition) *testtypes.Widget {
	return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 1},
		Status: testtypes.WidgetStatus{Conditions: cs}}
}

func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestRecordEventsRecordsTheTransitionsOfReadyAndStalled(t *testing.T) {
	g := NewWithT(t)
	recorder := events.NewFakeRecorder(10)
	before := []metav1.Condition{
		cond("Ready", "False", "Waiting", ""),
		cond("ConfigReady", "False", "Applying", ""),
		cond("Stalled", "True", "InvalidSpec", "even replicas"),
	}
	after := []metav1.Condition{
		cond("Ready", "True", "Succeeded", "all good"),
		cond("ConfigReady", "True", "Applied", ""),
	}

	observe.RecordEvents(recorder, widget(), before, after)

	g.Expect(drain(recorder)).To(Equal([]string{
		"Normal Succeeded Ready changed from False to True: all good",
		"Normal InvalidSpec Stalled was removed (was True)",
	}), "ConfigReady is a dependent: no Event of its own")

	// A new message with the same status is not a transition.
	observe.RecordEvents(recorder, widget(), after, []metav1.Condition{cond("Ready", "True", "Succeeded", "still good")})
	g.Expect(drain(recorder)).To(BeEmpty())

	// A new object that is not Ready yet records nothing; a Stalled one says so; one Ready from
	// the start, too.
	observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{cond("Ready", "False", "Progressing", "waiting")})
	observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{cond("Ready", "Unknown", "Progressing", "")})
	g.Expect(drain(recorder)).To(BeEmpty(), "not ready yet is not news")
	observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{
		cond("Ready", "False", "InvalidSpec", "even replicas"), cond("Stalled", "True", "InvalidSpec", "even replicas"),
	})
	g.Expect(drain(recorder)).To(Equal([]string{"Warning InvalidSpec Stalled is True: even replicas"}))
	observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{cond("Ready", "True", "Succeeded", "at once")})
	g.Expect(drain(recorder)).To(Equal([]string{"Normal Succeeded Ready is True: at once"}))
	observe.RecordEvents(recorder, widget(), []metav1.Condition{cond("Ready", "True", "Succeeded", "")},
		[]metav1.Condition{cond("Ready", "False", "ReplicaLost", "1 of 3 ready")})
	g.Expect(drain(recorder)).To(Equal([]string{"Warning ReplicaLost Ready changed from True to False: 1 of 3 ready"}))
}

func TestRecordEventsOfTheGivenTypes(t *testing.T) {
	g := NewWithT(t)
	recorder := events.NewFakeRecorder(10)
	before := []metav1.Condition{cond("Degraded", "False", "OK", "")}
	after := []metav1.Condition{
		cond("Degraded", "True", "ReplicaLost", ""),
		cond("Backup", "False", "Failed", strings.Repeat("x", 2000)),
	}

	observe.RecordEvents(recorder, widget(), before, after, conditions.Degraded, "Backup")

	got := drain(recorder)
	g.Expect(got).To(HaveLen(2))
	g.Expect(got[0]).To(Equal("Warning ReplicaLost Degraded changed from False to True"))
	g.Expect(got[1]).To(HavePrefix("Warning Failed Backup is False: xxx"))
	g.Expect(len(got[1])).To(BeNumerically("<", 1100), "notes are kept under the events API limit")
}

func TestMetricsRecordTheCurrentStatusOfEachCondition(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := observe.NewMetrics()
	g.Expect(m.Register(reg)).To(Succeed())
	w := widget(cond("Ready", "False", "R", ""), cond("Stalled", "True", "R", ""))

	m.Record("Widget", w)

	g.Expect(testutil.CollectAndCount(reg, "tenon_condition")).To(Equal(6))
	g.Expect(testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tenon_condition The status of a condition of an object: 1 for the current status, 0 for the others.
# TYPE tenon_condition gauge
tenon_condition{kind="Widget",name="w",namespace="ns",status="False",type="Ready"} 1
tenon_condition{kind="Widget",name="w",namespace="ns",status="False",type="Stalled"} 0
tenon_condition{kind="Widget",name="w",namespace="ns",status="True",type="Ready"} 0
tenon_condition{kind="Widget",name="w",namespace="ns",status="True",type="Stalled"} 1
tenon_condition{kind="Widget",name="w",namespace="ns",status="Unknown",type="Ready"} 0
tenon_condition{kind="Widget",name="w",namespace="ns",status="Unknown",type="Stalled"} 0
`), "tenon_condition")).To(Succeed())

	// A condition that went away loses its series; a forgotten object loses all of them.
	w.Status.Conditions = w.Status.Conditions[:1]
	m.Record("Widget", w)
	g.Expect(testutil.CollectAndCount(reg, "tenon_condition")).To(Equal(3))
	m.Forget("Widget", "ns", "w")
	g.Expect(testutil.CollectAndCount(reg, "tenon_condition")).To(Equal(0))
}

func TestRecordEventsCutsALongNoteOnARuneBoundaryUnderTheEventsAPILimit(t *testing.T) {
	const limit = 1000 // the events API's limit on a note is 1 kB
	for _, tt := range []struct {
		name, message, note string
	}{
		{"at the limit, whole", strings.Repeat("x", limit-len("Ready is True: ")), "Ready is True: " + strings.Repeat("x", limit-len("Ready is True: "))},
		{"one byte over, cut to the limit", strings.Repeat("x", limit-len("Ready is True: ")+1), "Ready is True: " + strings.Repeat("x", limit-len("Ready is True: ")-3) + "…"},
		// 997 bytes would end inside an "é": the cut moves back to the rune before it.
		{"inside a rune, cut before it", "a" + strings.Repeat("é", 600), "Ready is True: a" + strings.Repeat("é", (limit-3-len("Ready is True: a"))/2) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			recorder := events.NewFakeRecorder(1)

			observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{cond("Ready", "True", "Succeeded", tt.message)})

			g.Expect(drain(recorder)).To(Equal([]string{"Normal Succeeded " + tt.note}))
			g.Expect(len(tt.note)).To(BeNumerically("<=", limit))
		})
	}
}

func TestRecordEventsMakesANoteOfInvalidUTF8Valid(t *testing.T) {
	g := NewWithT(t)
	recorder := events.NewFakeRecorder(1)
	typ := conditions.Type(strings.Repeat("\x80", 1000))

	observe.RecordEvents(recorder, widget(), nil, []metav1.Condition{{Type: string(typ), Status: "True", Reason: "R"}}, typ)

	g.Expect(drain(recorder)).To(Equal([]string{"Normal R \uFFFD is True"}), "a run of invalid bytes is one U+FFFD")
}
