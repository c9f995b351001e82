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
	"slices"
	"strconv"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// Request is the JSON Patch of one request, computed against base, before it is sent.
type Request struct {
	// Ops are the operations, in the order they are sent, without Finish's tests.
	Ops []Op
	// Lock is set when only base's resourceVersion can guard the request: it writes a whole
	// object that a typed base shows empty or missing, without managedFields to say which.
	Lock bool
	// Status is set for a request to the status subresource.
	Status bool
}

// Empty reports whether the request changes nothing.
func (r *Request) Empty() bool { return len(r.Ops) == 0 }

// Differ computes the operations that turn base into result, each guarded as the guarantees of
// Helper.Patch need:
//
//   - a scalar, or a key of an object, is added, replaced or removed without a test: the
//     controller owns the fields it changes, and other keys are not touched;
//   - an object that base does not have (or has empty) is added whole, after a test that it is
//     still missing (or empty; a typed object cannot tell the two apart, so it guesses from the
//     managedFields, and a wrong guess fails the test); one that the result no longer has is
//     removed whole, after a test that it is still what base has;
//   - a list (finalizers and owner references included) is replaced whole, after a test that it
//     is still base's list (or still missing);
//   - a condition is replaced in place after a test of its type at its index and, unless its
//     type is owned, of the whole condition (of its status and transition time when it is); when
//     conditions are added or removed, the list is replaced whole, after a test of base's list.
//
// The tests are what turns another writer's change since base into a rejected patch instead of
// lost data.
type Differ struct {
	req Request
	// Exact is set when base holds the object exactly as the server sends it (an unstructured
	// object); a typed object drops empty maps and lists and shows missing structs as empty.
	Exact bool
	// Guarded reports whether a change to a condition of this type must be guarded by a test of
	// the whole condition: true unless the type is owned.
	Guarded func(t string) bool
	// Written reports whether the field at path was ever written, as the snapshot's
	// managedFields record it; nil when the snapshot has none (a cache that strips them, a fake
	// client).
	Written func(path []string) bool
}

func (d *Differ) add(path []string, v any) {
	d.req.Ops = append(d.req.Ops, Op{Kind: "add", Path: jsonvalue.Pointer(path...), Value: v})
}

func (d *Differ) remove(path []string) {
	d.req.Ops = append(d.req.Ops, Op{Kind: "remove", Path: jsonvalue.Pointer(path...)})
}

func (d *Differ) test(path []string, v any) {
	if slices.Contains(path, "") {
		// JSON Patch implementations disagree on a test of a path with an empty key
		// (evanphx/json-patch v5 finds nothing at "/a/"): only the resourceVersion guards it.
		d.req.Lock = true
	}
	d.req.Ops = append(d.req.Ops, Op{Kind: "test", Path: jsonvalue.Pointer(path...), Value: v, Guard: true})
}

// DiffMain returns the request that turns base into result for metadata and everything outside
// status, and for status too when withStatus is set (a kind without a status subresource).
func (d *Differ) DiffMain(base, result map[string]any, withStatus bool) Request {
	d.req = Request{}
	bm, rm := jsonvalue.NestedMap(base, "metadata"), jsonvalue.NestedMap(result, "metadata")
	for _, k := range []string{"annotations", "finalizers", "labels", "ownerReferences"} {
		b, hasB := jsonvalue.Member(bm, k)
		r, hasR := jsonvalue.Member(rm, k)
		d.value([]string{"metadata", k}, b, r, hasB, hasR, true)
	}
	for _, k := range jsonvalue.SortedKeys(base, result) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		b, hasB := jsonvalue.Member(base, k)
		r, hasR := jsonvalue.Member(result, k)
		d.value([]string{k}, b, r, hasB, hasR, d.Exact)
	}
	if withStatus {
		d.status(base, result)
	}
	return d.req
}

// DiffStatus returns the request to the status subresource that turns base's status into result's.
func (d *Differ) DiffStatus(base, result map[string]any) Request {
	d.req = Request{Status: true}
	d.status(base, result)
	return d.req
}

func (d *Differ) status(base, result map[string]any) {
	b, hasB := jsonvalue.Member(base, "status")
	r, hasR := jsonvalue.Member(result, "status")
	bs, bok := b.(map[string]any)
	rs, rok := r.(map[string]any)
	if !bok || !rok || len(bs) == 0 {
		d.value([]string{"status"}, b, r, hasB, hasR, d.Exact)
		return
	}
	for _, k := range jsonvalue.SortedKeys(bs, rs) {
		if k == "conditions" {
			continue
		}
		bv, hasBV := jsonvalue.Member(bs, k)
		rv, hasRV := jsonvalue.Member(rs, k)
		d.value([]string{"status", k}, bv, rv, hasBV, hasRV, d.Exact)
	}
	d.conditions(bs, rs)
}

