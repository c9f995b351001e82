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

package threeway

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/conditionrules"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// Merger carries the changes a reconcile made, from before to after, over to the latest object:
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
type Merger struct {
	// Owned are the condition types this controller owns: a change of theirs wins over another
	// writer's change to the same condition.
	Owned []conditions.Type
	// Order is the condition order of the object's type, nil for the default.
	Order []conditions.Type
	// Conflicts are the fields another writer changed too, as JSON pointers; a condition is
	// named by its type, as in /status/conditions[Ready].
	Conflicts []string
}

// MergeMain returns latest with this reconcile's changes to metadata and everything outside
// status carried over, and status too when withStatus is set; latest is not modified, and the
// result, which may share parts of it, is to be read only.
func (m *Merger) MergeMain(before, after, latest map[string]any, withStatus bool) map[string]any {
	result := copyForMain(latest)
	if result == nil {
		result = map[string]any{}
	}
	for _, k := range jsonvalue.SortedKeys(before, after) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		m.key(nil, result, k, before, after)
	}
	bm, am := jsonvalue.NestedMap(before, "metadata"), jsonvalue.NestedMap(after, "metadata")
	rm, created := childMap(result, "metadata")
	for _, k := range []string{"annotations", "labels"} {
		m.key([]string{"metadata"}, rm, k, bm, am)
	}
	mergeFinalizers(rm, bm["finalizers"], am["finalizers"])
	if mergeOwnerReferences(rm, bm["ownerReferences"], am["ownerReferences"]) {
		// This reconcile set a controller reference while another writer set a different one:
		// the object can have one controller only, and the other was there first.
		m.Conflicts = append(m.Conflicts, "/metadata/ownerReferences")
	}
	dropIfEmpty(result, "metadata", created)
	if withStatus {
		m.status(result, before, after)
	}
	return result
}

// MergeStatus returns latest with this reconcile's changes to status carried over; latest is not
// modified, and the result, which shares all but its status with it, is to be read only.
func (m *Merger) MergeStatus(before, after, latest map[string]any) map[string]any {
	result := map[string]any{}
	if latest != nil {
		// The merge changes the status only: the rest is latest's, shared.
		result = maps.Clone(latest)
		if s, ok := latest["status"]; ok {
			result["status"] = jsonvalue.DeepCopy(s)
		}
	}
	m.status(result, before, after)
	return result
}

// copyForMain returns a copy of latest for MergeMain to change, which shares with latest only
// metadata.managedFields: the merge never changes them, and they are most of the metadata.
func copyForMain(latest map[string]any) map[string]any {
	meta, ok := latest["metadata"].(map[string]any)
	managed, hasManaged := meta["managedFields"]
	if !ok || !hasManaged {
		return jsonvalue.DeepCopyMap(latest)
	}
	out := make(map[string]any, len(latest))
	for k, v := range latest {
		if k != "metadata" {
			out[k] = jsonvalue.DeepCopy(v)
		}
	}
	m := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			m[k] = jsonvalue.DeepCopy(v)
		}
	}
	m["managedFields"] = managed
	out["metadata"] = m
	return out
}

