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
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/conditions"
)

// merger carries the changes a reconcile made, from before to after, over to the latest object:
// the three-way merge of the guarantee table in Helper.Patch's documentation.
//
//   - scalars: this reconcile's value wins where it changed one; others keep latest's value;
//   - objects (maps and structs, whatever the schema says): key by key, recursively; an object
//     missing on one side is an empty object there, so removing an object removes what before
//     had in it, and keys another writer added survive;
//   - lists: written whole when latest still has before's list (or already this reconcile's);
//     otherwise another writer changed the same list, which is a conflict;
//   - metadata.finalizers: a set, this reconcile's additions and removals applied to latest's;
//   - metadata.ownerReferences: a set keyed by uid, merged the same way;
//   - status.conditions: by type, a condition's lastTransitionTime aside; a condition another
//     writer changed too is a conflict unless its type is owned;
//   - other metadata is the server's.
//
// Conflicts are collected, not returned at the first: the caller reports all of one part.
type merger struct {
	owned []conditions.Type
	// order is the condition order of the object's type, nil for the default.
	order []conditions.Type
	// conflicts are the fields another writer changed too, as JSON pointers; a condition is
	// named by its type, as in /status/conditions[Ready].
	conflicts []string
}

// mergeMain returns latest with this reconcile's changes to metadata and everything outside
// status carried over, and status too when withStatus is set; latest is not modified.
func (m *merger) mergeMain(before, after, latest map[string]any, withStatus bool) map[string]any {
	result := deepCopyMap(latest)
	if result == nil {
		result = map[string]any{}
	}
	for _, k := range sortedKeys(before, after) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		m.key(nil, result, k, before, after)
	}
	bm, am := nestedMap(before, "metadata"), nestedMap(after, "metadata")
	rm, created := childMap(result, "metadata")
	for _, k := range []string{"annotations", "labels"} {
		m.key([]string{"metadata"}, rm, k, bm, am)
	}
	mergeFinalizers(rm, bm["finalizers"], am["finalizers"])
	mergeOwnerReferences(rm, bm["ownerReferences"], am["ownerReferences"])
	dropIfEmpty(result, "metadata", created)
	if withStatus {
		m.status(result, before, after)
	}
	return result
}

// mergeStatus returns latest with this reconcile's changes to status carried over; latest is not
// modified.
func (m *merger) mergeStatus(before, after, latest map[string]any) map[string]any {
	result := deepCopyMap(latest)
	if result == nil {
		result = map[string]any{}
	}
	m.status(result, before, after)
	return result
}

func (m *merger) status(result, before, after map[string]any) {
	bs, hasBS := member(before, "status")
	as, hasAS := member(after, "status")
	bsm, bok := bs.(map[string]any)
	asm, aok := as.(map[string]any)
	if (hasBS && !bok) || (hasAS && !aok) {
		m.key(nil, result, "status", before, after) // not an object: nothing to merge by key
		return
	}
	if hasBS == hasAS && (!hasAS || jsonEqual(bs, as)) {
		return // not changed by this reconcile
	}
	rs, hasRS := member(result, "status")
	rsm, _ := rs.(map[string]any)
	if rsm == nil {
		rsm = map[string]any{}
	}
	for _, k := range sortedKeys(bsm, asm) {
		if k != "conditions" {
			m.key([]string{"status"}, rsm, k, bsm, asm)
		}
	}
	m.conditions(rsm, bsm, asm)
	if len(rsm) > 0 || (hasRS && hasAS) {
		result["status"] = rsm
	} else {
		delete(result, "status")
	}
}

// key carries the change of key k from b to a (objects; nil is empty) over to l, which holds
// latest's value and is changed in place; path is the path of l.
func (m *merger) key(path []string, l map[string]any, k string, b, a map[string]any) {
	bv, hasB := member(b, k)
	av, hasA := member(a, k)
	if hasB == hasA && (!hasA || jsonEqual(bv, av)) {
		return // not changed by this reconcile: latest's value stays
	}
	at := append(slices.Clip(path), k)
	lv, hasL := member(l, k)
	bm, bIsMap := bv.(map[string]any)
	am, aIsMap := av.(map[string]any)
	_, bIsList := bv.([]any)
	_, aIsList := av.([]any)
	switch {
	case (bIsMap || !hasB) && (aIsMap || !hasA):
		// Objects, one of which may be missing: key by key.
		lm, _ := lv.(map[string]any)
		if lm == nil {
			lm = map[string]any{}
		}
		for _, kk := range sortedKeys(bm, am) {
			m.key(at, lm, kk, bm, am)
		}
		if len(lm) > 0 || (hasA && (hasL || !hasB)) {
			l[k] = lm // kept, even empty, while this reconcile has it and created it or latest has it
		} else {
			delete(l, k)
		}
	case bIsList || aIsList:
		switch {
		case hasL == hasA && (!hasA || jsonEqual(lv, av)):
			// Already this reconcile's list.
		case hasL == hasB && (!hasB || jsonEqual(lv, bv)):
			set(l, k, av, hasA)
		default:
			m.conflicts = append(m.conflicts, pointer(at...))
		}
	default:
		set(l, k, av, hasA)
	}
}

