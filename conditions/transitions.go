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

package conditions

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Transition is a change of a condition's status between two versions of an object.
type Transition struct {
	// Type is the condition's type.
	Type Type
	// From is the previous status, empty when the condition is new.
	From metav1.ConditionStatus
	// To is the new status, empty when the condition was removed.
	To metav1.ConditionStatus
	// Reason and Message are those of the new condition (of the old one when removed).
	Reason  Reason
	Message string
}

// Transitions returns the status changes from before to after, sorted by type: new conditions,
// removed conditions and conditions whose status changed. A new reason or message with the same
// status is not a transition.
func Transitions(before, after []metav1.Condition) []Transition {
	var out []Transition
	for i := range after {
		a := &after[i]
		j := indexOf(before, a.Type)
		if j >= 0 && before[j].Status == a.Status {
			continue
		}
		t := Transition{Type: Type(a.Type), To: a.Status, Reason: Reason(a.Reason), Message: a.Message}
		if j >= 0 {
			t.From = before[j].Status
		}
		out = append(out, t)
	}
	for i := range before {
		if indexOf(after, before[i].Type) < 0 {
			out = append(out, Transition{Type: Type(before[i].Type), From: before[i].Status, Reason: Reason(before[i].Reason), Message: before[i].Message})
		}
	}
	slices.SortFunc(out, func(a, b Transition) int { return Compare(nil, string(a.Type), string(b.Type)) })
	return out
}

// Healthy reports whether the transition ends in a healthy state for its type: True, or False
// for a negative-polarity type (see [SummaryOptions.NegativePolarity]); a removed condition
// counts as healthy for negative-polarity types only.
func (t Transition) Healthy(opts ...SummaryOption) bool {
	o := newSummaryOptions(opts)
	if t.To == "" {
		return o.negative(t.Type)
	}
	return t.To != metav1.ConditionUnknown && (t.To == metav1.ConditionTrue) != o.negative(t.Type)
}

// RecordEvents emits one Kubernetes Event on obj for each transition: Normal when it ends
// healthy, Warning otherwise, with the condition's reason and a note such as
// "Ready changed from False to True: all replicas available". The events API's action is
// "ConditionChanged". opts declare negative-polarity types as for [Summary].
func RecordEvents(recorder events.EventRecorder, obj runtime.Object, transitions []Transition, opts ...SummaryOption) {
	for _, t := range transitions {
		eventType := corev1.EventTypeNormal
		if !t.Healthy(opts...) {
			eventType = corev1.EventTypeWarning
		}
		var note string
		switch {
		case t.From == "":
			note = fmt.Sprintf("%s is %s", t.Type, t.To)
		case t.To == "":
			note = fmt.Sprintf("%s was removed (was %s)", t.Type, t.From)
		default:
			note = fmt.Sprintf("%s changed from %s to %s", t.Type, t.From, t.To)
		}
		if t.Message != "" {
			note += ": " + t.Message
		}
		reason := string(t.Reason)
		if reason == "" {
			reason = string(t.Type)
		}
		recorder.Eventf(obj, nil, eventType, reason, "ConditionChanged", "%s", truncateNote(note))
	}
}

// truncateNote keeps an event note under the events API's 1 kB limit.
func truncateNote(s string) string {
	const maxNote = 1000
	if len(s) <= maxNote {
		return s
	}
	cut := maxNote - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
