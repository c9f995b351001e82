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

	"github.com/tenon-dev/tenon/internal/conditionrules"
)

// orderOf returns the types obj wants first: nil, for Ready first, when it names none.
func orderOf(obj any) []Type {
	if o, ok := obj.(Orderer); ok {
		return o.ConditionOrder()
	}
	return nil
}

// compare orders condition types as [Orderer] says: the types in first come first, in that
// order; all others follow in byte-wise alphabetical order. With first nil, Ready comes first.
// It returns a negative number when a sorts before b, a positive number when after, 0 when
// they are equal.
func compare(first []Type, a, b string) int {
	return conditionrules.Compare(first, Type(a), Type(b))
}

// insert returns a copy of list with c inserted before the first condition that sorts after it.
// In a sorted list that is c's sorted position.
func insert(list []metav1.Condition, c metav1.Condition, first []Type) []metav1.Condition {
	at := len(list)
	for j := range list {
		if compare(first, c.Type, list[j].Type) < 0 {
			at = j
			break
		}
	}
	out := make([]metav1.Condition, 0, len(list)+1)
	out = append(out, list[:at]...)
	out = append(out, c)
	return append(out, list[at:]...)
}