func set(l map[string]any, k string, v any, has bool) {
	if has {
		l[k] = deepCopy(v)
	} else {
		delete(l, k)
	}
}

// conditions merges status.conditions by type into rs, latest's status.
func (m *merger) conditions(rs, bs, as map[string]any) {
	bRaw, hasB := member(bs, "conditions")
	aRaw, hasA := member(as, "conditions")
	if hasB == hasA && (!hasA || jsonEqual(bRaw, aRaw)) {
		return
	}
	bc, okB := parseConditions(bRaw)
	ac, okA := parseConditions(aRaw)
	lRaw, _ := member(rs, "conditions")
	lc, okL := parseConditions(lRaw)
	if !okB || !okA || !okL {
		// Not a list of conditions after all: a list like any other.
		m.key([]string{"status"}, rs, "conditions", bs, as)
		return
	}
	owned := func(t string) bool { return slices.Contains(m.owned, conditions.Type(t)) }
	var types []string
	for _, c := range ac {
		if i := indexOfType(bc, c.Type); i < 0 || !sameContent(&bc[i], &c) {
			types = append(types, c.Type)
		}
	}
	for _, c := range bc {
		if indexOfType(ac, c.Type) < 0 {
			types = append(types, c.Type)
		}
	}
	for _, t := range types {
		b, a, l := findType(bc, t), findType(ac, t), findType(lc, t)
		switch {
		case sameContent(l, a):
			// Already as this reconcile wants it.
		case !sameContent(l, b) && !owned(t):
			m.conflicts = append(m.conflicts, fmt.Sprintf("/status/conditions[%s]", t))
		case a == nil:
			lc = slices.DeleteFunc(lc, func(c metav1.Condition) bool { return c.Type == t })
		case l != nil:
			c := *a
			if l.Status == c.Status {
				c.LastTransitionTime = l.LastTransitionTime
			}
			*l = c
		default:
			at := len(lc)
			for j := range lc {
				if compareTypes(m.order, t, lc[j].Type) < 0 {
					at = j
					break
				}
			}
			lc = slices.Insert(lc, at, *a)
		}
	}
	if len(m.conflicts) > 0 {
		return
	}
	if len(lc) == 0 {
		delete(rs, "conditions")
		return
	}
	raw := make([]any, len(lc))
	for i := range lc {
		raw[i] = conditionToMap(&lc[i])
	}
	rs["conditions"] = raw
}

// compareTypes orders condition types as conditions.Set inserts them (see conditions.Orderer):
// the types in first come first, in that order, Ready when first is nil; the others follow
// alphabetically.
func compareTypes(first []conditions.Type, a, b string) int {
	if first == nil {
		first = []conditions.Type{conditions.Ready}
	}
	ia, ib := slices.Index(first, conditions.Type(a)), slices.Index(first, conditions.Type(b))
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

// sameContent reports whether a and b (either may be nil, for a missing condition) agree on
// everything but LastTransitionTime, which this reconcile does not own apart from the status.
func sameContent(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason &&
		a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}

func indexOfType(list []metav1.Condition, t string) int {
	return slices.IndexFunc(list, func(c metav1.Condition) bool { return c.Type == t })
}

// findType returns the first condition of type t in list, or nil.
func findType(list []metav1.Condition, t string) *metav1.Condition {
	if i := indexOfType(list, t); i >= 0 {
		return &list[i]
	}
	return nil
}

// parseConditions reads a status.conditions value; a missing value is an empty list.
func parseConditions(raw any) ([]metav1.Condition, bool) {
	if raw == nil {
		return nil, true
	}
	l, ok := raw.([]any)
	if !ok {
		return nil, false
	}
	out := make([]metav1.Condition, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		if !conditionFromMap(m, &out[i]) {
			// Something the fast path does not know: let the converter decide.
			return parseConditionsSlowly(raw)
		}
	}
	return out, true
}

// conditionFromMap reads a condition the way runtime.DefaultUnstructuredConverter does, without
// reflection (it is on the path of every Patch), and reports whether m held only what a condition
// holds.
func conditionFromMap(m map[string]any, c *metav1.Condition) bool {
	for k, v := range m {
		switch k {
		case "type", "status", "reason", "message":
			s, ok := v.(string)
			if !ok {
				return false
			}
			switch k {
			case "type":
				c.Type = s
			case "status":
				c.Status = metav1.ConditionStatus(s)
			case "reason":
				c.Reason = s
			default:
				c.Message = s
			}
		case "observedGeneration":
			n, ok := integer(v)
			if !ok {
				return false
			}
			c.ObservedGeneration = n
		case "lastTransitionTime":
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return false
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return false
			}
			c.LastTransitionTime = metav1.NewTime(t.Local())
		default:
			return false
		}
	}
	return true
}

