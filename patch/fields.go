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

package patch

import (
	"encoding/json"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upToDate reports whether an apply of desired by manager would change nothing on live: every
// field of desired has the same value in live, and manager's managedFields entry for the apply
// operation on subresource ("" for the main resource) owns exactly the fields of desired, so
// server-side apply would neither change a value nor take or release ownership of a field.
//
// desired is the body of the apply request; its apiVersion, kind, metadata.name and
// metadata.namespace are identity, not fields. When live has no managedFields (a cache that
// strips them), nothing can be proved and upToDate returns false.
//
// It is conservative: a value the server normalises (a quantity "1000m" read back as "1"), a list
// another manager added elements to, or a list key the server defaulted make it return false, and
// the caller applies; never the other way round.
func upToDate(desired, live map[string]any, managed []metav1.ManagedFieldsEntry, manager, subresource string) bool {
	fields := desiredFields(desired)
	if !contains(live, fields) {
		return false
	}
	for i := range managed {
		e := &managed[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != subresource {
			continue
		}
		if e.FieldsV1 == nil {
			return false
		}
		var owned map[string]any
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &owned); err != nil {
			return false
		}
		return sameFields(owned, fields, true)
	}
	return false
}

// desiredFields returns desired without what identifies the object rather than describing it.
func desiredFields(desired map[string]any) map[string]any {
	out := make(map[string]any, len(desired))
	for k, v := range desired {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			m, _ := v.(map[string]any)
			meta := make(map[string]any, len(m))
			for mk, mv := range m {
				if mk != "name" && mk != "namespace" {
					meta[mk] = mv
				}
			}
			if len(meta) > 0 {
				out[k] = meta
			}
		default:
			out[k] = v
		}
	}
	return out
}

// contains reports whether live has every field of desired with the same value. Objects may have
// more fields in live (defaults, other managers' fields); lists must have the same length, their
// elements compared in order.
func contains(live, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			lv, ok := l[k]
			if !ok || !contains(lv, dv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !contains(l[i], d[i]) {
				return false
			}
		}
		return true
	}
	return jsonEqual(live, desired)
}

// sameFields reports whether the field set owned (managedFields' fieldsV1 format: "f:<name>" for
// a field, "k:<json>" for a list element by key, "v:<json>" for a set element by value, "i:<n>"
// for one by index, "." for the element itself) holds exactly the fields of the value v.
func sameFields(owned map[string]any, v any, root bool) bool {
	children := 0
	for k := range owned {
		if k != "." {
			children++
		}
	}
	if children == 0 && !root {
		// Owned as a whole: a scalar, an empty value, or an atomic object or list whose value
		// contains already compared.
		return true
	}
	switch d := v.(type) {
	case map[string]any:
		if len(d) != children {
			return false
		}
		for k, dv := range d {
			sub, ok := owned["f:"+k].(map[string]any)
			if !ok || !sameFields(sub, dv, false) {
				return false
			}
		}
		return true
	case []any:
		if len(d) != children {
			return false
		}
		used := make(map[string]bool, len(d))
		for i, e := range d {
			k := selector(owned, used, i, e)
			if k == "" {
				return false
			}
			used[k] = true
			sub, _ := owned[k].(map[string]any)
			if !sameFields(sub, e, false) {
				return false
			}
		}
		return true
	}
	// A scalar with owned sub-fields: not the same shape.
	return false
}

// selector returns the key of owned that selects the element e at index i of a list, or "".
func selector(owned map[string]any, used map[string]bool, i int, e any) string {
	for k := range owned {
		if used[k] || len(k) < 2 || k[1] != ':' {
			continue
		}
		raw := k[2:]
		switch k[0] {
		case 'i':
			if raw == strconv.Itoa(i) {
				return k
			}
		case 'v':
			var val any
			if json.Unmarshal([]byte(raw), &val) == nil && jsonEqual(val, e) {
				return k
			}
		case 'k':
			var key map[string]any
			if json.Unmarshal([]byte(raw), &key) != nil {
				continue
			}
			em, ok := e.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for kk, kv := range key {
				if ev, ok := em[kk]; !ok || !jsonEqual(ev, kv) {
					match = false
					break
				}
			}
			if match {
				return k
			}
		}
	}
	return ""
}
