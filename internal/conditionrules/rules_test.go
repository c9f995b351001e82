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

package conditionrules_test

import (
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/conditionrules"
)

func TestCompareOrdersTheFirstTypesFirstAndTheRestAlphabetically(t *testing.T) {
	sign := func(n int) int {
		switch {
		case n < 0:
			return -1
		case n > 0:
			return 1
		}
		return 0
	}
	first := []string{"Ready", "Available"}
	for _, tt := range []struct {
		first []string
		a, b  string
		want  int
	}{
		{first, "Ready", "Available", -1},
		{first, "Available", "Ready", 1},
		{first, "Ready", "Ready", 0},
		{first, "Available", "Available", 0},
		{first, "Available", "Apple", -1},
		{first, "Apple", "Available", 1},
		{first, "Apple", "Banana", -1},
		{first, "Banana", "Apple", 1},
		{first, "Apple", "Apple", 0},
		{nil, "Ready", "Apple", -1},
		{nil, "Apple", "Ready", 1},
		{nil, "Ready", "Ready", 0},
		{nil, "Zebra", "apple", -1}, // byte-wise: upper case before lower case
		{[]string{}, "Ready", "Apple", 1},
	} {
		if got := sign(conditionrules.Compare(tt.first, tt.a, tt.b)); got != tt.want {
			t.Errorf("Compare(%q, %q, %q) = %d, want %d", tt.first, tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCompareSortsAsSetInserts(t *testing.T) {
	types := []string{"Stalled", "Ready", "Available", "Reconciling", "Degraded"}
	slices.SortFunc(types, func(a, b string) int { return conditionrules.Compare([]string{"Ready", "Reconciling"}, a, b) })
	want := []string{"Ready", "Reconciling", "Available", "Degraded", "Stalled"}
	if !slices.Equal(types, want) {
		t.Fatalf("sorted %q, want %q", types, want)
	}
}

func TestNegativePolarityListsTheStandardUnhealthyWhenTrueTypes(t *testing.T) {
	for _, tt := range []struct {
		t    string
		want bool
	}{
		{"Reconciling", true}, {"Stalled", true}, {"Deleting", true}, {"Degraded", true},
		{"Ready", false}, {"Available", false}, {"Progressing", false}, {"degraded", false},
	} {
		if got := conditionrules.NegativePolarity(tt.t); got != tt.want {
			t.Errorf("NegativePolarity(%q) = %v, want %v", tt.t, got, tt.want)
		}
	}
}
