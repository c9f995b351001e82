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

package jsonvalue

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Equal reports whether a and b are the same JSON value. Numbers are equal when their values
// are, whatever their Go types: 1 read from a map[string]any decoded by encoding/json is a
// float64, the same 1 converted from a typed object an int64.
func Equal(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		return ok && equalObjects(av, bv)
	case []any:
		bv, ok := b.([]any)
		return ok && slices.EqualFunc(av, bv, Equal)
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return equalScalars(a, b)
}

// equalObjects is Equal for two objects.
func equalObjects(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !Equal(x, y) {
			return false
		}
	}
	return true
}

// equalScalars is Equal for a, a number or a value of another Go type, and b.
func equalScalars(a, b any) bool {
	if x, ok := integer(a); ok {
		if y, ok := integer(b); ok {
			return x == y
		}
	}
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// integer returns v as an int64 when it is an integer of any Go type, or a float64 or
// json.Number that holds an integral value.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// number returns v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		// The number encoding/json writes for it, which is what a request carries: the shortest
		// decimal that reads back as the float32 (0.1, not its float64 widening 0.10000000149011612).
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(n), 'g', -1, 32), 64)
		return f, err == nil
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	if i, ok := integer(v); ok {
		return float64(i), true
	}
	return 0, false
}

// DeepCopy returns a copy of the JSON value v that shares no map or slice with it. Unlike
// runtime.DeepCopyJSONValue it does not panic on values of other types: they are scalars here
// and are returned as they are.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return DeepCopyMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = DeepCopy(x[i])
		}
		return out
	}
	return v
}

// DeepCopyMap returns a copy of m that shares no map or slice with it, as DeepCopy does.
func DeepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = DeepCopy(v)
	}
	return out
}

// SortedKeys returns the keys of the maps, each once, in order, so that requests built from maps
// are the same bytes every time.
func SortedKeys(maps ...map[string]any) []string {
	var keys []string
	for _, m := range maps {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Member returns m[k] and whether it is there. A null value and an empty list count as
// missing: the API server stores no nulls, a typed object converted to JSON has them for fields
// it cannot omit, and a typed object drops an empty list that the server may hold.
func Member(m map[string]any, k string) (any, bool) {
	v, ok := m[k]
	if l, isList := v.([]any); isList && len(l) == 0 {
		return v, false
	}
	return v, ok && v != nil
}

// Nested returns the value at path in m, and whether there is one.
func Nested(m map[string]any, path ...string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// NestedMap returns the map at path in m, or nil when there is none.
func NestedMap(m map[string]any, path ...string) map[string]any {
	v, _ := Nested(m, path...)
	mm, _ := v.(map[string]any)
	return mm
}

// Pointer returns the JSON pointer (RFC 6901) of the path.
func Pointer(path ...string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(escape(p))
	}
	return b.String()
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return pointerEscaper.Replace(token)
}

// Map returns v as an object, or nil when it is not one.
func Map(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// StringList returns the strings of a JSON list of strings; other elements are skipped.
func StringList(v any) []string {
	l := List(v)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// List returns v as a list, or nil when it is not one.
func List(v any) []any {
	l, _ := v.([]any)
	return l
}

// SameStatus reports whether conditions a and b have the same status, a missing one being the
// empty string, as a kind whose Go type requires the field returns it.
func SameStatus(a, b map[string]any) bool {
	x, y := a["status"], b["status"]
	if x == nil {
		x = ""
	}
	if y == nil {
		y = ""
	}
	return Equal(x, y)
}

// Conditions returns a copy of raw, a status.conditions value, when it is a list of conditions
// keyed by type: every element an object with a string type, no type twice. A missing value is
// an empty list. The elements are kept whole, with every field they carry.
func Conditions(raw any) ([]any, bool) {
	if raw == nil {
		return nil, true
	}
	l, ok := raw.([]any)
	if !ok {
		return nil, false
	}
	seen := make(map[string]bool, len(l))
	for _, e := range l {
		c, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		t, ok := c["type"].(string)
		if !ok || seen[t] {
			return nil, false
		}
		seen[t] = true
	}
	return slices.Clone(l), true
}

// ConditionType returns the type of c, an element of a list Conditions accepted.
func ConditionType(c any) string {
	t, _ := Map(c)["type"].(string)
	return t
}

// FindCondition returns the condition of type t in list, or nil.
func FindCondition(list []any, t string) map[string]any {
	for _, c := range list {
		if ConditionType(c) == t {
			return Map(c)
		}
	}
	return nil
}