// conditionToMap returns c as runtime.DefaultUnstructuredConverter would.
func conditionToMap(c *metav1.Condition) map[string]any {
	m := map[string]any{
		"type":    c.Type,
		"status":  string(c.Status),
		"reason":  c.Reason,
		"message": c.Message,
	}
	if c.LastTransitionTime.IsZero() {
		m["lastTransitionTime"] = nil
	} else {
		m["lastTransitionTime"] = c.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	if c.ObservedGeneration != 0 {
		m["observedGeneration"] = c.ObservedGeneration
	}
	return m
}

func parseConditionsSlowly(raw any) ([]metav1.Condition, bool) {
	u, err := conditions.FromUnstructured(&unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"conditions": raw},
	}})
	if err != nil {
		return nil, false
	}
	return u.GetConditions(), true
}

// mergeFinalizers applies the finalizers added and removed from b to a to the metadata map m.
func mergeFinalizers(m map[string]any, b, a any) {
	bf, af := stringList(b), stringList(a)
	if slices.Equal(bf, af) {
		return
	}
	lf := stringList(m["finalizers"])
	if slices.Equal(lf, bf) {
		// No one else changed the list: it is after's, in after's order.
		setList(m, "finalizers", list(deepCopy(a)))
		return
	}
	var out []any
	for _, f := range lf {
		if slices.Contains(bf, f) && !slices.Contains(af, f) {
			continue // removed by this reconcile
		}
		if !slices.Contains(out, any(f)) {
			out = append(out, f)
		}
	}
	for _, f := range af {
		if !slices.Contains(bf, f) && !slices.Contains(out, any(f)) {
			out = append(out, f)
		}
	}
	setList(m, "finalizers", out)
}

// mergeOwnerReferences applies the owner references added, changed and removed from b to a to
// the metadata map m, identifying references by uid.
func mergeOwnerReferences(m map[string]any, b, a any) {
	bl, al := list(b), list(a)
	if jsonEqual(bl, al) {
		return
	}
	if jsonEqual(list(m["ownerReferences"]), bl) {
		setList(m, "ownerReferences", list(deepCopy(a)))
		return
	}
	out, _ := deepCopy(list(m["ownerReferences"])).([]any)
	for _, ref := range bl {
		if indexByUID(al, uidOf(ref)) < 0 {
			if i := indexByUID(out, uidOf(ref)); i >= 0 {
				out = slices.Delete(out, i, i+1)
			}
		}
	}
	for _, ref := range al {
		if i := indexByUID(bl, uidOf(ref)); i >= 0 && jsonEqual(bl[i], ref) {
			continue // not changed by this reconcile
		}
		if i := indexByUID(out, uidOf(ref)); i >= 0 {
			out[i] = deepCopy(ref)
		} else {
			out = append(out, deepCopy(ref))
		}
	}
	setList(m, "ownerReferences", out)
}

func uidOf(ref any) string {
	m, _ := ref.(map[string]any)
	uid, _ := m["uid"].(string)
	return uid
}

func indexByUID(refs []any, uid string) int {
	return slices.IndexFunc(refs, func(r any) bool { return uidOf(r) == uid })
}

// stringList returns the strings of a JSON list of strings; other elements are skipped.
func stringList(v any) []string {
	l := list(v)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// setList sets m[key] to l, or removes it when l is empty, as the API server stores an empty list.
func setList(m map[string]any, key string, l []any) {
	if len(l) == 0 {
		delete(m, key)
		return
	}
	m[key] = l
}

// childMap returns m[key], creating it when it is missing or not a map, and reports whether it
// created it.
func childMap(m map[string]any, key string) (child map[string]any, created bool) {
	if c, ok := m[key].(map[string]any); ok {
		return c, false
	}
	c := map[string]any{}
	m[key] = c
	return c, true
}

// dropIfEmpty removes m[key] when childMap created it and nothing was put in it.
func dropIfEmpty(m map[string]any, key string, created bool) {
	if c, ok := m[key].(map[string]any); ok && created && len(c) == 0 {
		delete(m, key)
	}
}
