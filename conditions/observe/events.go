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

package observe

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/conditionrules"
)

// RecordEvents records a Kubernetes Event on obj for each condition, of the given types, whose
// status changed from before to after (a new condition and a removed one count): Normal when it
// ends healthy, Warning otherwise, with the condition's reason and a note such as
// "Ready changed from False to True: all replicas available", and the action "ConditionChanged".
// Healthy is True, or False for the negative-polarity types Reconciling, Stalled, Deleting and
// Degraded; a removed condition is healthy for those only.
//
// Without types it records the transitions of Ready and Stalled only: the two a person watching
// `kubectl events` needs, whatever dependent conditions moved with them. A new reason or message
// with the same status is not a transition: a steady state records nothing. Nor is a Ready
// condition that appears False or Unknown: that is how every new object starts, not news, and a
// failure shows as Stalled; Ready's first Event says it became True, or, later, that it stopped
// being True. A nil recorder records nothing.
//
// Call it after the status was written, with before the conditions the API server held when
// the write was made, and after those it holds now. The object the reconcile read is not
// always before: a cache that has not delivered the controller's own last status write shows
// the conditions from before it, and a transition computed from them would be recorded again.
// With patch.Helper, before is the conditions of Helper.Previous, which is that last write when a
// patch.History made Patch send nothing:
//
//	if err := h.Patch(ctx, cluster, owned); err == nil {
//		previous := h.Previous().(*v1alpha1.Cluster)
//		observe.RecordEvents(r.Recorder, cluster, previous.Status.Conditions, cluster.Status.Conditions)
//	}
func RecordEvents(recorder events.EventRecorder, obj runtime.Object, before, after []metav1.Condition, types ...conditions.Type) {
	if recorder == nil {
		return
	}
	if len(types) == 0 {
		types = []conditions.Type{conditions.Ready, conditions.Stalled}
	}
	for _, t := range types {
		note, reason, healthy, ok := transition(t, find(before, t), find(after, t))
		if !ok {
			continue
		}
		eventType := corev1.EventTypeNormal
		if !healthy {
			eventType = corev1.EventTypeWarning
		}
		recorder.Eventf(obj, nil, eventType, reason, "ConditionChanged", "%s", truncateNote(note))
	}
}

// transition describes the change of condition t from b to a (either nil when absent): the
// event's note and reason, and whether the condition's new state is healthy. ok is false when
// there is no transition to record: no change of status, or a condition that is not Ready yet.
func transition(t conditions.Type, b, a *metav1.Condition) (note, reason string, healthy, ok bool) {
	switch {
	case a == nil && b == nil, a != nil && b != nil && a.Status == b.Status:
		return "", "", false, false
	case b == nil && t == conditions.Ready && a.Status != metav1.ConditionTrue:
		return "", "", false, false // not ready yet: in progress, not a transition
	case a == nil:
		note, reason = fmt.Sprintf("%s was removed (was %s)", t, b.Status), b.Reason
		healthy = conditionrules.NegativePolarity(t)
	case b == nil:
		note, reason = withMessage(fmt.Sprintf("%s is %s", t, a.Status), a.Message), a.Reason
		healthy = a.Status != metav1.ConditionUnknown && (a.Status == metav1.ConditionTrue) != conditionrules.NegativePolarity(t)
	default:
		note, reason = withMessage(fmt.Sprintf("%s changed from %s to %s", t, b.Status, a.Status), a.Message), a.Reason
		healthy = a.Status != metav1.ConditionUnknown && (a.Status == metav1.ConditionTrue) != conditionrules.NegativePolarity(t)
	}
	if reason == "" {
		reason = string(t)
	}
	return note, reason, healthy, true
}

func find(list []metav1.Condition, t conditions.Type) *metav1.Condition {
	for i := range list {
		if list[i].Type == string(t) {
			return &list[i]
		}
	}
	return nil
}

func withMessage(note, message string) string {
	if message == "" {
		return note
	}
	return note + ": " + message
}

// truncateNote keeps an event note under the events API's 1 kB limit, valid UTF-8 (each run of
// invalid bytes replaced by U+FFFD) and cut at a rune boundary.
func truncateNote(s string) string {
	const maxNote = 1000
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxNote {
		return s
	}
	cut := maxNote - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
