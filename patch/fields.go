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

// upToDate reports whether an apply of desired by manager would change nothing on live. It
// walks desired, live and the field set of manager's managedFields entry for the apply operation
// on subresource ("" for the main resource) together, and holds only when:
//
//   - there is exactly one such entry, recorded for desired's apiVersion;
//   - at every map or struct, the entry owns exactly the fields desired sets there, and live has
//     each of them (live may have more: other managers' fields and server defaults, which the
//     apply keeps);
//   - at every list, live has as many elements as desired, in the same order, and the entry owns
//     exactly desired's elements, each by its key ("k:"), value ("v:") or index ("i:");
//   - at every value the entry owns as a whole, with no owned fields below it (a scalar, an
//     atomic map, struct or list, or an empty value), live's value is exactly desired's: the
//     apply replaces such a value, so a key live has and desired does not would be removed.
//
// Then server-side apply would neither change a value nor take or release ownership of a field.
// desired is the body of the apply request; its apiVersion, kind, metadata.name and
// metadata.namespace are identity, not fields. When live has no managedFields (a cache that
// strips them), nothing can be proved and upToDate returns false.
//
// It is conservative: a value the server normalises (a quantity "1000m" read back as "1"), a list
// another manager added elements to, a list key the server defaulted, or a default the server
// filled in inside a value owned as a whole (a fieldRef's apiVersion) make it return false, and
// the caller applies; never the other way round.
func upToDate(desired, live map[string]any, managed []metav1.ManagedFieldsEntry, manager, subresource string) bool {
	var entry *metav1.ManagedFieldsEntry
	for i := range managed {
		e := &managed[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != subresource {
			continue
		}
		if entry != nil {
			return false // server-side apply keeps one entry per manager: a state not understood
		}
		entry = e
	}
	if entry == nil || entry.FieldsV1 == nil || entry.APIVersion != desired["apiVersion"] {
		return false
	}
	var owned map[string]any
	if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &owned); err != nil {
		return false
	}
	return unchanged(owned, desiredFields(desired), live, true)
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

// unchanged reports whether applying the value d, whose owned fields (managedFields' fieldsV1
// format: "f:<name>" for a field, "k:<json>" for a list element by key, "v:<json>" for a set
// element by value, "i:<n>" for one by index, "." for the element itself) are owned, leaves the
// live value l as it is and owns exactly the fields of d; see [upToDate] for the rules.
func unchanged(owned map[string]any, d, l any, root bool) bool {
	children := 0
	for k := range owned {
		if k != "." {
			children++
		}
	}
	if children == 0 && !root {
		// Owned as a whole: the apply sets it to d, whatever live has.
		return jsonEqual(d, l)
	}
	switch dv := d.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		if !ok || len(dv) != children {
			return false
		}
		for k, de := range dv {
			sub, ok := owned["f:"+k].(map[string]any)
			if !ok {
				return false
			}
			le, ok := lv[k]
			if !ok || !unchanged(sub, de, le, false) {
				return false
			}
		}
		return true
	case []any:
		lv, ok := l.([]any)
		if !ok || len(lv) != len(dv) || len(dv) != children {
			return false
		}
		used := make(map[string]bool, len(dv))
		for i, de := range dv {
			k := selector(owned, used, i, de)
			if k == "" {
				return false
			}
			used[k] = true
			sub, _ := owned[k].(map[string]any)
			if !unchanged(sub, de, lv[i], false) {
				return false
			}
		}
		return true
	}
	// A scalar with owned fields below it: not the same shape.
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