func (m *Merger) status(result, before, after map[string]any) {
	bs, hasBS := jsonvalue.Member(before, "status")
	as, hasAS := jsonvalue.Member(after, "status")
	bsm, bok := bs.(map[string]any)
	asm, aok := as.(map[string]any)
	if (hasBS && !bok) || (hasAS && !aok) {
		m.key(nil, result, "status", before, after) // not an object: nothing to merge by key
		return
	}
	if hasBS == hasAS && (!hasAS || jsonvalue.Equal(bs, as)) {
		return // not changed by this reconcile
	}
	rs, hasRS := jsonvalue.Member(result, "status")
	rsm, _ := rs.(map[string]any)
	if rsm == nil {
		rsm = map[string]any{}
	}
	for _, k := range jsonvalue.SortedKeys(bsm, asm) {
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
func (m *Merger) key(path []string, l map[string]any, k string, b, a map[string]any) {
	bv, hasB := jsonvalue.Member(b, k)
	av, hasA := jsonvalue.Member(a, k)
	if hasB == hasA && (!hasA || jsonvalue.Equal(bv, av)) {
		return // not changed by this reconcile: latest's value stays
	}
	at := append(slices.Clip(path), k)
	lv, hasL := jsonvalue.Member(l, k)
	bm, bIsMap := bv.(map[string]any)
	am, aIsMap := av.(map[string]any)
	_, bIsList := bv.([]any)
	_, aIsList := av.([]any)
	switch {
	case (bIsMap || !hasB) && (aIsMap || !hasA):
		m.object(at, l, k, bm, am, member{lv, hasL}, hasB, hasA)
	case bIsList || aIsList:
		m.list(at, l, k, member{bv, hasB}, member{av, hasA}, member{lv, hasL})
	default:
		set(l, k, av, hasA)
	}
}

// object carries the change of the object at key k (at path at) from b to a (either may be
// missing: hasB, hasA) over to l, which holds latest's value: key by key.
func (m *Merger) object(at []string, l map[string]any, k string, b, a map[string]any, latest member, hasB, hasA bool) {
	lm, _ := latest.v.(map[string]any)
	if lm == nil {
		lm = map[string]any{}
	}
	for _, kk := range jsonvalue.SortedKeys(b, a) {
		m.key(at, lm, kk, b, a)
	}
	if len(lm) > 0 || (hasA && (latest.has || !hasB)) {
		l[k] = lm // kept, even empty, while this reconcile has it and created it or latest has it
	} else {
		delete(l, k)
	}
}

// member is the value of an object's key, and whether the key is there.
type member struct {
	v   any
	has bool
}

// same reports whether x and y are the same value, or both missing.
func (x member) same(y member) bool {
	return x.has == y.has && (!x.has || jsonvalue.Equal(x.v, y.v))
}

// list carries the change of the list at key k (at path at) from b to a over to l, which holds
// latest's value: a list is written whole, so it is a conflict when latest changed it too.
func (m *Merger) list(at []string, l map[string]any, k string, b, a, latest member) {
	switch {
	case latest.same(a):
		// Already this reconcile's list.
	case latest.same(b):
		set(l, k, a.v, a.has)
	default:
		m.Conflicts = append(m.Conflicts, jsonvalue.Pointer(at...))
	}
}

func set(l map[string]any, k string, v any, has bool) {
	if has {
		l[k] = jsonvalue.DeepCopy(v)
	} else {
		delete(l, k)
	}
}

// conditions merges status.conditions by type into rs, latest's status. Conditions are merged
// whole, as the objects hold them, whatever fields they carry besides metav1.Condition's (a
// Node's lastHeartbeatTime, a Pod's lastProbeTime, Cluster API's severity): a condition this
// reconcile did not change keeps latest's value exactly.
func (m *Merger) conditions(rs, bs, as map[string]any) {
	bRaw, hasB := jsonvalue.Member(bs, "conditions")
	aRaw, hasA := jsonvalue.Member(as, "conditions")
	if hasB == hasA && (!hasA || jsonvalue.Equal(bRaw, aRaw)) {
		return
	}
	bc, okB := jsonvalue.Conditions(bRaw)
	ac, okA := jsonvalue.Conditions(aRaw)
	lRaw, _ := jsonvalue.Member(rs, "conditions")
	lc, okL := jsonvalue.Conditions(lRaw)
	if !okB || !okA || !okL {
		// Not a list of conditions after all: a list like any other.
		m.key([]string{"status"}, rs, "conditions", bs, as)
		return
	}
	for _, t := range changedTypes(bc, ac) {
		lc = m.condition(lc, t, jsonvalue.FindCondition(bc, t), jsonvalue.FindCondition(ac, t))
	}
	if len(m.Conflicts) > 0 {
		return
	}
	if len(lc) == 0 {
		delete(rs, "conditions")
		return
	}
	rs["conditions"] = lc
}

// changedTypes returns the types of the conditions this reconcile changed from bc to ac: those
// it removed first, then those it changed or added, so that a condition added goes before the
// first of latest's that sorts after it once the removed are gone.
func changedTypes(bc, ac []any) []string {
	var types []string
	for _, c := range bc {
		if t := jsonvalue.ConditionType(c); jsonvalue.FindCondition(ac, t) == nil {
			types = append(types, t)
		}
	}
	for _, c := range ac {
		if t := jsonvalue.ConditionType(c); !sameCondition(jsonvalue.FindCondition(bc, t), jsonvalue.Map(c)) {
			types = append(types, t)
		}
	}
	return types
}

// condition merges the change of the condition of type t from b to a (nil for none) into lc,
// latest's conditions, and returns them; a change latest made too is a conflict, unless t is
// owned.
func (m *Merger) condition(lc []any, t string, b, a map[string]any) []any {
	l := jsonvalue.FindCondition(lc, t)
	switch {
	case sameCondition(l, a):
		// Already as this reconcile wants it.
	case !sameCondition(l, b) && !slices.Contains(m.Owned, conditions.Type(t)):
		m.Conflicts = append(m.Conflicts, fmt.Sprintf("/status/conditions[%s]", t))
	case a == nil:
		lc = slices.DeleteFunc(lc, func(c any) bool { return jsonvalue.ConditionType(c) == t })
	case l != nil:
		c := jsonvalue.DeepCopyMap(a)
		if jsonvalue.SameStatus(l, c) {
			// The status did not change: the transition time is latest's.
			if ltt, ok := l["lastTransitionTime"]; ok {
				c["lastTransitionTime"] = jsonvalue.DeepCopy(ltt)
			} else {
				delete(c, "lastTransitionTime")
			}
		}
		lc[slices.IndexFunc(lc, func(e any) bool { return jsonvalue.ConditionType(e) == t })] = c
	default:
		at := len(lc)
		for j := range lc {
			if conditionrules.Compare(m.Order, conditions.Type(t), conditions.Type(jsonvalue.ConditionType(lc[j]))) < 0 {
				at = j
				break
			}
		}
		lc = slices.Insert(lc, at, any(jsonvalue.DeepCopyMap(a)))
	}
	return lc
}

// sameCondition reports whether a and b (either may be nil, for a missing condition) agree on
// every field but lastTransitionTime, which moves with the status alone: the merge keeps the
// latest object's while the status stays.
func sameCondition(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	for k, v := range a {
		if k == "lastTransitionTime" {
			continue
		}
		w, ok := b[k]
		if !ok || !jsonvalue.Equal(v, w) {
			return false
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && k != "lastTransitionTime" {
			return false
		}
	}
	return true
}

// mergeFinalizers applies the finalizers added and removed from b to a to the metadata map m.
func mergeFinalizers(m map[string]any, b, a any) {
	bf, af := jsonvalue.StringList(b), jsonvalue.StringList(a)
	if slices.Equal(bf, af) {
		return
	}
	lf := jsonvalue.StringList(m["finalizers"])
	if slices.Equal(lf, bf) {
		// No one else changed the list: it is after's, in after's order.
		setList(m, "finalizers", jsonvalue.List(jsonvalue.DeepCopy(a)))
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
func mergeOwnerReferences(m map[string]any, b, a any) (twoControllers bool) {
	bl, al := jsonvalue.List(b), jsonvalue.List(a)
	if jsonvalue.Equal(bl, al) {
		return false
	}
	if jsonvalue.Equal(jsonvalue.List(m["ownerReferences"]), bl) {
		setList(m, "ownerReferences", jsonvalue.List(jsonvalue.DeepCopy(a)))
		return false
	}
	out, _ := jsonvalue.DeepCopy(jsonvalue.List(m["ownerReferences"])).([]any)
	for _, ref := range bl {
		if indexByUID(al, uidOf(ref)) < 0 {
			if i := indexByUID(out, uidOf(ref)); i >= 0 {
				out = slices.Delete(out, i, i+1)
			}
		}
	}
	for _, ref := range al {
		if i := indexByUID(bl, uidOf(ref)); i >= 0 && jsonvalue.Equal(bl[i], ref) {
			continue // not changed by this reconcile
		}
		if i := indexByUID(out, uidOf(ref)); i >= 0 {
			out[i] = jsonvalue.DeepCopy(ref)
		} else {
			out = append(out, jsonvalue.DeepCopy(ref))
		}
	}
	setList(m, "ownerReferences", out)
	return len(slices.DeleteFunc(slices.Clone(out), func(r any) bool { return !isController(r) })) > 1
}

// isController reports whether an owner reference has controller: true.
func isController(ref any) bool {
	m, _ := ref.(map[string]any)
	c, _ := m["controller"].(bool)
	return c
}

func uidOf(ref any) string {
	m, _ := ref.(map[string]any)
	uid, _ := m["uid"].(string)
	return uid
}

func indexByUID(refs []any, uid string) int {
	return slices.IndexFunc(refs, func(r any) bool { return uidOf(r) == uid })
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
