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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/conditions"
)

// mergeOptions configures merge.
type mergeOptions struct {
	owned []conditions.Type
	force bool
	// order is the condition order of the object's type, nil for the default.
	order []conditions.Type
}

// merge carries the changes a reconcile made, from before to after, over to latest, and returns
// the result; latest is not modified. It is a three-way merge with these rules:
//
//   - metadata.labels and metadata.annotations, and every other map outside metadata, merge key
//     by key: keys this reconcile did not touch keep latest's value;
//   - metadata.finalizers is a set: this reconcile's additions and removals are applied to
//     latest's list, so a finalizer another writer added or removed meanwhile stays added or
//     removed, and none appears twice;
//   - metadata.ownerReferences is a set keyed by uid, merged the same way;
//   - status.conditions merge by type with conditions.Patch.Apply: owned (or forced) conditions
//     win, a condition another writer changed since before is a *conditions.ConflictError;
//   - any other value this reconcile changed, lists included, is set to after's value: the
//     controller owns the fields it changes;
//   - other metadata (name, resourceVersion, generation, ...) belongs to the API server and is
//     latest's.
func merge(before, after, latest map[string]any, o mergeOptions) (map[string]any, error) {
	result := deepCopyMap(latest)
	if result == nil {
		result = map[string]any{}
	}
	for _, k := range sortedKeys(before, after) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		b, hasB := before[k]
		a, hasA := after[k]
		mergeKey(result, k, b, a, hasB, hasA)
	}

	bm, am := nestedMap(before, "metadata"), nestedMap(after, "metadata")
	rm, created := childMap(result, "metadata")
	for _, k := range []string{"labels", "annotations"} {
		b, hasB := bm[k]
		a, hasA := am[k]
		mergeKey(rm, k, b, a, hasB, hasA)
	}
	mergeFinalizers(rm, bm["finalizers"], am["finalizers"])
	mergeOwnerReferences(rm, bm["ownerReferences"], am["ownerReferences"])
	dropIfEmpty(result, "metadata", created)

	return result, mergeStatus(result, before, after, o)
}

// mergeStatus merges status like the rest, but status.conditions by condition type.
func mergeStatus(result, before, after map[string]any, o mergeOptions) error {
	bs, hasBS := before["status"]
	as, hasAS := after["status"]
	bsm, bok := bs.(map[string]any)
	asm, aok := as.(map[string]any)
	if (hasBS && !bok) || (hasAS && !aok) {
		// Not an object: nothing to merge key by key.
		mergeKey(result, "status", bs, as, hasBS, hasAS)
		return nil
	}
	rs, created := childMap(result, "status")
	for _, k := range sortedKeys(bsm, asm) {
		if k == "conditions" {
			continue
		}
		b, hasB := bsm[k]
		a, hasA := asm[k]
		mergeKey(rs, k, b, a, hasB, hasA)
	}
	err := mergeConditions(result, bsm, asm, o)
	// An empty status goes when merge created it, or when this reconcile removed the status.
	dropIfEmpty(result, "status", created || (hasBS && !hasAS))
	return err
}

func mergeConditions(result, bs, as map[string]any, o mergeOptions) error {
	bRaw, hasB := bs["conditions"]
	aRaw, hasA := as["conditions"]
	if hasB == hasA && (!hasA || jsonEqual(bRaw, aRaw)) {
		return nil
	}
	rs, _ := childMap(result, "status")
	bc, okB := parseConditions(bRaw)
	ac, okA := parseConditions(aRaw)
	lc, okL := parseConditions(rs["conditions"])
	if !okB || !okA || !okL {
		// Not a list of conditions after all: the controller owns what it wrote.
		mergeKey(rs, "conditions", bRaw, aRaw, hasB, hasA)
		return nil
	}
	p := conditions.NewPatch(bc, ac)
	if p.IsEmpty() {
		return nil
	}
	setter := conditions.ForSlice(&lc, 0)
	if o.order != nil {
		setter = orderedSetter{Setter: setter, order: o.order}
	}
	if err := p.Apply(setter, conditions.OwnedConditions(o.owned), conditions.ForceOverwrite(o.force)); err != nil {
		return err
	}
	if len(lc) == 0 {
		delete(rs, "conditions")
		return nil
	}
	raw := make([]any, len(lc))
	for i := range lc {
		raw[i] = conditionToMap(&lc[i])
	}
	rs["conditions"] = raw
	return nil
}

// orderedSetter gives a setter the condition order of the object it stands for.
type orderedSetter struct {
	conditions.Setter
	order []conditions.Type
}

var _ conditions.Orderer = orderedSetter{}

// ConditionOrder returns the object's order.
func (s orderedSetter) ConditionOrder() []conditions.Type { return s.order }

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

// mergeKey carries the change of parent[key] from b to a (hasB and hasA say whether each is
// present) over to parent, which holds latest's value.
func mergeKey(parent map[string]any, key string, b, a any, hasB, hasA bool) {
	if hasB == hasA && (!hasA || jsonEqual(b, a)) {
		return
	}
	bm, bok := b.(map[string]any)
	am, aok := a.(map[string]any)
	l, hasL := parent[key]
	lm, lok := l.(map[string]any)
	switch {
	case !hasA && bok && lok:
		// This reconcile removed an object, as a typed object does when its last label goes:
		// remove the keys it had, so that keys someone else added meanwhile survive.
		for _, k := range sortedKeys(bm) {
			delete(lm, k)
		}
		if len(lm) == 0 {
			delete(parent, key)
		}
	case !hasA:
		delete(parent, key)
	case aok && (bok || !hasB || b == nil) && (lok || !hasL):
		// Objects: merge key by key, so that keys someone else set or removed stay so. A map
		// this reconcile created while someone else created it too, or changed while someone
		// else removed it, is merged the same way.
		created := !hasL
		if created {
			lm = map[string]any{}
			parent[key] = lm
		}
		for _, k := range sortedKeys(bm, am) {
			bv, hasBV := bm[k]
			av, hasAV := am[k]
			mergeKey(lm, k, bv, av, hasBV, hasAV)
		}
		if created && len(lm) == 0 && len(am) > 0 {
			delete(parent, key)
		}
	default:
		parent[key] = deepCopy(a)
	}
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
		out = append(out, f)
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
