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
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ErrNotCompliant is wrapped by the error [Check] returns.
var ErrNotCompliant = errors.New("status does not follow the condition convention")

// Check reports how obj's status breaks the convention that kstatus-based tools and
// `kubectl wait --for=condition=Ready` rely on, or nil when it follows it. Use it in tests, after
// a reconcile, to catch a status that tools would misread. The rules:
//
//  1. every condition is valid (see [Validate]) and no type appears twice;
//  2. there is a Ready condition;
//  3. status.observedGeneration exists; no condition, nor status.observedGeneration, claims a
//     generation newer than metadata.generation; and when Ready is True for the current
//     generation, status.observedGeneration is current too (otherwise kstatus reports the object
//     InProgress while Ready says it is done);
//  4. when Ready is not True (and the object is not being deleted), Reconciling or Stalled is
//     True: without them kstatus falls back to Ready and reports InProgress, and can never tell
//     a controller that makes progress from one that is stuck (see [Compute]);
//  5. Ready True does not coexist with a True Stalled, nor Reconciling True with Stalled True
//     (kstatus would report whichever comes first in the list). Ready and Reconciling may both
//     be True: an object can serve while it rolls out a change or retries a failed step.
//
// A status that lags a spec change the controller has not reconciled yet (Ready and
// status.observedGeneration both at an older generation) follows the convention: it is what
// every object looks like between a change and the next reconcile.
//
// The error wraps [ErrNotCompliant] and lists every broken rule.
func Check(obj runtime.Object) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	a, err := FromUnstructured(u)
	if err != nil {
		return err
	}
	var problems []error
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf(format, args...))
	}

	list := a.GetConditions()
	seen := make(map[string]bool, len(list))
	for i := range list {
		if err := Validate(list[i]); err != nil {
			report("rule 1: %w", err)
		}
		if seen[list[i].Type] {
			report("rule 1: condition %s appears more than once", list[i].Type)
		}
		seen[list[i].Type] = true
	}

	if !Has(a, Ready) {
		report("rule 2: no Ready condition: `kubectl wait --for=condition=Ready` would wait forever")
	}

	gen := u.GetGeneration()
	observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	switch {
	case !found:
		report("rule 3: no status.observedGeneration: kstatus cannot tell whether the status describes the current spec")
	case observed > gen:
		report("rule 3: status.observedGeneration %d is newer than metadata.generation %d", observed, gen)
	}
	for i := range list {
		if list[i].ObservedGeneration > gen {
			report("rule 3: condition %s observed generation %d, newer than metadata.generation %d", list[i].Type, list[i].ObservedGeneration, gen)
		}
	}
	if ready := Get(a, Ready); found && observed < gen && ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == gen {
		report("rule 3: Ready is True at generation %d but status.observedGeneration %d lags metadata.generation %d: kstatus reports the object InProgress", gen, observed, gen)
	}

	reconciling, stalled := IsTrue(a, Reconciling), IsTrue(a, Stalled)
	if !IsTrue(a, Ready) && u.GetDeletionTimestamp() == nil && !reconciling && !stalled {
		if c := Get(a, Ready); c != nil {
			report("rule 4: Ready is %s but neither Reconciling nor Stalled is True: kstatus falls back to Ready and reports the object InProgress, and can never report it Failed", c.Status)
		} else {
			report("rule 4: Ready is missing and neither Reconciling nor Stalled is True: kstatus reports the object Current")
		}
	}
	if IsTrue(a, Ready) && stalled {
		report("rule 5: Ready is True while Stalled is True")
	}
	if reconciling && stalled {
		report("rule 5: Reconciling and Stalled are both True: kstatus reports whichever comes first in the list")
	}

	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s %s: %w", ErrNotCompliant, u.GetKind(), u.GetName(), errors.Join(problems...))
}
