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

package patch_test

// This file is the oracle of the differential test: a model of Helper.Patch written from its
// guarantee table alone, on plain JSON values (map[string]any, []any, string, float64, bool).
// Each rule of the table is one function. S0 is the snapshot, A our changed copy, S1 the server
// object after another writer's change; the model predicts F, the object the server holds after
// Patch, and the error classes Patch may return.

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// absentValue is the type of absent.
type absentValue struct{}

// absent stands for a key that is not there.
var absent any = absentValue{}

func isAbsent(v any) bool { _, ok := v.(absentValue); return ok }

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

func isList(v any) bool { _, ok := v.([]any); return ok }

// lookup returns m[k], or absent.
func lookup(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return absent
}

// put sets m[k] to v, or deletes k when v is absent.
func put(m map[string]any, k string, v any) {
	if isAbsent(v) {
		delete(m, k)
		return
	}
	m[k] = v
}

// asObject returns v as an object; absent is the empty object.
func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// asList returns v as a list; absent is the empty list.
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
}

// orAbsent returns absent for an empty list or object, v otherwise.
func orAbsent(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return absent
		}
	case []any:
		if len(x) == 0 {
			return absent
		}
	}
	return v
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// sortedKeys returns the keys of the objects, each once, sorted.
func sortedKeys(objs ...map[string]any) []string {
	var keys []string
	for _, o := range objs {
		for k := range o {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// normalize applies the table's normalisation: an empty object is the same as an absent key.
// It also treats an empty list as an absent key, which a typed object cannot tell apart either
// (omitempty drops both), so that neither side of a comparison depends on how it was encoded.
// Elements of lists are normalised inside but never dropped.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			put(out, k, orAbsent(normalize(e)))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// content is the part of an object the table speaks about: every top-level field but
// apiVersion, kind and metadata, and of metadata only labels, annotations, finalizers and
// ownerReferences; normalised. Everything else in metadata is the server's.
func content(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			out[k] = v
		}
	}
	meta := map[string]any{}
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		put(meta, k, lookup(asObject(obj["metadata"]), k))
	}
	out["metadata"] = meta
	return normalize(out).(map[string]any)
}

// raws are the values of S0, A and S1 at one path as they are encoded, before normalisation.
// A list is written and tested whole, as encoded: an empty object inside one of its elements
// (a Gateway listener's `tls: {}`) is a change of the list, which the normalised values do not
// show. So whether a list changed is judged on these.
type raws struct{ s0, a, s1 any }

// at returns the raws of the field k of the objects r holds.
func (r raws) at(k string) raws {
	return raws{lookup(asObject(r.s0), k), lookup(asObject(r.a), k), lookup(asObject(r.s1), k)}
}

// encoded returns v normalised outside lists only: an empty object or list is an absent key,
// but a list's elements stay as they are encoded.
func encoded(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			put(out, k, orAbsent(encoded(e)))
		}
		return out
	case []any:
		return orAbsent(x)
	}
	return v
}

// sameEncoded reports whether x and y are equal with the lists in them compared as encoded.
func sameEncoded(x, y any) bool { return equal(orAbsent(encoded(x)), orAbsent(encoded(y))) }

// mergeValue merges one field of any shape outside the special rows of the table: the
// "scalar", "object" and "list" rows. It returns F's value and the paths that conflict.
func mergeValue(path string, s0, a, s1 any, r raws) (any, []string) {
	switch {
	case equal(a, s0) && sameEncoded(r.a, r.s0): // changed only by them, or by nobody: theirs kept
		return s1, nil
	case equal(s1, s0) && sameEncoded(r.s1, r.s0): // changed by us only: ours written
		return a, nil
	case isList(s0) || isList(a) || isList(s1) || isList(r.s0) || isList(r.a) || isList(r.s1):
		return mergeList(path, s1, r)
	case isObject(s0) || isObject(a) || isObject(s1):
		return mergeObject(path, s0, a, s1, r)
	default: // a scalar changed by both: ours wins
		return a, nil
	}
}

// mergeList is the "list" row, changed by both: a conflict unless S1's list already is ours,
// as encoded.
func mergeList(path string, s1 any, r raws) (any, []string) {
	if sameEncoded(r.a, r.s1) {
		return s1, nil
	}
	return s1, []string{path}
}