// value adds the operations that turn b into r at path; hasB and hasR say whether each is
// present. exact says whether base shows at path exactly what the server holds.
func (d *Differ) value(path []string, b, r any, hasB, hasR, exact bool) {
	if hasB == hasR && (!hasR || jsonvalue.Equal(b, r)) {
		return
	}
	bm, bIsMap := b.(map[string]any)
	rm, rIsMap := r.(map[string]any)
	switch {
	case bIsMap && rIsMap && len(bm) > 0:
		d.object(path, bm, rm, exact)
	case rIsMap:
		d.toObject(path, b, rm, hasB, exact)
	default:
		d.replace(path, b, r, hasB, hasR)
	}
}

// toObject adds the operations that turn b into r, an object, at path, when b is not an object
// with keys.
func (d *Differ) toObject(path []string, b any, r map[string]any, hasB, exact bool) {
	_, bIsMap := b.(map[string]any)
	_, bIsList := b.([]any)
	switch {
	case bIsList:
		// An empty list that becomes an object is a list replaced: it is there, and a test that
		// it is missing would fail.
		d.list(path, b, r, true)
	case hasB && !bIsMap:
		d.add(path, r)
	case len(r) > 0 || !hasB:
		// An object base does not have, or has empty: written whole, which is safe only while it
		// is still missing or empty on the server. (An empty one is written too: for a field such
		// as a volume's emptyDir, being there is what counts.)
		d.newObject(path, r, hasB, exact)
	}
}

// replace adds the operations that turn b into r at path, when r is not an object: a list
// replaced whole, an object removed whole, each after a test that it is still b; a scalar set
// or removed.
func (d *Differ) replace(path []string, b, r any, hasB, hasR bool) {
	_, bIsMap := b.(map[string]any)
	_, bIsList := b.([]any)
	_, rIsList := r.([]any)
	switch {
	case bIsMap && !hasR:
		d.test(path, b)
		d.remove(path)
	case bIsList || rIsList:
		d.list(path, b, r, hasR)
	case hasR:
		d.add(path, r)
	default:
		d.remove(path)
	}
}

// object adds the operations that turn b into r, two objects at path, b not empty: key by key,
// or whole when either has an empty key.
func (d *Differ) object(path []string, b, r map[string]any, exact bool) {
	if hasEmptyKey(b) || hasEmptyKey(r) {
		// A JSON Pointer to a member with an empty key ("/a//b") is valid, but JSON Patch
		// implementations disagree on it: the object is written whole, guarded by the
		// resourceVersion.
		if !jsonvalue.Equal(b, r) {
			d.req.Lock = true
			d.add(path, r)
		}
		return
	}
	for _, k := range jsonvalue.SortedKeys(b, r) {
		bv, hasBV := jsonvalue.Member(b, k)
		rv, hasRV := jsonvalue.Member(r, k)
		d.value(append(slices.Clip(path), k), bv, rv, hasBV, hasRV, exact)
	}
}

// newObject adds r, an object base does not have at path, or has empty (hasB), guarded by a
// test that it is still missing or empty on the server.
func (d *Differ) newObject(path []string, r map[string]any, hasB, exact bool) {
	switch {
	case exact && hasB:
		d.test(path, map[string]any{})
	case exact:
		d.test(path, nil)
	case d.Written == nil:
		// A typed object cannot tell an empty object from a missing one, and there are no
		// managedFields to tell: only the resourceVersion can guard the write.
		d.req.Lock = true
	case d.Written(path):
		// The server has it, and a typed object shows it empty: most likely empty. A wrong guess
		// fails the test, and the retry locks instead.
		d.test(path, map[string]any{})
	default:
		d.test(path, nil)
	}
	d.add(path, r)
}

// list replaces the list b at path with r (removes it when r is not there: hasR), guarded by a
// test that it is still b.
func (d *Differ) list(path []string, b, r any, hasR bool) {
	if b != nil {
		d.test(path, b) // also an empty list, which counts as missing but is there
	} else {
		d.test(path, nil)
	}
	if hasR {
		d.add(path, r)
	} else {
		d.remove(path)
	}
}

