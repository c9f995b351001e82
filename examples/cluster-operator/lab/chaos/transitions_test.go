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

package chaos

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// transitionEvent is one condition transition an Event records (observe.RecordEvents' notes):
// "<Type> is <S>", "<Type> changed from <A> to <B>" or "<Type> was removed (was <S>)".
type transitionEvent struct {
	condition, from, to string // "" for absent
}

// parseTransition reads a ConditionChanged Event's note; ok is false for any other note.
func parseTransition(note string) (transitionEvent, bool) {
	head, _, _ := strings.Cut(note, ": ")
	fields := strings.Fields(head)
	switch {
	case len(fields) == 3 && fields[1] == "is":
		return transitionEvent{condition: fields[0], to: fields[2]}, true
	case len(fields) == 6 && fields[1] == "changed" && fields[2] == "from" && fields[4] == "to":
		return transitionEvent{condition: fields[0], from: fields[3], to: fields[5]}, true
	case len(fields) == 5 && fields[1] == "was" && fields[2] == "removed" && fields[3] == "(was":
		return transitionEvent{condition: fields[0], from: strings.TrimSuffix(fields[4], ")")}, true
	}
	return transitionEvent{}, false
}

// repeatedTransitions checks that each condition transition of every object the Events regard
// was recorded once: in the order the Events were recorded, each transition of a condition
// starts where the one before it ended, and no Event was recorded again as a series. The first
// transition of a condition may start anywhere (observe.RecordEvents does not record a Ready
// condition that appears not ready). It returns how many transitions it read and a description
// of each one recorded twice.
func repeatedTransitions(events []eventsv1.Event) (int, []string) {
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	last := map[string]string{} // "<uid> <condition>" → the state the last transition ended in
	read, repeated := 0, []string(nil)
	for _, e := range events {
		if e.Action != "ConditionChanged" {
			continue
		}
		tr, ok := parseTransition(e.Note)
		if !ok {
			continue
		}
		read++
		what := fmt.Sprintf("%s %s/%s: %q", e.Regarding.Kind, e.Regarding.Namespace, e.Regarding.Name, e.Note)
		if e.Series != nil && e.Series.Count > 1 {
			repeated = append(repeated, fmt.Sprintf("%s recorded %d times (an Event series)", what, e.Series.Count))
		}
		key := string(e.Regarding.UID) + " " + tr.condition
		if state, seen := last[key]; seen && state != tr.from {
			repeated = append(repeated, fmt.Sprintf("%s after the condition had already become %q", what, state))
		}
		last[key] = tr.to
	}
	return read, repeated
}

// clusterEvents returns the Events about Clusters in namespace.
func (w *world) clusterEvents(t *testing.T, namespace string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := w.admin.List(t.Context(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("failed to list the Events of %s: %v", namespace, err)
	}
	return slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.Kind != "Cluster" })
}

func TestRepeatedTransitionsFindsATransitionRecordedTwice(t *testing.T) {
	event := func(uid, note string, at int64, series int32) eventsv1.Event {
		e := eventsv1.Event{Action: "ConditionChanged", Note: note}
		e.Regarding.Kind, e.Regarding.UID, e.Regarding.Name = "Cluster", types.UID("u-"+uid), uid
		e.EventTime.Time = e.EventTime.Add(time.Duration(at) * time.Second)
		if series > 0 {
			e.Series = &eventsv1.EventSeries{Count: series}
		}
		return e
	}
	for _, tc := range []struct {
		name     string
		events   []eventsv1.Event
		read     int
		repeated int
	}{
		{"a chain of transitions is recorded once", []eventsv1.Event{
			event("a", "Ready changed from False to True: all replicas available", 1, 0),
			event("a", "Ready changed from True to False: replica lost", 2, 0),
			event("a", "Ready changed from False to True: all replicas available", 3, 0),
			event("a", "Stalled is True: bad credentials", 1, 0),
			event("a", "Stalled was removed (was True)", 4, 0),
		}, 5, 0},
		{"the same transition twice in a row is repeated", []eventsv1.Event{
			event("a", "Ready changed from False to True: all replicas available", 1, 0),
			event("a", "Ready changed from False to True: all replicas available", 2, 0),
		}, 2, 1},
		{"a series is repeated", []eventsv1.Event{event("a", "Ready changed from False to True: x", 1, 2)}, 1, 1},
		{"objects and conditions are apart", []eventsv1.Event{
			event("a", "Ready changed from False to True: x", 1, 0),
			event("b", "Ready changed from False to True: x", 2, 0),
			event("a", "Stalled is True", 3, 0),
		}, 3, 0},
		{"other Events are not transitions", []eventsv1.Event{{Action: "Cleanup", Note: "step failed"}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read, repeated := repeatedTransitions(tc.events)
			if read != tc.read || len(repeated) != tc.repeated {
				t.Errorf("read %d, repeated %v; want %d and %d repeated", read, repeated, tc.read, tc.repeated)
			}
		})
	}
}