// mergeObject is the "object" row, changed by both: key by key, recursively, an absent object
// being the empty one. An object left empty is absent.
func mergeObject(path string, s0, a, s1 any, r raws) (any, []string) {
	o0, oa, o1 := asObject(s0), asObject(a), asObject(s1)
	out := map[string]any{}
	var conflicts []string
	for _, k := range sortedKeys(o0, oa, o1, asObject(r.s0), asObject(r.a), asObject(r.s1)) {
		v, c := mergeValue(path+"."+k, lookup(o0, k), lookup(oa, k), lookup(o1, k), r.at(k))
		put(out, k, v)
		conflicts = append(conflicts, c...)
	}
	return orAbsent(out), conflicts
}

// mergeFinalizers is the metadata.finalizers row: changed by both, S1's list minus the
// finalizers we removed, plus those we added, in our order, never twice; never a conflict.
func mergeFinalizers(s0, a, s1 any) any {
	switch {
	case equal(a, s0):
		return s1
	case equal(s1, s0):
		return a
	}
	l0, la := asList(s0), asList(a)
	var out []any
	for _, f := range asList(s1) {
		if !slices.Contains(l0, f) || slices.Contains(la, f) {
			out = append(out, f)
		}
	}
	for _, f := range la {
		if !slices.Contains(l0, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return orAbsent(out)
}

// mergeOwnerReferences is the metadata.ownerReferences row: changed by both, merged by uid, the
// references we removed removed, those we added or changed ours, theirs kept; never a conflict.
// The table gives no order; the comparison sorts the list by uid.
func mergeOwnerReferences(s0, a, s1 any) any {
	switch {
	case equal(a, s0):
		return s1
	case equal(s1, s0):
		return a
	}
	byUID := func(l any) map[any]any {
		m := map[any]any{}
		for _, r := range asList(l) {
			m[asObject(r)["uid"]] = r
		}
		return m
	}
	m0, ma, m1 := byUID(s0), byUID(a), byUID(s1)
	ref := func(m map[any]any, uid any) any {
		if r, ok := m[uid]; ok {
			return r
		}
		return absent
	}
	var out []any
	for _, r := range asList(s1) {
		uid := asObject(r)["uid"]
		if ra := ref(ma, uid); equal(ra, ref(m0, uid)) {
			out = append(out, r) // not changed by us: theirs
		} else if !isAbsent(ra) {
			out = append(out, ra) // changed by us: ours
		} // removed by us
	}
	for _, ra := range asList(a) {
		uid := asObject(ra)["uid"]
		if _, inS1 := m1[uid]; !inS1 && !equal(ra, ref(m0, uid)) {
			out = append(out, ra) // added by us, or changed by us and removed by them
		}
	}
	return orAbsent(out)
}

// conditionLess is the condition order: Ready first, then the other types alphabetically.
func conditionLess(x, y string) bool {
	if x == "Ready" || y == "Ready" {
		return x == "Ready" && y != "Ready"
	}
	return x < y
}

// findCondition returns the condition of type t in the list, or absent, and its index.
func findCondition(list []any, t string) (any, int) {
	for i, c := range list {
		if asObject(c)["type"] == t {
			return c, i
		}
	}
	return absent, -1
}

// sameCondition reports whether two conditions (or absent) are the same, lastTransitionTime
// aside: whether a condition "differs between S0 and A".
func sameCondition(x, y any) bool {
	if isAbsent(x) || isAbsent(y) {
		return isAbsent(x) && isAbsent(y)
	}
	strip := func(c any) map[string]any {
		out := map[string]any{}
		for k, v := range asObject(c) {
			if k != "lastTransitionTime" {
				out[k] = v
			}
		}
		return out
	}
	return equal(strip(x), strip(y))
}

// mergeConditions is the status.conditions rows, as the table states them "more precisely".
// owned reports whether a type is owned (OwnedConditions, or ForceOverwriteConditions).
func mergeConditions(s0, a, s1 any, owned func(string) bool) (any, []string) {
	l0, la, l1 := asList(s0), asList(a), asList(s1)
	var types []string
	for _, c := range append(slices.Clone(l0), la...) {
		if t := asObject(c)["type"].(string); !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return conditionLess(types[i], types[j]) })

	out := slices.Clone(l1) // the types we did not change are S1's, in S1's order
	var added []any
	var conflicts []string
	for _, t := range types {
		c0, _ := findCondition(l0, t)
		ca, _ := findCondition(la, t)
		if sameCondition(c0, ca) {
			continue // not changed by us
		}
		c1, _ := findCondition(l1, t)
		switch {
		case owned(t) || sameCondition(c1, c0):
			want := ca
			if !isAbsent(ca) {
				w := map[string]any{}
				for k, v := range asObject(ca) {
					w[k] = v
				}
				if !isAbsent(c1) && equal(orEmpty(lookup(asObject(c1), "status")), orEmpty(lookup(w, "status"))) {
					put(w, "lastTransitionTime", lookup(asObject(c1), "lastTransitionTime"))
				}
				want = w
			}
			_, i := findCondition(out, t)
			switch {
			case i >= 0 && isAbsent(want):
				out = slices.Delete(out, i, i+1)
			case i >= 0:
				out[i] = want
			case !isAbsent(want):
				added = append(added, want)
			}
		case sameCondition(c1, ca): // S1's already is ours: nothing to do
		default:
			conflicts = append(conflicts, "status.conditions["+t+"]")
		}
	}
	// added is in condition order: each goes before the first condition that sorts after it.
	for _, c := range added {
		t := asObject(c)["type"].(string)
		i := slices.IndexFunc(out, func(o any) bool { return conditionLess(t, asObject(o)["type"].(string)) })
		if i < 0 {
			i = len(out)
		}
		out = slices.Insert(out, i, c)
	}
	if len(conflicts) > 0 {
		return s1, conflicts
	}
	return orAbsent(out), nil
}

// mergeAppendedDuplicates is the table's row for a condition list to which another writer added a
// second condition of a type the list has (S1 is not keyed by type; S0 and A are). The Helper keys
// the list by type as the snapshot shows it: where A only changes and removes conditions of S0,
// and S1 still has S0's types at S0's indexes, it writes in place, each element guarded alone,
// so ours lands on the first condition of its type and the other writer's stays. A guard that
// fails, or an added condition (the whole list is tested), makes it a list like any other, which
// both changed: ok is false then, and mergeValue finds the conflict.
func mergeAppendedDuplicates(s0, a, s1 any, owned func(string) bool) (_ any, _ []string, ok bool) {
	l0, la, l1 := asList(s0), asList(a), asList(s1)
	if isAbsent(s1) || !isList(s1) || len(l1) < len(l0) || len(la) == 0 {
		return nil, nil, false
	}
	for i := range l0 {
		if !isObject(l1[i]) || asObject(l1[i])["type"] != asObject(l0[i])["type"] {
			return nil, nil, false
		}
	}
	var kept, removed []int
	j := 0
	for i := range l0 {
		if j < len(la) && asObject(l0[i])["type"] == asObject(la[j])["type"] {
			kept = append(kept, i)
			j++
		} else {
			removed = append(removed, i)
		}
	}
	if j < len(la) {
		return nil, nil, false
	}
	out := slices.Clone(l1)
	for j, i := range kept {
		c0, c1 := asObject(l0[i]), asObject(l1[i])
		if equal(c0, asObject(la[j])) {
			continue
		}
		t := c0["type"].(string)
		if !owned(t) && !equal(c0, c1) ||
			owned(t) && (!equal(lookup(c0, "status"), lookup(c1, "status")) || !equal(lookup(c0, "lastTransitionTime"), lookup(c1, "lastTransitionTime"))) {
			return nil, nil, false
		}
		out[i] = la[j]
	}
	for _, i := range slices.Backward(removed) {
		if t := asObject(l0[i])["type"].(string); !owned(t) && !equal(l0[i], l1[i]) {
			return nil, nil, false
		}
		out = slices.Delete(out, i, i+1)
	}
	return orAbsent(out), nil, true
}

// orEmpty returns v, or the empty string for absent: a condition without a status has the
// status "" where a Go type requires the field.
func orEmpty(v any) any {
	if isAbsent(v) || v == nil {
		return ""
	}
	return v
}

// conditionsByType reports whether v, a status.conditions value, is a list of conditions keyed
// by type (every element an object with a string type, no type twice), or absent: the table's
// conditions rows. Any other value is a list like any other.
func conditionsByType(v any) bool {
	if isAbsent(v) {
		return true
	}
	l, ok := v.([]any)
	if !ok {
		return false
	}
	seen := map[string]bool{}
	for _, e := range l {
		t, ok := asObject(e)["type"].(string)
		if !isObject(e) || !ok || seen[t] {
			return false
		}
		seen[t] = true
	}
	return true
}

// mergeMetadata merges the four fields of metadata the table speaks about.
func mergeMetadata(s0, a, s1 any, r raws) (any, []string) {
	m0, ma, m1 := asObject(s0), asObject(a), asObject(s1)
	out := map[string]any{}
	var conflicts []string
	for _, k := range sortedKeys(m0, ma, m1) {
		v0, va, v1 := lookup(m0, k), lookup(ma, k), lookup(m1, k)
		switch k {
		case "finalizers":
			put(out, k, mergeFinalizers(v0, va, v1))
		case "ownerReferences":
			put(out, k, mergeOwnerReferences(v0, va, v1))
		default: // labels and annotations: granular maps, the "object" row
			v, c := mergeValue("metadata."+k, v0, va, v1, r.at(k))
			put(out, k, v)
			conflicts = append(conflicts, c...)
		}
	}
	return out, conflicts
}

// mergeStatus merges status: conditions by their rows, every other field by mergeValue. seen
// reports that the Helper read S1's status before writing its own: the answer to its request for
// metadata and spec, which a kind with a status subresource sends first. A condition another
// writer appended, a second of its type, is then in view, and the list is one like any other.
func mergeStatus(s0, a, s1 any, r raws, owned func(string) bool, seen bool) (any, []string) {
	m0, ma, m1 := asObject(s0), asObject(a), asObject(s1)
	out := map[string]any{}
	var conflicts []string
	for _, k := range sortedKeys(m0, ma, m1) {
		var v any
		var c []string
		byType := k == "conditions" && conditionsByType(lookup(m0, k)) && conditionsByType(lookup(ma, k))
		var merged bool
		switch {
		case byType && conditionsByType(lookup(m1, k)):
			v, c = mergeConditions(lookup(m0, k), lookup(ma, k), lookup(m1, k), owned)
			merged = true
		case byType && !seen:
			v, c, merged = mergeAppendedDuplicates(lookup(m0, k), lookup(ma, k), lookup(m1, k), owned)
		}
		if !merged {
			v, c = mergeValue("status."+k, lookup(m0, k), lookup(ma, k), lookup(m1, k), r.at(k))
		}
		put(out, k, v)
		conflicts = append(conflicts, c...)
	}
	return orAbsent(out), conflicts
}

// mergeMain merges the part of an object outside status (metadata and spec, or a ConfigMap's
// data), the part the first request writes. F's status is S1's.
func mergeMain(s0, a, s1 map[string]any, r raws) (map[string]any, []string) {
	out := map[string]any{}
	var conflicts []string
	for _, k := range sortedKeys(s0, a, s1, asObject(r.s0), asObject(r.a), asObject(r.s1)) {
		var v any
		var c []string
		switch k {
		case "status":
			v = lookup(s1, k)
		case "metadata":
			v, c = mergeMetadata(lookup(s0, k), lookup(a, k), lookup(s1, k), r.at(k))
		default:
			v, c = mergeValue(k, lookup(s0, k), lookup(a, k), lookup(s1, k), r.at(k))
		}
		put(out, k, v)
		conflicts = append(conflicts, c...)
	}
	return out, conflicts
}

// Error classes Patch may return.
const (
	errNone      = "ok"
	errConflict  = "conflict"
	errNotFound  = "not-found"
	errForbidden = "forbidden"
	errInternal  = "internal"
	errInvalid   = "invalid"
)

// faultSpot says which of Patch's requests fail with an injected error, every time they are sent.
type faultSpot string

const (
	faultNone   faultSpot = ""
	faultMain   faultSpot = "metadata+spec"
	faultStatus faultSpot = "status"
)

// modelCase is the input of the model.
type modelCase struct {
	// S0, A and S1 are whole objects as JSON values; S1 is nil when the object is gone. A is the
	// object given to Patch, before the options changed it.
	S0, A, S1 map[string]any

	// StatusSubresource reports whether the kind has a status subresource.
	StatusSubresource bool

	// Owned are the OwnedConditions types; Force is ForceOverwriteConditions(true).
	Owned []string
	Force bool

	// ObservedGeneration is WithObservedGeneration.
	ObservedGeneration bool

	// Fault is the request that fails with an injected error of class FaultClass, every time it
	// is sent. With FaultOnRetry, the fault was injected into a retry of the request: the first
	// one was sent and failed with a conflict.
	Fault        faultSpot
	FaultClass   string
	FaultOnRetry bool
}

// prediction is what the model predicts.
type prediction struct {
	// F is the content of the server object, nil when the object is gone.
	F map[string]any

	// Errs are the error classes Patch may return (usually one).
	Errs []string

	// Unchanged reports that A (with the options) equals S0: Patch sends nothing.
	// UnchangedButTimes reports that A equals S0 but for conditions' lastTransitionTime: the
	// table makes that no change for the server, so Patch may send nothing.
	Unchanged, UnchangedButTimes bool

	// Conflicts are the paths at which the model found a conflict, for descriptions.
	Conflicts []string

	// Alternatives are other outcomes the table allows as well: a request that fails with an
	// injected error may never be sent when, after a conflict, nothing is left to write.
	Alternatives []prediction
}

func metadataOf(obj map[string]any) map[string]any { return asObject(obj["metadata"]) }

// withoutTimes returns c with every condition's lastTransitionTime removed, when its conditions
// are keyed by type: a list with a type twice is a list like any other, whose times the Helper
// writes as any other change.
func withoutTimes(c map[string]any) map[string]any {
	status := asObject(c["status"])
	conds := asList(status["conditions"])
	if conds == nil || !conditionsByType(status["conditions"]) {
		return c
	}
	out := map[string]any{}
	for k, v := range c {
		out[k] = v
	}
	s := map[string]any{}
	for k, v := range status {
		s[k] = v
	}
	var cs []any
	for _, cond := range conds {
		m := map[string]any{}
		for k, v := range asObject(cond) {
			if k != "lastTransitionTime" {
				m[k] = v
			}
		}
		cs = append(cs, m)
	}
	s["conditions"] = cs
	out["status"] = s
	return out
}

// inTypeOrder returns c with its conditions sorted by type, when they are keyed by type: the
// merge rules take each condition by its type, and the types we did not change keep S1's order
// (see mergeConditions), so conditions that A holds in another order than S0, each the same,
// are nothing to write.
func inTypeOrder(c map[string]any) map[string]any {
	status := asObject(c["status"])
	conds := asList(status["conditions"])
	if conds == nil || !conditionsByType(status["conditions"]) {
		return c
	}
	out := maps.Clone(c)
	s := maps.Clone(status)
	sorted := slices.Clone(conds)
	slices.SortFunc(sorted, func(x, y any) int {
		return strings.Compare(asObject(x)["type"].(string), asObject(y)["type"].(string))
	})
	s["conditions"] = sorted
	out["status"] = s
	return out
}

// withOptions returns the content of A with the options applied: WithObservedGeneration sets
// status.observedGeneration to S0's metadata.generation, a scalar change of ours.
func withOptions(mc modelCase) map[string]any {
	return normalize(withOptionsRaw(mc)).(map[string]any)
}

// withOptionsRaw is withOptions without the normalisation: what the Helper sends.
func withOptionsRaw(mc modelCase) map[string]any {
	a := rawContent(mc.A)
	if !mc.ObservedGeneration {
		return a
	}
	status := map[string]any{}
	for k, v := range asObject(a["status"]) {
		status[k] = v
	}
	put(status, "observedGeneration", lookup(metadataOf(mc.S0), "generation"))
	a["status"] = status
	return a
}

// listsChanged reports whether a list outside status.conditions (whose rows judge it) differs
// between x and y as encoded, which the normalised values may not show.
func listsChanged(x, y map[string]any) bool {
	without := func(m map[string]any) any {
		out := clone(m).(map[string]any)
		if st, ok := out["status"].(map[string]any); ok {
			delete(st, "conditions")
		}
		return out
	}
	return !sameEncoded(without(x), without(y))
}

// predict is the model of Helper.Patch: the guarantee table's section on requests, errors and
// what is written, on top of the merge rules above.
func predict(mc modelCase) prediction {
	a := withOptions(mc)
	s0 := content(mc.S0)
	being := func(obj map[string]any) bool { return !isAbsent(lookup(metadataOf(obj), "deletionTimestamp")) }

	var s1 map[string]any
	r := raws{s0: rawContent(mc.S0), a: withOptionsRaw(mc), s1: absent}
	if mc.S1 != nil {
		s1 = content(mc.S1)
		r.s1 = rawContent(mc.S1)
	}
	listChanged := listsChanged(r.a.(map[string]any), r.s0.(map[string]any))
	switch {
	case equal(inTypeOrder(a), inTypeOrder(s0)) && !listChanged:
		p := prediction{F: s1, Errs: []string{errNone}, Unchanged: true}
		if !equal(r.a, r.s0) {
			p.Alternatives = writtenAnyway(mc, s1)
		}
		return p
	case equal(withoutTimes(inTypeOrder(a)), withoutTimes(inTypeOrder(s0))) && !listChanged:
		return prediction{F: s1, Errs: []string{errNone}, UnchangedButTimes: true}
	case mc.S1 == nil && being(mc.S0): // gone, which removing the last finalizer meant
		return prediction{Errs: []string{errNone}}
	case mc.S1 == nil:
		return prediction{Errs: []string{errNotFound}}
	case !equal(metadataOf(mc.S1)["uid"], metadataOf(mc.S0)["uid"]): // another object, same name
		return prediction{F: s1, Errs: []string{errNotFound}}
	}

	stripStatus := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "status" {
				out[k] = v
			}
		}
		return out
	}
	owned := func(t string) bool { return mc.Force || slices.Contains(mc.Owned, t) }
	main, mainConflicts := mergeMain(s0, a, s1, r)
	rawA, rawS0 := r.a.(map[string]any), r.s0.(map[string]any)
	mainChanged := !equal(stripStatus(a), stripStatus(s0)) || listsChanged(stripStatus(rawA), stripStatus(rawS0))
	status, statusConflicts := mergeStatus(s0["status"], a["status"], s1["status"], r.at("status"), owned,
		mc.StatusSubresource && mainChanged)
	withStatus := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		put(out, "status", status)
		return normalize(out).(map[string]any)
	}
	statusChanged := !equal(lookup(a, "status"), lookup(s0, "status")) ||
		listsChanged(map[string]any{"status": lookup(rawA, "status")}, map[string]any{"status": lookup(rawS0, "status")})
	// gone: an object being deleted disappears when F has no finalizers left.
	gone := func(f map[string]any) bool {
		return being(mc.S1) && isAbsent(lookup(asObject(f["metadata"]), "finalizers"))
	}
	// failed is the prediction for a request that fails with the injected error; a conflict the
	// same request runs into may be found first, by a read before the request.
	// When nothing is left to write to the part, Patch may learn that from a read after a
	// conflict and not send the request; then it succeeds as without the fault.
	failed := func(f map[string]any, conflicts []string, nothingToWrite bool) prediction {
		p := prediction{F: f, Errs: []string{mc.FaultClass}}
		if len(conflicts) > 0 && !mc.FaultOnRetry {
			p.Errs, p.Conflicts = append(p.Errs, errConflict), conflicts
		}
		if nothingToWrite {
			without := mc
			without.Fault = faultNone
			p.Alternatives = []prediction{predict(without)}
		}
		return p
	}

	if !mc.StatusSubresource { // one request carries everything: any conflict writes nothing
		conflicts := slices.Concat(mainConflicts, statusConflicts)
		switch {
		case mc.Fault == faultMain:
			return failed(s1, conflicts, len(conflicts) == 0 && equal(withStatus(main), s1))
		case len(conflicts) > 0:
			return prediction{F: s1, Errs: []string{errConflict}, Conflicts: conflicts}
		}
		f := withStatus(main)
		if gone(f) {
			return prediction{Errs: []string{errNone}}
		}
		return prediction{F: f, Errs: []string{errNone}}
	}

	if mc.Fault == faultMain && !mainChanged {
		// Nothing to write outside the status, as the model sees it; Patch may still send a main
		// request that writes only a value the model normalises away (an empty object a typed
		// object shows; see writtenFields in the differential test). The injected error then fails it, nothing is written,
		// and the error is the injected one.
		without := mc
		without.Fault = faultNone
		p := predict(without)
		p.Alternatives = append(p.Alternatives, prediction{F: s1, Errs: []string{mc.FaultClass}})
		return p
	}

	switch {
	case mc.Fault == faultMain && mainChanged:
		return failed(s1, mainConflicts, len(mainConflicts) == 0 && equal(normalize(main), s1))
	case len(mainConflicts) > 0:
		return prediction{F: s1, Errs: []string{errConflict}, Conflicts: mainConflicts}
	case gone(main): // the status change is dropped
		return prediction{Errs: []string{errNone}}
	case mc.Fault == faultStatus && statusChanged:
		return failed(normalize(main).(map[string]any), statusConflicts,
			len(statusConflicts) == 0 && equal(status, lookup(s1, "status")))
	case len(statusConflicts) > 0:
		return prediction{F: normalize(main).(map[string]any), Errs: []string{errConflict}, Conflicts: statusConflicts}
	}
	return prediction{F: withStatus(main), Errs: []string{errNone}}
}