// conditions adds the operations for status.conditions. When the list keeps its types in the same
// order, the common case of a reconcile that updates its conditions, each changed condition is
// replaced in place, so that concurrent writes to other conditions and to the rest of the object
// do not conflict with it. When it only loses types (a reconcile that drops Reconciling), the
// others keep their order: those changed are replaced in place and the others removed, each
// guarded alone, and the type of each one kept unchanged is tested too. Otherwise the list is replaced whole: an added condition is guarded by a test of
// the whole list, since no test of an element can tell that another writer added one of that
// type meanwhile.
func (d *Differ) conditions(bs, rs map[string]any) {
	bRaw, hasB := jsonvalue.Member(bs, "conditions")
	rRaw, hasR := jsonvalue.Member(rs, "conditions")
	if hasB == hasR && (!hasR || jsonvalue.Equal(bRaw, rRaw)) {
		return
	}
	path := []string{"status", "conditions"}
	bl, okB := jsonvalue.Conditions(bRaw)
	rl, okR := jsonvalue.Conditions(rRaw)
	kept, removing := keptIndexes(bl, rl)
	if !okB || !okR || !hasB || !hasR || kept == nil || len(rl) == 0 {
		d.value(path, bRaw, rRaw, hasB, hasR, true)
		return
	}
	// Replacements first, at the indexes base has, then removals from the last one down, so that
	// every operation's index is the one base has.
	for j, i := range kept {
		at := append(slices.Clip(path), strconv.Itoa(i))
		if jsonvalue.Equal(bl[i], rl[j]) {
			if len(removing) > 0 {
				// The conditions kept are still there, by type: so the removals cannot leave
				// an empty list where another writer removed them meanwhile (a list emptied is
				// removed whole, so that a schema default for it applies again).
				d.test(append(at, "type"), jsonvalue.ConditionType(bl[i]))
			}
			continue
		}
		d.guardCondition(at, bl[i], true)
		d.req.Ops = append(d.req.Ops, Op{Kind: "replace", Path: jsonvalue.Pointer(at...), Value: rl[j]})
	}
	for _, i := range slices.Backward(removing) {
		at := append(slices.Clip(path), strconv.Itoa(i))
		d.guardCondition(at, bl[i], false)
		d.remove(at)
	}
}

// guardCondition tests the condition at path before it is replaced or removed: the whole of it
// when another writer owns its type (so that a change of theirs is never overwritten), its type
// alone when it is owned, and, for a replacement, also its status and transition time.
func (d *Differ) guardCondition(at []string, b any, replace bool) {
	bm := jsonvalue.Map(b)
	switch {
	case d.Guarded != nil && d.Guarded(jsonvalue.ConditionType(bm)):
		d.test(at, b)
	case replace:
		// Owned: ours wins whatever else another writer changed, but the transition time is the
		// latest object's while the status stays, which only a retry on the latest object can
		// know when another writer changed either.
		d.test(append(at, "type"), jsonvalue.ConditionType(bm))
		d.test(append(at, "status"), bm["status"])
		d.test(append(at, "lastTransitionTime"), bm["lastTransitionTime"])
	default:
		d.test(append(at, "type"), jsonvalue.ConditionType(bm))
	}
}

// keptIndexes returns, when the types of after are those of before in the same order with
// some left out, the index in before of each condition of after, and the indexes of those
// left out; nil otherwise.
func keptIndexes(before, after []any) (kept, removed []int) {
	kept = make([]int, 0, len(after))
	j := 0
	for i := range before {
		if j < len(after) && jsonvalue.ConditionType(before[i]) == jsonvalue.ConditionType(after[j]) {
			kept = append(kept, i)
			j++
			continue
		}
		removed = append(removed, i)
	}
	if j < len(after) {
		return nil, nil
	}
	return kept, removed
}

// Finish returns the operations to send for a request computed against base: first a test that
// the object is still the one base is (its uid), so that a write never lands on another object
// created under the same name; then, when the request needs the lock (or lock is forced), base's
// resourceVersion as a precondition instead of the value tests, which it implies.
func (r *Request) Finish(base map[string]any, lock bool) []Op {
	out := make([]Op, 0, len(r.Ops)+2)
	if uid, _ := jsonvalue.Nested(base, "metadata", "uid"); uid != nil && uid != "" {
		out = append(out, Op{Kind: "test", Path: "/metadata/uid", Value: uid})
	}
	if !lock && !r.Lock {
		return append(out, r.Ops...)
	}
	// Setting the resourceVersion in a patch makes it a precondition: the server answers 409
	// Conflict when the object's is another.
	rv, _ := jsonvalue.Nested(base, "metadata", "resourceVersion")
	out = append(out, Op{Kind: "replace", Path: "/metadata/resourceVersion", Value: rv})
	for _, o := range r.Ops {
		if !o.Guard {
			out = append(out, o)
		}
	}
	return out
}

// OwnedGuard returns the guard for differ.guarded: conditions of owned types are written without
// a test of what another writer did to them.
func OwnedGuard(owned []conditions.Type) func(string) bool {
	return func(t string) bool { return !slices.Contains(owned, conditions.Type(t)) }
}

// hasEmptyKey reports whether m has a member whose key is the empty string.
func hasEmptyKey(m map[string]any) bool {
	_, ok := m[""]
	return ok
}
