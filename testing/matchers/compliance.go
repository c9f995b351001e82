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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// compliance returns the rules of [BeCompliant] that obj breaks, one message each, in rule
// order; none when it follows them all. The error is for objects it cannot read.
func compliance(obj runtime.Object) ([]string, error) {
	u, err := asUnstructured(obj)
	if err != nil {
		return nil, err
	}
	a, err := conditions.FromUnstructured(u)
	if err != nil {
		return nil, err
	}
	var p problems
	list := a.GetConditions()
	p.validAndUnique(list)
	ready := conditions.Get(a, conditions.Ready)
	if ready == nil {
		p.add("rule 2: no Ready condition: `kubectl wait --for=condition=Ready` would wait forever")
	}
	p.generations(u, list, ready)
	p.summary(a, u.GetDeletionTimestamp() != nil, ready)
	return p, nil
}

// problems are the messages of the rules an object breaks.
type problems []string

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// validAndUnique checks rule 1: every condition valid, and each type once.
func (p *problems) validAndUnique(list []metav1.Condition) {
	seen := make(map[string]bool, len(list))
	for i := range list {
		if err := conditions.Validate(list[i]); err != nil {
			p.add("rule 1: %v", err)
		}
		if seen[list[i].Type] {
			p.add("rule 1: condition %s appears more than once", list[i].Type)
		}
		seen[list[i].Type] = true
	}
}

// generations checks rule 3: status.observedGeneration set, and no generation newer than the
// object's, or older than it under a Ready condition that claims the current one.
func (p *problems) generations(u *unstructured.Unstructured, list []metav1.Condition, ready *metav1.Condition) {
	gen := u.GetGeneration()
	observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	switch {
	case !found:
		p.add("rule 3: no status.observedGeneration: kstatus cannot tell whether the status describes the current spec")
	case observed > gen:
		p.add("rule 3: status.observedGeneration %d is newer than metadata.generation %d", observed, gen)
	}
	for i := range list {
		if list[i].ObservedGeneration > gen {
			p.add("rule 3: condition %s observed generation %d, newer than metadata.generation %d", list[i].Type, list[i].ObservedGeneration, gen)
		}
	}
	if found && observed < gen && ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == gen {
		p.add("rule 3: Ready is True at generation %d but status.observedGeneration %d lags metadata.generation %d: kstatus reports the object InProgress", gen, observed, gen)
	}
}

// summary checks rules 4 and 5: an object that is not Ready, and not being deleted, says whether
// it is Reconciling or Stalled; Ready, Reconciling and Stalled never contradict each other.
func (p *problems) summary(a conditions.Getter, deleting bool, ready *metav1.Condition) {
	isReady := conditions.IsTrue(a, conditions.Ready)
	reconciling, stalled := conditions.IsTrue(a, conditions.Reconciling), conditions.IsTrue(a, conditions.Stalled)
	if !isReady && !deleting && !reconciling && !stalled {
		if ready != nil {
			p.add("rule 4: Ready is %s but neither Reconciling nor Stalled is True: kstatus falls back to Ready and reports the object InProgress, and can never report it Failed", ready.Status)
		} else {
			p.add("rule 4: Ready is missing and neither Reconciling nor Stalled is True: kstatus reports the object Current")
		}
	}
	if isReady && stalled {
		p.add("rule 5: Ready is True while Stalled is True")
	}
	if reconciling && stalled {
		p.add("rule 5: Reconciling and Stalled are both True: kstatus reports whichever comes first in the list")
	}
}

// asUnstructured returns obj as an *unstructured.Unstructured, converting typed objects; a
// typed object without TypeMeta, as a client returns it, gets its Go type's name as kind.
func asUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *conditions.Unstructured:
		return o.Unstructured, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert %T to unstructured: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		t := reflect.TypeOf(obj)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		u.SetKind(t.Name())
	}
	return u, nil
}
