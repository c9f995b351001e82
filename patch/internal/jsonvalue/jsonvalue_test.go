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

package jsonvalue_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

func TestEqualComparesNumbersByValueWhateverTheirGoType(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b any
		want bool
	}{
		{"int64 and float64", int64(1), float64(1), true},
		{"int and int32", 3, int32(3), true},
		{"json.Number and int64", json.Number("7"), int64(7), true},
		{"a fraction and an integer", 1.5, int64(1), false},
		{"float32 and float64", float32(0.5), 0.5, true},
		{"float32 and the float64 it is sent as", float32(0.1), 0.1, true},
		{"float32 and its float64 widening, sent as another number", float32(0.1), float64(float32(0.1)), false},
		{"an integral float32 and an integer", float32(3), int64(3), true},
		{"a json.Number fraction", json.Number("0.25"), 0.25, true},
		{"a malformed json.Number", json.Number("x"), int64(0), false},
		{"two integers", int64(2), int64(3), false},
		{"a number and a string", int64(1), "1", false},
		{"strings", "a", "a", true},
		{"a string and a bool", "true", true, false},
		{"bools", true, false, false},
		{"nulls", nil, nil, true},
		{"null and an empty map", nil, map[string]any{}, false},
		{"maps by member", map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, true},
		{"maps of different sizes", map[string]any{"a": 1.0}, map[string]any{"a": 1.0, "b": 1.0}, false},
		{"maps with another key", map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, false},
		{"maps with another value", map[string]any{"a": 1.0}, map[string]any{"a": 2.0}, false},
		{"a map and a list", map[string]any{}, []any{}, false},
		{"lists by element", []any{int64(1), "x"}, []any{1.0, "x"}, true},
		{"lists of different lengths", []any{1.0}, []any{1.0, 1.0}, false},
		{"lists in another order", []any{1.0, 2.0}, []any{2.0, 1.0}, false},
		{"other types by reflect.DeepEqual", struct{ A int }{1}, struct{ A int }{1}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonvalue.Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := jsonvalue.Equal(tt.b, tt.a); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v (the other way round)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	orig := map[string]any{"spec": map[string]any{"items": []any{map[string]any{"a": "b"}}}, "n": int64(1)}
	cp := jsonvalue.DeepCopyMap(orig)
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("the copy differs (-orig +copy):\n%s", diff)
	}
	cp["spec"].(map[string]any)["items"].([]any)[0].(map[string]any)["a"] = "changed"
	if got := orig["spec"].(map[string]any)["items"].([]any)[0].(map[string]any)["a"]; got != "b" {
		t.Errorf("changing the copy changed the original: %v", got)
	}
	if jsonvalue.DeepCopyMap(nil) != nil {
		t.Error("the copy of a nil map is not nil")
	}
	if got := jsonvalue.DeepCopy(struct{}{}); got != struct{}{} {
		t.Errorf("a scalar of another type is not returned as it is: %v", got)
	}
}

