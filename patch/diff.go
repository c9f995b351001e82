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
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

// request is the JSON Patch of one request, before it is sent.
type request struct {
	ops []op
	// lock is set when an operation is safe only if nothing changed since base was read: it
	// replaces a whole list whose elements others may have changed (finalizers when base has
	// none, owner references, conditions when their set of types changes), or creates a map that
	// others may be creating too. The request then carries base's resourceVersion, so the API
	// server rejects it with a 409 Conflict if the object changed.
	lock bool
	// status is set for a request to the status subresource.
	status bool
}

func (r *request) add(o ...op) { r.ops = append(r.ops, o...) }

// empty reports whether the request changes nothing.
func (r *request) empty() bool { return len(r.ops) == 0 }

// finish returns the operations to send for a request computed against base.
func (r *request) finish(base map[string]any) []op {
	if !r.lock {
		return r.ops
	}
	rv, _ := nested(base, "metadata", "resourceVersion")
	return append([]op{{kind: "replace", path: "/metadata/resourceVersion", value: rv}}, r.ops...)
}

// diffOptions configures the operations computed for conditions.
type diffOptions struct {
	// guarded reports whether a change to a condition of this type must be guarded by a test that
	// the condition is still as it was in base: true unless the type is owned.
	guarded func(t string) bool
}

// diffMain returns the request that turns base into result for everything but status, and for
// status too when withStatus is set (an object without a status subresource).
func diffMain(base, result map[string]any, withStatus bool, o diffOptions) request {
	var r request
	bm, rm := nestedMap(base, "metadata"), nestedMap(result, "metadata")
	for _, k := range []string{"labels", "annotations"} {
		b, hasB := bm[k]
		v, hasR := rm[k]
		diffValue(&r, []string{"metadata", k}, b, v, hasB, hasR)
	}
	diffFinalizers(&r, bm, rm)
	if b, v := bm["ownerReferences"], rm["ownerReferences"]; !jsonEqual(list(b), list(v)) {
		r.lock = true
		setOrRemove(&r, []string{"metadata", "ownerReferences"}, v, len(list(v)) > 0)
	}
	for _, k := range sortedKeys(base, result) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		b, hasB := base[k]
		v, hasR := result[k]
		diffValue(&r, []string{k}, b, v, hasB, hasR)
	}
	if withStatus {
		diffStatusInto(&r, base, result, o)
	}
	return r
}

// diffStatus returns the request to the status subresource that turns base's status into result's.
func diffStatus(base, result map[string]any, o diffOptions) request {
	r := request{status: true}
	diffStatusInto(&r, base, result, o)
	return r
}

func diffStatusInto(r *request, base, result map[string]any, o diffOptions) {
	b, hasB := base["status"]
	v, hasR := result["status"]
	bs, bok := b.(map[string]any)
	rs, rok := v.(map[string]any)
	if !bok || !rok || len(bs) == 0 {
		diffValue(r, []string{"status"}, b, v, hasB, hasR)
		return
	}
	for _, k := range sortedKeys(bs, rs) {
		if k == "conditions" {
			continue
		}
		bv, hasBV := bs[k]
		rv, hasRV := rs[k]
		diffValue(r, []string{"status", k}, bv, rv, hasBV, hasRV)
	}
	diffConditions(r, bs, rs, o)
}

// diffValue adds the operations that turn b into v at path (hasB and hasR say whether each is
// present). Objects are changed key by key; anything else is replaced whole.
func diffValue(r *request, path []string, b, v any, hasB, hasR bool) {
	if hasB == hasR && (!hasR || jsonEqual(b, v)) {
		return
	}
	if !hasR {
		r.add(op{kind: "remove", path: pointer(path...)})
		return
	}
	bm, bok := b.(map[string]any)
	vm, vok := v.(map[string]any)
	if vok && bok && len(bm) > 0 {
		for _, k := range sortedKeys(bm, vm) {
			bv, hasBV := bm[k]
			vv, hasVV := vm[k]
			diffValue(r, append(slices.Clip(path), k), bv, vv, hasBV, hasVV)
		}
		return
	}
	if vok {
		// A new object, or one that was empty in base (a typed object cannot tell an empty
		// object from a missing one): written whole, which is safe only if no one else has
		// written into it since.
		r.lock = true
	}
	r.add(op{kind: "add", path: pointer(path...), value: v})
}

