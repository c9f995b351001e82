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
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set sets c on obj, replacing the condition of the same type, and reports whether anything
// changed.
//
//   - ObservedGeneration is set to obj's generation, so the condition says which spec it
//     describes. (When obj has no generation, as a [ForSlice] adapter with generation 0, c's own
//     ObservedGeneration is kept.)
//   - LastTransitionTime changes only when Status does: a new reason or message keeps the
//     existing time. On a transition, for a new condition, or for an existing condition that has
//     no transition time (one built in memory), it is c.LastTransitionTime when set, otherwise
//     now; either way truncated to whole seconds, which is all the API server stores, so an
//     object and its copy read back from the server are equal.
//   - A message with invalid UTF-8 has it replaced by U+FFFD, as the API server would.
//   - Setting a condition equal to the current one (type, status, reason, message, observed
//     generation) is not a change: nothing is written to obj and Set returns false. This path
//     does not allocate.
//   - A new condition is inserted at its place in the order (Ready first, then alphabetical, or
//     obj's [Orderer] order); existing conditions are never reordered, so writers that order
//     differently cannot fight over the list.
//   - An invalid condition (see [Validate]) is stored as given, like any other: it is a
//     programmer error, and it surfaces when the object is written. The patch package's
//     [github.com/tenon-dev/tenon/patch.Helper.Patch] and
//     [github.com/tenon-dev/tenon/patch.Applier.ApplyStatus] refuse to write an invalid
//     condition, with an error that wraps [ErrInvalid] and names the condition and the rule it
//     breaks, and the BeCompliant matcher of testing/matchers fails on it in tests. To check a
//     condition built from untrusted input (a reason from a user or another system), call
//     [Validate] first; [ReasonFrom] makes a valid reason of any text.
//   - The list is copied, never changed in place: a slice read from obj before Set still holds
//     the conditions as they were, so before and after can be compared.
func Set(obj Setter, c metav1.Condition) (changed bool) {
	if gen := obj.GetGeneration(); gen > 0 {
		c.ObservedGeneration = gen
	}
	c.Message = strings.ToValidUTF8(c.Message, "\uFFFD")

	list := obj.GetConditions()
	i := indexOf(list, c.Type)
	if i >= 0 {
		existing := &list[i]
		if existing.Status == c.Status && !existing.LastTransitionTime.IsZero() {
			c.LastTransitionTime = existing.LastTransitionTime
		} else {
			c.LastTransitionTime = transitionTime(c.LastTransitionTime)
		}
		if equal(existing, &c) {
			return false
		}
		list = slices.Clone(list)
		list[i] = c
		obj.SetConditions(list)
		return true
	}

	c.LastTransitionTime = transitionTime(c.LastTransitionTime)
	obj.SetConditions(insert(list, c, orderOf(obj)))
	return true
}

// MarkTrue sets a True condition of type t on obj and reports whether anything changed; see
// [Set], which also says what becomes of an invalid type or reason. A message longer than the
// API server accepts (32 KiB) is truncated, with "…" at the end, so it may come straight from an
// error.
func MarkTrue(obj Setter, t Type, reason Reason, message string) (changed bool) {
	return Set(obj, newCondition(t, metav1.ConditionTrue, reason, message))
}

// MarkFalse sets a False condition of type t on obj; see [MarkTrue].
func MarkFalse(obj Setter, t Type, reason Reason, message string) (changed bool) {
	return Set(obj, newCondition(t, metav1.ConditionFalse, reason, message))
}

// MarkUnknown sets an Unknown condition of type t on obj; see [MarkTrue].
func MarkUnknown(obj Setter, t Type, reason Reason, message string) (changed bool) {
	return Set(obj, newCondition(t, metav1.ConditionUnknown, reason, message))
}

func newCondition(t Type, status metav1.ConditionStatus, reason Reason, message string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: string(reason), Message: truncateMessage(message)}
}

// Delete removes the condition of type t from obj, every one of them if the list has several,
// and reports whether there was any. The list is copied, never modified in place.
func Delete(obj Setter, t Type) (changed bool) {
	list := obj.GetConditions()
	if indexOf(list, string(t)) < 0 {
		return false
	}
	obj.SetConditions(slices.DeleteFunc(slices.Clone(list), func(c metav1.Condition) bool { return c.Type == string(t) }))
	return true
}

// transitionTime returns t truncated to seconds, or now truncated when t is zero.
func transitionTime(t metav1.Time) metav1.Time {
	if t.IsZero() {
		return metav1.NewTime(time.Now().Truncate(time.Second))
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

// equal reports whether a and b carry the same information. LastTransitionTime is compared
// too, so that a transition time carried over from elsewhere is not lost.
func equal(a, b *metav1.Condition) bool {
	return a.Type == b.Type &&
		a.Status == b.Status &&
		a.Reason == b.Reason &&
		a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

func indexOf(list []metav1.Condition, t string) int {
	for i := range list {
		if list[i].Type == t {
			return i
		}
	}
	return -1
}
