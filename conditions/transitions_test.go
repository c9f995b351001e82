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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/tenon-dev/tenon/conditions"
)

func TestTransitions(t *testing.T) {
	g := NewWithT(t)
	before := []metav1.Condition{
		cond("Ready", "False", "Waiting", "", 1, at(0)),
		cond("Degraded", "False", "OK", "", 1, at(0)),
		cond("Old", "True", "R", "bye", 1, at(0)),
	}
	after := []metav1.Condition{
		cond("Ready", "True", "Succeeded", "all good", 2, at(1)),
		cond("Degraded", "False", "StillOK", "new message", 2, at(0)),
		cond("New", "Unknown", "Starting", "", 2, at(1)),
	}

	got := conditions.Transitions(before, after)

	g.Expect(got).To(Equal([]conditions.Transition{
		{Type: "Ready", From: "False", To: "True", Reason: "Succeeded", Message: "all good"},
		{Type: "New", To: "Unknown", Reason: "Starting"},
		{Type: "Old", From: "True", Reason: "R", Message: "bye"},
	}))
}

func TestRecordEvents(t *testing.T) {
	g := NewWithT(t)
	recorder := events.NewFakeRecorder(10)
	w := widget(1)
	transitions := []conditions.Transition{
		{Type: "Ready", From: "False", To: "True", Reason: "Succeeded", Message: "all good"},
		{Type: "Degraded", From: "False", To: "True", Reason: "ReplicaLost"},
		{Type: "Backup", To: "False", Reason: "Failed", Message: strings.Repeat("x", 2000)},
	}

	conditions.RecordEvents(recorder, w, transitions)

	g.Expect(recorder.Events).To(Receive(Equal("Normal Succeeded Ready changed from False to True: all good")))
	g.Expect(recorder.Events).To(Receive(Equal("Warning ReplicaLost Degraded changed from False to True")))
	var last string
	g.Expect(recorder.Events).To(Receive(&last))
	g.Expect(last).To(HavePrefix("Warning Failed Backup is False: xxx"))
	g.Expect(len(last)).To(BeNumerically("<", 1100), "notes are kept under the events API limit")
}

func TestMetricsRecordTheCurrentStatusOfEachCondition(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := conditions.NewMetrics()
	g.Expect(m.Register(reg)).To(Succeed())
	w := widget(1, cond("Ready", "False", "R", "", 1, at(0)), cond("Stalled", "True", "R", "", 1, at(0)))

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