// diffFinalizers adds the operations for metadata.finalizers: the whole list is replaced,
// guarded by a test that it is still base's list, or by the lock when base has none.
func diffFinalizers(r *request, bm, rm map[string]any) {
	b, hasB := bm["finalizers"]
	v := rm["finalizers"]
	if slices.Equal(stringList(b), stringList(v)) {
		return
	}
	path := []string{"metadata", "finalizers"}
	if hasB && len(list(b)) > 0 {
		r.add(op{kind: "test", path: pointer(path...), value: b})
	} else {
		r.lock = true
	}
	setOrRemove(r, path, v, len(list(v)) > 0)
}

// diffConditions adds the operations for status.conditions. When the list keeps its types in
// the same order, which is the common case of a reconcile that updates its conditions, each
// changed condition is replaced in place, guarded by a test of its type at that index (and, for
// conditions not owned, of its status, reason and message), so concurrent writes to other
// conditions and to the rest of the object do not conflict. Otherwise the list is replaced whole
// under the lock.
func diffConditions(r *request, bs, rs map[string]any, o diffOptions) {
	bRaw, hasB := bs["conditions"]
	vRaw, hasR := rs["conditions"]
	if hasB == hasR && (!hasR || jsonEqual(bRaw, vRaw)) {
		return
	}
	path := []string{"status", "conditions"}
	bc, okB := parseConditions(bRaw)
	vc, okR := parseConditions(vRaw)
	if !okB || !okR || !hasB || !hasR || !sameTypes(bc, vc) {
		r.lock = true
		emptied := !hasR || (okR && len(vc) == 0)
		switch {
		case !emptied:
			r.add(op{kind: "add", path: pointer(path...), value: vRaw})
		case hasB:
			r.add(op{kind: "remove", path: pointer(path...)})
		}
		return
	}
	bl, vl := list(bRaw), list(vRaw)
	for i := range vc {
		if conditionEqual(&bc[i], &vc[i]) {
			continue
		}
		at := append(slices.Clip(path), strconv.Itoa(i))
		r.add(op{kind: "test", path: pointer(append(at, "type")...), value: vc[i].Type})
		if o.guarded != nil && o.guarded(vc[i].Type) {
			// Only what the typed and the unstructured form of a condition both hold exactly:
			// a message that is empty in a typed object may be missing on the server.
			bm, _ := bl[i].(map[string]any)
			for _, f := range []string{"status", "reason", "message"} {
				if s, ok := bm[f].(string); ok && s != "" {
					r.add(op{kind: "test", path: pointer(append(at, f)...), value: s})
				}
			}
		}
		r.add(op{kind: "replace", path: pointer(at...), value: vl[i]})
	}
}

func sameTypes(a, b []metav1.Condition) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.Condition) bool { return x.Type == y.Type })
}

// conditionEqual reports whether a and b are equal in every field.
func conditionEqual(a, b *metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

func setOrRemove(r *request, path []string, v any, set bool) {
	if set {
		r.add(op{kind: "add", path: pointer(path...), value: v})
		return
	}
	r.add(op{kind: "remove", path: pointer(path...)})
}

// ownedGuard returns the guard for diffOptions: conditions of owned types, or all when force is
// set, are written without checking what another writer did to them.
func ownedGuard(owned []conditions.Type, force bool) func(string) bool {
	return func(t string) bool { return !force && !slices.Contains(owned, conditions.Type(t)) }
}
