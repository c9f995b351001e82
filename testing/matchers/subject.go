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

package matchers

import (
	"fmt"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// subject is what a matcher looks at: the actual value, understood.
type subject struct {
	desc    string         // "Widget default/w", for messages
	obj     metav1.Object  // nil for a bare condition list
	runtime runtime.Object // nil for a bare condition list
	getter  conditions.Getter
	getErr  error // why getter is nil
	bare    bool  // a bare condition list, without a generation
}

// subjectOf understands actual: an object, an *unstructured.Unstructured, or a bare
// []metav1.Condition.
func subjectOf(actual any) (*subject, error) {
	s := &subject{}
	switch a := actual.(type) {
	case nil:
		return nil, fmt.Errorf("expected an object, got nil")
	case *conditions.Unstructured:
		if a == nil || a.Unstructured == nil {
			return nil, fmt.Errorf("expected an object, got a nil %T", actual)
		}
		s.obj, s.runtime, s.getter = a.Unstructured, a.Unstructured, a
	case *unstructured.Unstructured:
		if a == nil {
			return nil, fmt.Errorf("expected an object, got a nil %T", actual)
		}
		s.obj, s.runtime = a, a
		g, err := conditions.FromUnstructured(a)
		if err != nil {
			s.getErr = err
		} else {
			s.getter = g
		}
	case []metav1.Condition:
		list := a
		s.desc, s.bare = "the condition list", true
		s.getter = conditions.ForSlice(&list, 0)
		return s, nil
	default:
		return subjectOfValue(actual)
	}
	s.desc = describe(s.runtime, s.obj)
	return s, nil
}

// subjectOfValue understands an actual of any other type: an object, typed or not, a
// conditions.Getter, or both.
func subjectOfValue(actual any) (*subject, error) {
	if v := reflect.ValueOf(actual); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("expected an object, got a nil %T", actual)
	}
	s := &subject{}
	if o, ok := actual.(metav1.Object); ok {
		s.obj = o
	}
	if o, ok := actual.(runtime.Object); ok {
		s.runtime = o
	}
	if g, ok := actual.(conditions.Getter); ok {
		s.getter = g
	} else {
		s.getErr = fmt.Errorf("%T has no conditions: it needs a GetConditions() []metav1.Condition method (see conditions.Getter)", actual)
	}
	if s.obj == nil {
		if s.getter == nil {
			return nil, fmt.Errorf("expected an object, got %T", actual)
		}
		// A conditions.Getter that is not an object, such as an adapter: conditions only.
		s.desc = fmt.Sprintf("the %T", actual)
		return s, nil
	}
	s.desc = describe(s.runtime, s.obj)
	return s, nil
}

// conditions returns the subject's conditions, or an error when it has none to give.
func (s *subject) conditionsGetter() (conditions.Getter, error) {
	if s.getter == nil {
		return nil, s.getErr
	}
	return s.getter, nil
}

// describe names an object for messages: "Widget default/w".
func describe(robj runtime.Object, obj metav1.Object) string {
	kind := ""
	if robj != nil {
		kind = robj.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			t := reflect.TypeOf(robj)
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			kind = t.Name()
		}
	}
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(kind + " " + name)
}

// generationNote is " (generation 3, status.observedGeneration 2)" for objects, empty for a bare
// condition list.
func (s *subject) generationNote() string {
	if s.obj == nil {
		return ""
	}
	note := fmt.Sprintf(" (generation %d", s.obj.GetGeneration())
	if observed, ok := conditions.GetObservedGeneration(s.obj); ok {
		note += fmt.Sprintf(", status.observedGeneration %d", observed)
	}
	return note + ")"
}

// maxMessage is the length after which a condition message is cut in tables.
const maxMessage = 160

// conditionTable renders the subject's conditions as an aligned table, one condition a row.
func (s *subject) conditionTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Conditions of %s%s:\n", s.desc, s.generationNote())
	g, err := s.conditionsGetter()
	if err != nil {
		fmt.Fprintf(&b, "  (unreadable: %v)\n", err)
		return b.String()
	}
	list := g.GetConditions()
	if len(list) == 0 {
		b.WriteString("  (none)\n")
		return b.String()
	}
	var rows strings.Builder
	tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tOBSERVED\tLAST TRANSITION\tMESSAGE")
	for i := range list {
		c := &list[i]
		observed := fmt.Sprint(c.ObservedGeneration)
		if s.obj != nil && c.ObservedGeneration < s.obj.GetGeneration() {
			observed += " (stale)"
		}
		transition := "-"
		if !c.LastTransitionTime.IsZero() {
			transition = c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orDash(c.Reason), observed, transition, oneLine(c.Message))
	}
	_ = tw.Flush()
	for line := range strings.Lines(rows.String()) {
		b.WriteString(strings.TrimRight(line, " \n") + "\n") // rows without a message end in padding
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine makes a message fit one table row.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxMessage {
		s = string(r[:maxMessage-1]) + "…"
	}
	return s
}