// writtenAnyway returns the outcomes of a Patch that the model sees as changing nothing but that
// sends a request all the same, because A differs from S0 only in a value the model normalises
// away (an empty object a typed object shows; see writtenFields in the differential test). The
// request is conditional on the object's uid, like every request of Patch: on an object deleted
// since S0 it fails with NotFound (unless it was gone because its last finalizer went, which
// Patch reports as success), as on another object of the same name; an injected error fails it
// with nothing written. Anything else writes only that value, and F is S1.
func writtenAnyway(mc modelCase, s1 map[string]any) []prediction {
	being := !isAbsent(lookup(metadataOf(mc.S0), "deletionTimestamp"))
	var out []prediction
	switch {
	case mc.S1 == nil && !being:
		out = append(out, prediction{Errs: []string{errNotFound}})
	case mc.S1 != nil && !equal(metadataOf(mc.S1)["uid"], metadataOf(mc.S0)["uid"]):
		out = append(out, prediction{F: s1, Errs: []string{errNotFound}})
	}
	if mc.Fault != faultNone {
		out = append(out, prediction{F: s1, Errs: []string{mc.FaultClass}})
	}
	return out
}

// TestTheModelJudgesAListAsEncoded pins the model's list row on a case drawn from a Gateway: an
// empty object set inside a list element (a listener's `tls: {}`, which the API server then
// defaults) is a change of the list, which the Helper writes whole and tests whole, so another
// writer's change to the same list is a conflict; and a list neither changed as encoded is
// theirs.
func TestTheModelJudgesAListAsEncoded(t *testing.T) {
	listener := func(name string, extra map[string]any) map[string]any {
		l := map[string]any{"name": name, "port": float64(80), "protocol": "HTTP"}
		maps.Copy(l, extra)
		return l
	}
	obj := func(listeners ...any) map[string]any {
		return map[string]any{"metadata": map[string]any{"uid": "u"}, "spec": map[string]any{"listeners": listeners}}
	}
	s0 := obj(listener("http", nil))
	ours := obj(listener("http", map[string]any{"tls": map[string]any{}}))
	theirs := obj(listener("http", nil), listener("x", nil))

	if p := predict(modelCase{S0: s0, A: ours, S1: theirs, StatusSubresource: true}); !slices.Contains(p.Errs, errConflict) ||
		!slices.Contains(p.Conflicts, "spec.listeners") {
		t.Errorf("both changed the list, ours by an empty object: want a conflict at spec.listeners, got %+v", p)
	}
	if p := predict(modelCase{S0: s0, A: ours, S1: s0, StatusSubresource: true}); p.Unchanged || !slices.Equal(p.Errs, []string{errNone}) {
		t.Errorf("only we changed the list, by an empty object: want it written, got %+v", p)
	}
	if p := predict(modelCase{S0: s0, A: s0, S1: theirs, StatusSubresource: true}); !p.Unchanged {
		t.Errorf("only they changed the list: want nothing sent, got %+v", p)
	}
}
