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

package conditionrules

import (
	"slices"
	"strings"
)

// Ready is the type that comes first when an object names no order of its own.
const Ready = "Ready"

// Compare orders condition types: the types in first come first, in that order; all others
// follow in byte-wise alphabetical order. With first nil, Ready comes first. It returns a
// negative number when a sorts before b, a positive number when after, 0 when they are equal.
func Compare[T ~string](first []T, a, b T) int {
	if first == nil {
		first = []T{Ready}
	}
	ia, ib := slices.Index(first, a), slices.Index(first, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(string(a), string(b))
}

// negativePolarity lists the standard types for which True is the unhealthy status.
var negativePolarity = []string{"Reconciling", "Stalled", "Deleting", "Degraded"}

// NegativePolarity reports whether t is a standard type for which True is the unhealthy
// status: Reconciling, Stalled, Deleting or Degraded.
func NegativePolarity[T ~string](t T) bool {
	return slices.Contains(negativePolarity, string(t))
}
