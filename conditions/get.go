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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Get returns a copy of obj's condition of type t, or nil when obj has none.
func Get(obj Getter, t Type) *metav1.Condition {
	list := obj.GetConditions()
	if i := indexOf(list, string(t)); i >= 0 {
		c := list[i]
		return &c
	}
	return nil
}

// IsTrue reports whether obj has a condition of type t with status True.
func IsTrue(obj Getter, t Type) bool {
	return hasStatus(obj, t, metav1.ConditionTrue)
}

// IsFalse reports whether obj has a condition of type t with status False.
func IsFalse(obj Getter, t Type) bool {
	return hasStatus(obj, t, metav1.ConditionFalse)
}

// IsUnknown reports whether obj's condition of type t has status Unknown or is missing: either
// way nobody has said whether it holds.
func IsUnknown(obj Getter, t Type) bool {
	list := obj.GetConditions()
	i := indexOf(list, string(t))
	return i < 0 || list[i].Status == metav1.ConditionUnknown
}

// IsCurrent reports whether obj has a condition of type t that was computed for obj's current
// generation. A condition whose observedGeneration lags metadata.generation describes an older
// spec: the controller has not yet acted on the latest change, so its status must not be trusted.
func IsCurrent(obj Getter, t Type) bool {
	list := obj.GetConditions()
	i := indexOf(list, string(t))
	return i >= 0 && list[i].ObservedGeneration >= obj.GetGeneration()
}

// IsReady reports whether obj's Ready condition is True and current (see [IsCurrent]), and,
// when obj has a status.observedGeneration (see [GetObservedGeneration]), that it is current
// too.
//
// `kubectl wait --for=condition=Ready` (1.37) makes one generation check: with the condition's
// observedGeneration when it has one, and status.observedGeneration otherwise. IsReady is
// stricter in two cases, in which kubectl wait reports the object ready:
//
//   - Ready has no observedGeneration: IsReady cannot tell which spec it describes;
//   - Ready's observedGeneration is current but status.observedGeneration lags: the controller
//     has not finished the generation, kstatus reports the object InProgress, and the
//     BeCompliant matcher of testing/matchers
//     flags it.
//
// For an object whose Ready condition has an observedGeneration (as [Set] writes it) and that
// follows the convention BeCompliant checks, IsReady and kubectl wait agree.
func IsReady(obj Getter) bool {
	if !IsTrue(obj, Ready) || !IsCurrent(obj, Ready) {
		return false
	}
	if o, ok := obj.(metav1.Object); ok {
		if observed, found := GetObservedGeneration(o); found && observed < obj.GetGeneration() {
			return false
		}
	}
	return true
}

func hasStatus(obj Getter, t Type, status metav1.ConditionStatus) bool {
	list := obj.GetConditions()
	i := indexOf(list, string(t))
	return i >= 0 && list[i].Status == status
}