func TestSortedKeysListsEachKeyOnceInOrder(t *testing.T) {
	got := jsonvalue.SortedKeys(map[string]any{"b": 1, "a": 1}, nil, map[string]any{"c": 1, "a": 1})
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestMemberCountsNullAndAnEmptyListAsMissing(t *testing.T) {
	m := map[string]any{"null": nil, "empty": []any{}, "list": []any{"x"}, "zero": int64(0), "map": map[string]any{}}
	for _, tt := range []struct {
		key  string
		want bool
	}{{"null", false}, {"empty", false}, {"absent", false}, {"list", true}, {"zero", true}, {"map", true}} {
		if _, got := jsonvalue.Member(m, tt.key); got != tt.want {
			t.Errorf("Member(%q) is there: %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestNestedFollowsMapsOnly(t *testing.T) {
	m := map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}, "name": "x"}}
	if v, ok := jsonvalue.Nested(m, "metadata", "labels", "a"); !ok || v != "b" {
		t.Errorf("Nested(metadata.labels.a) = %v, %v", v, ok)
	}
	if _, ok := jsonvalue.Nested(m, "metadata", "name", "x"); ok {
		t.Error("Nested went into a string")
	}
	if _, ok := jsonvalue.Nested(m, "metadata", "uid"); ok {
		t.Error("Nested found a missing member")
	}
	if got := jsonvalue.NestedMap(m, "metadata", "labels"); !cmp.Equal(got, map[string]any{"a": "b"}) {
		t.Errorf("NestedMap(metadata.labels) = %v", got)
	}
	if got := jsonvalue.NestedMap(m, "metadata", "name"); got != nil {
		t.Errorf("NestedMap of a string = %v, want nil", got)
	}
}

func TestPointerEscapesTildeAndSlash(t *testing.T) {
	for _, tt := range []struct {
		path []string
		want string
	}{
		{nil, ""},
		{[]string{"metadata", "labels", "app.kubernetes.io/name"}, "/metadata/labels/app.kubernetes.io~1name"},
		{[]string{"a~b", "", "c"}, "/a~0b//c"},
		{[]string{"~1"}, "/~01"},
	} {
		if got := jsonvalue.Pointer(tt.path...); got != tt.want {
			t.Errorf("Pointer(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestListsAndMaps(t *testing.T) {
	if got := jsonvalue.StringList([]any{"a", int64(1), "b"}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("StringList = %v, want the strings only", got)
	}
	if got := jsonvalue.StringList("a"); len(got) != 0 {
		t.Errorf("StringList of a string = %v, want none", got)
	}
	if jsonvalue.List(map[string]any{}) != nil || jsonvalue.Map([]any{}) != nil {
		t.Error("a map read as a list, or a list as a map")
	}
}

func TestConditionsAreAListKeyedByType(t *testing.T) {
	ready := map[string]any{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-12-03T00:00:00Z"}
	synced := map[string]any{"type": "Synced"}
	for _, tt := range []struct {
		name string
		raw  any
		ok   bool
	}{
		{"missing: empty", nil, true},
		{"conditions with other fields", []any{ready, synced}, true},
		{"not a list", map[string]any{}, false},
		{"an element not an object", []any{"Ready"}, false},
		{"an element without a string type", []any{map[string]any{"type": int64(1)}}, false},
		{"a type twice", []any{ready, map[string]any{"type": "Ready"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := jsonvalue.Conditions(tt.raw)
			if ok != tt.ok {
				t.Fatalf("Conditions(%v) ok = %v, want %v", tt.raw, ok, tt.ok)
			}
			if ok && tt.raw != nil && !cmp.Equal(l, tt.raw) {
				t.Errorf("Conditions(%v) = %v, want the elements whole", tt.raw, l)
			}
		})
	}
	list := []any{ready, synced}
	if got := jsonvalue.FindCondition(list, "Synced"); !cmp.Equal(got, synced) {
		t.Errorf("FindCondition(Synced) = %v", got)
	}
	if got := jsonvalue.FindCondition(list, "Stalled"); got != nil {
		t.Errorf("FindCondition(Stalled) = %v, want nil", got)
	}
	if got := jsonvalue.ConditionType("Ready"); got != "" {
		t.Errorf("ConditionType of a string = %q", got)
	}
}

func TestSameStatusTakesAMissingStatusForEmpty(t *testing.T) {
	for _, tt := range []struct {
		a, b map[string]any
		want bool
	}{
		{map[string]any{"status": "True"}, map[string]any{"status": "True"}, true},
		{map[string]any{"status": "True"}, map[string]any{"status": "False"}, false},
		{map[string]any{}, map[string]any{"status": ""}, true},
		{map[string]any{"status": ""}, map[string]any{}, true},
		{map[string]any{}, map[string]any{"status": "True"}, false},
	} {
		if got := jsonvalue.SameStatus(tt.a, tt.b); got != tt.want {
			t.Errorf("SameStatus(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
