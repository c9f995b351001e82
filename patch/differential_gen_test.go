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

// This file generates the cases of the differential test: random objects, another writer's
// change and our own, drawn from one seed. Every draw is made in a fixed order from the case's
// seed, before the case talks to the API server, so a seed always replays the same case.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
)

// Value pools. Strings include the empty string, unicode and HTML-special characters.
var (
	poolTexts       = []any{"", "a", "b", "ü", "日本語", "<b>&amp;</b>", "x & y > z", "é<>"}
	poolNumbers     = []any{0.0, 1.0, 2.0, 3.0}
	poolBools       = []any{true, false}
	poolLabelValues = []any{"", "a", "b", "v1", "x.y-z"}
	poolLabelKeys   = []string{"app", "tier", "a.example.com/x", "b.example.com/y"}
	poolAnnoKeys    = []string{"note", "a.example.com/x", "b.example.com/y", "c.example.com/z"}
	poolDataKeys    = []string{"a", "b.txt", "c-d", "e_f"}
	poolSpecKeys    = []string{"k", "l", "ü", "a/b", "t~1", "<p>"}
	poolSetItems    = []any{"", "a", "b", "ü", "<x>", "&"}
	poolPortNames   = []any{"http", "grpc", "ü-x", "<p>", "a&b"}
	poolFinalizers  = []any{"a.example.com/x", "b.example.com/y", "c.example.com/z", "d.example.com/w"}
	poolCondTypes   = []string{"Ready", "Available", "Degraded", "Progressing", "Synced"}
	poolCondStatus  = []any{"True", "False", "Unknown"}
	poolCondReasons = []any{"Succeeded", "Failed", "InProgress", "A_b:c"}
	poolCondGens    = []any{absent, 1.0, 2.0, 3.0}
	poolCondTimes   = []any{"2024-01-01T00:00:00Z", "2025-06-01T12:30:00Z", "2026-02-03T04:05:06Z"}
)

func pick(r *rand.Rand, xs []any) any { return xs[r.IntN(len(xs))] }

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// pickOther returns a value of xs other than cur, when there is one.
func pickOther(r *rand.Rand, xs []any, cur any) any {
	for range 8 {
		if v := pick(r, xs); !equal(v, cur) {
			return v
		}
	}
	return pick(r, xs)
}

// clone deep-copies a JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// A shape generates and changes the values of one field shape.
type shape interface {
	// random returns a new value.
	random(r *rand.Rand) any
	// edit returns a changed copy of cur, which may be absent; or absent.
	edit(r *rand.Rand, cur any) any
}

// scalarShape draws from a pool.
type scalarShape struct{ values []any }

func (s scalarShape) random(r *rand.Rand) any { return pick(r, s.values) }

func (s scalarShape) edit(r *rand.Rand, cur any) any {
	if !isAbsent(cur) && chance(r, 0.15) {
		return absent
	}
	return pickOther(r, s.values, cur)
}

// mapShape is a map of keys from a pool to values of one shape.
type mapShape struct {
	keys  []string
	value shape
}

func (s mapShape) random(r *rand.Rand) any {
	out := map[string]any{}
	for range 1 + r.IntN(2) {
		out[s.keys[r.IntN(len(s.keys))]] = s.value.random(r)
	}
	return out
}

func (s mapShape) edit(r *rand.Rand, cur any) any {
	m := clone(asObject(cur)).(map[string]any)
	keys := sortedKeys(m)
	switch op := r.IntN(10); {
	case op < 3 || len(keys) == 0:
		return s.addKey(r, m)
	case op < 5: // change a value, or remove the key when the value shape says so
		k := keys[r.IntN(len(keys))]
		put(m, k, s.value.edit(r, m[k]))
	case op < 7:
		delete(m, keys[r.IntN(len(keys))])
	case op < 9:
		return s.clear(r)
	default:
		delete(m, keys[r.IntN(len(keys))])
		return s.addKey(r, m)
	}
	return m
}

// addKey returns a copy of cur with a key that cur does not have (or, when every key of the
// pool is there, a changed value).
func (s mapShape) addKey(r *rand.Rand, cur any) any {
	m := clone(asObject(cur)).(map[string]any)
	var free []string
	for _, k := range s.keys {
		if _, ok := m[k]; !ok {
			free = append(free, k)
		}
	}
	if len(free) == 0 {
		k := sortedKeys(m)[r.IntN(len(m))]
		m[k] = pickOther(r, []any{s.value.random(r), s.value.random(r)}, m[k])
		return m
	}
	m[free[r.IntN(len(free))]] = s.value.random(r)
	return m
}

// clear removes every key: an empty map, or no map.
func (s mapShape) clear(r *rand.Rand) any {
	if chance(r, 0.5) {
		return map[string]any{}
	}
	return absent
}

// structShape is an object with a fixed set of fields.
type structShape struct {
	names  []string
	fields []shape
}

func (s structShape) random(r *rand.Rand) any {
	out := map[string]any{}
	for i, n := range s.names {
		if chance(r, 0.6) {
			out[n] = s.fields[i].random(r)
		}
	}
	return out
}

func (s structShape) edit(r *rand.Rand, cur any) any {
	if !isAbsent(cur) && chance(r, 0.1) {
		return absent
	}
	m := clone(asObject(cur)).(map[string]any)
	for range 1 + r.IntN(2) {
		i := r.IntN(len(s.names))
		put(m, s.names[i], s.fields[i].edit(r, lookup(m, s.names[i])))
	}
	return m
}

// listShape is a list of elements of one shape, unique by key when key is set.
type listShape struct {
	elem shape
	// key returns an element's key, for lists of type map or set; nil allows duplicates.
	key func(any) any
	// editElem changes an element, keeping its key; nil draws a new element.
	editElem func(r *rand.Rand, e any) any
}

func (s listShape) random(r *rand.Rand) any {
	var out []any
	for range 1 + r.IntN(3) {
		out = s.addElem(r, out).([]any)
	}
	return out
}

// fresh returns a new element whose key l does not have yet, or false.
func (s listShape) fresh(r *rand.Rand, l []any) (any, bool) {
	for range 16 {
		e := s.elem.random(r)
		if s.key == nil || !slices.ContainsFunc(l, func(o any) bool { return equal(s.key(o), s.key(e)) }) {
			return e, true
		}
	}
	return nil, false
}

// addElem returns a copy of cur with one more element, appended or inserted.
func (s listShape) addElem(r *rand.Rand, cur any) any {
	l := clone(asList(cur)).([]any)
	e, ok := s.fresh(r, l)
	if !ok {
		return l
	}
	i := len(l)
	if chance(r, 0.4) {
		i = r.IntN(len(l) + 1)
	}
	return slices.Insert(l, i, e)
}

func (s listShape) edit(r *rand.Rand, cur any) any {
	l := clone(asList(cur)).([]any)
	switch op := r.IntN(10); {
	case op < 3 || len(l) == 0:
		return s.addElem(r, l)
	case op < 5:
		i := r.IntN(len(l))
		return slices.Delete(l, i, i+1)
	case op < 7:
		i := r.IntN(len(l))
		if s.editElem != nil {
			l[i] = s.editElem(r, l[i])
		} else if e, ok := s.fresh(r, l); ok {
			l[i] = e
		}
		return l
	case op < 8 && len(l) > 1:
		i, j := r.IntN(len(l)), r.IntN(len(l))
		l[i], l[j] = l[j], l[i]
		return l
	case chance(r, 0.5):
		return []any{}
	default:
		return absent
	}
}

// portShape is the element of a list of type map keyed by name (ShapePort).
var portShape = structShape{
	names:  []string{"port", "protocol"},
	fields: []shape{scalarShape{poolNumbers}, scalarShape{poolTexts}},
}

func randomPort(r *rand.Rand) any {
	p := portShape.random(r).(map[string]any)
	p["name"] = pick(r, poolPortNames)
	return p
}

func editPort(r *rand.Rand, e any) any {
	p := asObject(portShape.edit(r, e))
	p["name"] = asObject(e)["name"]
	return p
}

type funcShape func(r *rand.Rand) any

func (f funcShape) random(r *rand.Rand) any { return f(r) }

func (f funcShape) edit(r *rand.Rand, _ any) any { return f(r) }

func byName(e any) any { return asObject(e)["name"] }

func identity(e any) any { return e }

var (
	portsShape = listShape{elem: funcShape(randomPort), key: byName, editElem: editPort}
	setShape   = listShape{elem: scalarShape{poolSetItems}, key: identity}
	textsShape = listShape{elem: scalarShape{poolTexts}}
	stepsShape = listShape{elem: structShape{
		names:  []string{"name", "value", "timeoutSeconds"},
		fields: []shape{scalarShape{poolTexts}, scalarShape{poolTexts}, scalarShape{poolNumbers}},
	}}
	nestedShape = structShape{
		names:  []string{"a", "b", "extra"},
		fields: []shape{scalarShape{poolTexts}, scalarShape{poolTexts}, mapShape{poolSpecKeys, scalarShape{poolTexts}}},
	}
)

// finalizersShape is metadata.finalizers. noAdd forbids additions, which the API server rejects
// on an object being deleted.
type finalizersShape struct{ noAdd bool }

func (s finalizersShape) random(r *rand.Rand) any {
	l := slices.Clone(poolFinalizers)
	r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	return l[:1+r.IntN(2)]
}

func (s finalizersShape) edit(r *rand.Rand, cur any) any {
	l := slices.Clone(asList(cur))
	var free []any
	for _, f := range poolFinalizers {
		if !slices.Contains(l, f) {
			free = append(free, f)
		}
	}
	switch op := r.IntN(10); {
	case (op < 5 || len(l) == 0) && !s.noAdd && len(free) > 0:
		return slices.Insert(l, r.IntN(len(l)+1), pick(r, free))
	case op < 8 && len(l) > 1:
		i := r.IntN(len(l))
		return slices.Delete(l, i, i+1)
	default:
		return absent
	}
}

// ownerRefsShape is metadata.ownerReferences: references with made-up uids.
type ownerRefsShape struct{}

func ownerRef(i int, renamed bool) any {
	name := fmt.Sprintf("owner-%d", i)
	if renamed {
		name += "-renamed"
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "name": name,
		"uid": fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i),
	}
}

func (ownerRefsShape) random(r *rand.Rand) any {
	return []any{ownerRef(1+r.IntN(2), false), ownerRef(3+r.IntN(2), chance(r, 0.3))}[:1+r.IntN(2)]
}

func (ownerRefsShape) edit(r *rand.Rand, cur any) any {
	l := slices.Clone(asList(cur))
	has := func(i int) int {
		return slices.IndexFunc(l, func(o any) bool { return asObject(o)["uid"] == asObject(ownerRef(i, false))["uid"] })
	}
	i := 1 + r.IntN(4)
	switch j := has(i); {
	case j < 0:
		return append(l, ownerRef(i, chance(r, 0.3)))
	case chance(r, 0.5):
		l[j] = ownerRef(i, asObject(l[j])["name"] == asObject(ownerRef(i, false))["name"])
		return l
	default:
		return orAbsent(slices.Delete(l, j, j+1))
	}
}

// conditionsShape is status.conditions. times allows changes of lastTransitionTime alone.
type conditionsShape struct{ times bool }

func newCondition(r *rand.Rand, t string) map[string]any {
	c := map[string]any{
		"type": t, "status": pick(r, poolCondStatus), "reason": pick(r, poolCondReasons),
		"message": pick(r, poolTexts), "lastTransitionTime": pick(r, poolCondTimes),
	}
	put(c, "observedGeneration", pick(r, poolCondGens))
	return c
}

// insertCondition adds c to l before the first condition that sorts after it, as conditions.Set
// does, or now and then at the end.
func insertCondition(r *rand.Rand, l []any, c any) []any {
	i := len(l)
	if !chance(r, 0.15) {
		t := asObject(c)["type"].(string)
		if j := slices.IndexFunc(l, func(o any) bool { return conditionLess(t, asObject(o)["type"].(string)) }); j >= 0 {
			i = j
		}
	}
	return slices.Insert(l, i, c)
}

func (s conditionsShape) random(r *rand.Rand) any {
	types := slices.Clone(poolCondTypes)
	r.Shuffle(len(types), func(i, j int) { types[i], types[j] = types[j], types[i] })
	types = types[:1+r.IntN(3)]
	sort.Slice(types, func(i, j int) bool { return conditionLess(types[i], types[j]) })
	var out []any
	for _, t := range types {
		out = append(out, newCondition(r, t))
	}
	return out
}

func (s conditionsShape) edit(r *rand.Rand, cur any) any {
	l := clone(asList(cur)).([]any)
	var free []string
	for _, t := range poolCondTypes {
		if c, _ := findCondition(l, t); isAbsent(c) {
			free = append(free, t)
		}
	}
	switch op := r.IntN(10); {
	case (op < 3 || len(l) == 0) && len(free) > 0:
		return insertCondition(r, l, newCondition(r, free[r.IntN(len(free))]))
	case op < 4 && len(l) > 0:
		i := r.IntN(len(l))
		return slices.Delete(l, i, i+1)
	case len(l) > 0:
		i := r.IntN(len(l))
		l[i] = s.change(r, l[i])
		return l
	}
	return l
}

// change returns a copy of condition c with one or two of its fields changed.
func (s conditionsShape) change(r *rand.Rand, c any) any {
	m := clone(c).(map[string]any)
	fields := []string{"status", "reason", "message", "message", "observedGeneration", "observedGeneration"}
	if s.times {
		fields = append(fields, "lastTransitionTime")
	}
	for range 1 + r.IntN(2) {
		switch f := fields[r.IntN(len(fields))]; f {
		case "status":
			m[f] = pickOther(r, poolCondStatus, m[f])
			if chance(r, 0.7) {
				m["lastTransitionTime"] = pickOther(r, poolCondTimes, m["lastTransitionTime"])
			}
		case "reason":
			m[f] = pickOther(r, poolCondReasons, m[f])
		case "message":
			m[f] = pickOther(r, poolTexts, m[f])
		case "observedGeneration":
			put(m, f, pickOther(r, poolCondGens, lookup(m, f)))
		case "lastTransitionTime":
			m[f] = pickOther(r, poolCondTimes, m[f])
		}
	}
	return m
}

// kindField is one field of a kind: where it is and its shape.
type kindField struct {
	path  string // dot-separated, from the top of the object
	shape shape
}

func (f kindField) keys() []string { return strings.Split(f.path, ".") }

// getPath returns the value at path in obj, or absent.
func getPath(obj map[string]any, path []string) any {
	var v any = obj
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return absent
		}
		v = lookup(m, k)
	}
	return v
}

// setPath sets the value at path in obj, creating the objects on the way; absent deletes it.
func setPath(obj map[string]any, path []string, v any) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if isAbsent(v) {
				return
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	put(m, path[len(path)-1], v)
}

// kindInfo describes one kind the test patches.
type kindInfo struct {
	gvk               schema.GroupVersionKind
	statusSubresource bool
	conditions        bool // has status.conditions and status.observedGeneration
	newTyped          func() client.Object
	fields            func(deleting, times bool) []kindField
	// mapFields and listFields are the fields (also nested ones) for the scenarios that make
	// both writers touch one map or list.
	mapFields, listFields []kindField
}

func metadataFields(deleting bool) []kindField {
	return []kindField{
		{"metadata.labels", mapShape{poolLabelKeys, scalarShape{poolLabelValues}}},
		{"metadata.annotations", mapShape{poolAnnoKeys, scalarShape{poolTexts}}},
		{"metadata.finalizers", finalizersShape{noAdd: deleting}},
		{"metadata.ownerReferences", ownerRefsShape{}},
	}
}

var (
	shapeKind = &kindInfo{
		gvk:               testtypes.GroupVersion.WithKind("Shape"),
		statusSubresource: true,
		conditions:        true,
		newTyped:          func() client.Object { return &testtypes.Shape{} },
		fields: func(deleting, times bool) []kindField {
			return append(metadataFields(deleting),
				kindField{"spec.text", scalarShape{poolTexts}},
				kindField{"spec.count", scalarShape{poolNumbers}},
				kindField{"spec.enabled", scalarShape{poolBools}},
				kindField{"spec.labels", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
				kindField{"spec.selector", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
				kindField{"spec.nested", nestedShape},
				kindField{"spec.atomic", nestedShape},
				kindField{"spec.ports", portsShape},
				kindField{"spec.tags", setShape},
				kindField{"spec.args", textsShape},
				kindField{"spec.steps", stepsShape},
				kindField{"spec.groups", mapShape{poolSpecKeys, nestedShape}},
				kindField{"status.observedGeneration", scalarShape{poolNumbers[1:]}},
				kindField{"status.conditions", conditionsShape{times: times}},
				kindField{"status.phase", scalarShape{poolTexts}},
				kindField{"status.counters", mapShape{poolSpecKeys, scalarShape{poolNumbers}}},
				kindField{"status.members", portsShape},
				kindField{"status.notes", textsShape},
			)
		},
		mapFields: []kindField{
			{"metadata.labels", mapShape{poolLabelKeys, scalarShape{poolLabelValues}}},
			{"metadata.annotations", mapShape{poolAnnoKeys, scalarShape{poolTexts}}},
			{"spec.labels", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
			{"spec.selector", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
			{"spec.nested.extra", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
			{"spec.atomic.extra", mapShape{poolSpecKeys, scalarShape{poolTexts}}},
			{"spec.groups", mapShape{poolSpecKeys, nestedShape}},
			{"status.counters", mapShape{poolSpecKeys, scalarShape{poolNumbers}}},
		},
		// The status lists twice: controllers adding to the lists of a shared status are the
		// common case.
		listFields: []kindField{
			{"spec.ports", portsShape}, {"spec.tags", setShape}, {"spec.args", textsShape},
			{"spec.steps", stepsShape}, {"status.members", portsShape}, {"status.notes", textsShape},
			{"status.members", portsShape}, {"status.notes", textsShape},
		},
	}
	gadgetKind = &kindInfo{
		gvk:        testtypes.GroupVersion.WithKind("Gadget"),
		conditions: true,
		newTyped:   func() client.Object { return &testtypes.Gadget{} },
		fields: func(deleting, times bool) []kindField {
			return append(metadataFields(deleting),
				kindField{"spec.replicas", scalarShape{poolNumbers}},
				kindField{"spec.size", scalarShape{poolTexts}},
				kindField{"spec.color", scalarShape{poolTexts}},
				kindField{"spec.items", setShape},
				kindField{"status.observedGeneration", scalarShape{poolNumbers[1:]}},
				kindField{"status.conditions", conditionsShape{times: times}},
				kindField{"status.phase", scalarShape{poolTexts}},
				kindField{"status.readyReplicas", scalarShape{poolNumbers}},
			)
		},
		mapFields: []kindField{
			{"metadata.labels", mapShape{poolLabelKeys, scalarShape{poolLabelValues}}},
			{"metadata.annotations", mapShape{poolAnnoKeys, scalarShape{poolTexts}}},
		},
		listFields: []kindField{{"spec.items", setShape}},
	}
	configMapKind = &kindInfo{
		gvk:      corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		newTyped: func() client.Object { return &corev1.ConfigMap{} },
		fields: func(deleting, _ bool) []kindField {
			return append(metadataFields(deleting), kindField{"data", mapShape{poolDataKeys, scalarShape{poolTexts}}})
		},
		mapFields: []kindField{
			{"metadata.labels", mapShape{poolLabelKeys, scalarShape{poolLabelValues}}},
			{"metadata.annotations", mapShape{poolAnnoKeys, scalarShape{poolTexts}}},
			{"data", mapShape{poolDataKeys, scalarShape{poolTexts}}}, // twice: the ConfigMap's own map
			{"data", mapShape{poolDataKeys, scalarShape{poolTexts}}},
		},
	}
)

// Fault modes.
const (
	faultEvery          = "every"
	faultRetry          = "retry"
	faultAfterConflicts = "after conflicts"
)

// Lifecycles of a case's object, besides plain existence.
const (
	lifeDeleting  = "being deleted"                 // S0 has a deletionTimestamp and finalizers
	lifeDeleted   = "deleted by them"               // S1 does not exist
	lifeRecreated = "deleted and recreated by them" // S1 is another object of the same name
)

// differentialCase is one generated case.
type differentialCase struct {
	seed  int64
	kind  *kindInfo
	typed bool

	// initial is the content the object is created with (metadata.labels, annotations,
	// finalizers, ownerReferences, and the other top-level fields), theirs the content the
	// other writer writes (nil: no write), ours the content of our changed copy. For a typed
	// Helper, initial and theirs hold only what the Go type can hold (see canonical).
	initial, theirs, ours map[string]any
	// theirWay is how the other writer writes: "merge patch" or "update".
	theirWay  string
	lifecycle string
	// recreated is the content of the object the other writer creates in place of the first.
	recreated map[string]any

	owned              []string
	force              bool
	observedGeneration bool
	fault              faultSpot
	faultClass         string
	// faultMode says which of the requests to the part get the fault: faultEvery, faultRetry
	// (only the second request, a retry after a conflict) or faultAfterConflicts (the first
	// conflicts requests get a 409 Conflict, every later one the fault).
	faultMode string
	conflicts int

	// stale is the stale-snapshot scenario of the case (differential_stale_test.go): "" for
	// none. first is then the content of the first Patch's changed copy.
	stale string
	first map[string]any

	// scenarios names the situations the case was built to produce, for descriptions.
	scenarios []string
}

// canonical returns content as a typed object holds it: a typed Helper cannot see what its Go
// type drops (an empty string in an omitempty field, say), so in its cases the server never
// holds such values; the other writer removes the field instead.
func canonical(k *kindInfo, c map[string]any) map[string]any {
	obj := graft(map[string]any{"metadata": map[string]any{"name": "x"}}, c)
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	typed := k.newTyped()
	if err := json.Unmarshal(b, typed); err != nil {
		panic(err)
	}
	return rawContent(toJSON(typed))
}

// rawContent is content without the normalisation: what a writer sends.
func rawContent(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			out[k] = clone(v)
		}
	}
	meta := map[string]any{}
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		put(meta, k, clone(lookup(asObject(obj["metadata"]), k)))
	}
	out["metadata"] = meta
	return out
}

// graft returns a copy of obj whose content is c: obj's metadata other than the four fields of
// content stays, everything else comes from c.
func graft(obj, c map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		put(out, k, lookup(obj, k))
	}
	meta := clone(asObject(obj["metadata"])).(map[string]any)
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		put(meta, k, clone(getPath(c, []string{"metadata", k})))
	}
	out["metadata"] = meta
	for k, v := range c {
		if k != "metadata" {
			out[k] = clone(v)
		}
	}
	return out
}

// toJSON returns v as a JSON value.
func toJSON(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// randomContent returns random content for the fields: each is set with some probability.
func randomContent(r *rand.Rand, fields []kindField) map[string]any {
	c := map[string]any{}
	for _, f := range fields {
		if chance(r, 0.4) {
			setPath(c, f.keys(), f.shape.random(r))
		}
	}
	return c
}

// edit is a change of one field by one writer.
type edit struct {
	path string
	fn   func(r *rand.Rand, cur any) any
}

func applyEdits(r *rand.Rand, c map[string]any, edits []edit) map[string]any {
	out := clone(c).(map[string]any)
	for _, e := range edits {
		path := strings.Split(e.path, ".")
		setPath(out, path, e.fn(r, getPath(out, path)))
	}
	return out
}

// generateCase draws the case of seed.
func generateCase(seed int64) *differentialCase {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7465_6e6f_6e))
	dc := &differentialCase{seed: seed}
	switch n := r.IntN(10); {
	case n < 6:
		dc.kind = shapeKind
	case n < 8:
		dc.kind = gadgetKind
	default:
		dc.kind = configMapKind
	}
	dc.typed = chance(r, 0.5)
	switch n := r.Float64(); {
	case n < 0.06:
		dc.lifecycle = lifeDeleting
	case n < 0.09:
		dc.lifecycle = lifeDeleted
	case n < 0.12:
		dc.lifecycle = lifeRecreated
	}
	if dc.lifecycle == "" && chance(r, 0.15) {
		dc.fault = faultMain
		if dc.kind.statusSubresource && chance(r, 0.5) {
			dc.fault = faultStatus
		}
		dc.faultClass = []string{errForbidden, errInternal, errInvalid}[r.IntN(3)]
		switch n := r.IntN(10); {
		case n < 3:
			dc.faultMode = faultRetry
		case n < 6:
			dc.faultMode, dc.conflicts = faultAfterConflicts, 1+r.IntN(3)
		default:
			dc.faultMode = faultEvery
		}
	}
	deleting := dc.lifecycle == lifeDeleting
	// A change of lastTransitionTime alone may or may not send a request: not with a fault.
	fields := dc.kind.fields(deleting, dc.fault == faultNone)
	initial := randomContent(r, fields)
	if deleting {
		setPath(initial, []string{"metadata", "finalizers"}, finalizersShape{}.random(r))
	}

	// Scenarios: both writers touch one map, one list, one condition.
	var theirs, ours []edit
	used := map[string]bool{}
	if len(dc.kind.mapFields) > 0 && chance(r, 0.4) {
		f := dc.kind.mapFields[r.IntN(len(dc.kind.mapFields))]
		m := f.shape.(mapShape)
		if len(asObject(getPath(initial, f.keys()))) == 0 || chance(r, 0.5) {
			n := map[string]any{}
			k := m.keys[r.IntN(len(m.keys))]
			n[k] = m.value.random(r)
			setPath(initial, f.keys(), n) // one key: we remove the last one
		}
		theirs = append(theirs, edit{f.path, m.addKey})
		ours = append(ours, edit{f.path, func(r *rand.Rand, _ any) any { return m.clear(r) }})
		used[f.path] = true
		dc.scenarios = append(dc.scenarios, "they add a key to "+f.path+", we empty it")
	}
	if len(dc.kind.listFields) > 0 && chance(r, 0.35) {
		f := dc.kind.listFields[r.IntN(len(dc.kind.listFields))]
		l := f.shape.(listShape)
		if len(asList(getPath(initial, f.keys()))) == 0 {
			setPath(initial, f.keys(), l.random(r))
		}
		theirs = append(theirs, edit{f.path, l.addElem})
		desc := "they add an element to " + f.path
		if chance(r, 0.6) {
			ours = append(ours, edit{f.path, l.edit})
			desc += ", we change it"
		}
		used[f.path] = true
		dc.scenarios = append(dc.scenarios, desc)
	}
	condType := ""
	if dc.kind.conditions && chance(r, 0.45) {
		path := []string{"status", "conditions"}
		if len(asList(getPath(initial, path))) == 0 {
			setPath(initial, path, conditionsShape{}.random(r))
		}
		l := asList(getPath(initial, path))
		condType = asObject(l[r.IntN(len(l))])["type"].(string)
		cs := conditionsShape{times: dc.fault == faultNone}
		change := func(cs conditionsShape, remove float64) func(r *rand.Rand, cur any) any {
			return func(r *rand.Rand, cur any) any {
				l := clone(asList(cur)).([]any)
				c, i := findCondition(l, condType)
				switch {
				case i < 0:
					return insertCondition(r, l, newCondition(r, condType))
				case chance(r, remove):
					return slices.Delete(l, i, i+1)
				}
				l[i] = cs.change(r, c)
				return l
			}
		}
		theirs = append(theirs, edit{"status.conditions", change(conditionsShape{times: true}, 0.1)})
		ours = append(ours, edit{"status.conditions", change(cs, 0.15)})
		used["status.conditions"] = true
		dc.scenarios = append(dc.scenarios, "both change condition "+condType)
	}
	if dc.typed {
		initial = canonical(dc.kind, initial)
	}
	dc.initial = initial

	// Fields both writers change, then fields each changes alone.
	for range r.IntN(3) {
		f := fields[r.IntN(len(fields))]
		if used[f.path] {
			continue
		}
		used[f.path] = true
		theirs = append(theirs, edit{f.path, f.shape.edit})
		ours = append(ours, edit{f.path, f.shape.edit})
		dc.scenarios = append(dc.scenarios, "both change "+f.path)
	}
	for _, f := range fields {
		if used[f.path] {
			continue
		}
		if chance(r, 0.08) {
			theirs = append(theirs, edit{f.path, f.shape.edit})
		}
		if chance(r, 0.1) {
			ours = append(ours, edit{f.path, f.shape.edit})
		}
	}
	if deleting && chance(r, 0.7) { // we remove the last finalizer
		ours = append(ours, edit{"metadata.finalizers", func(*rand.Rand, any) any { return absent }})
		dc.scenarios = append(dc.scenarios, "we remove every finalizer")
	}
	switch {
	case deleting && chance(r, 0.25): // they remove the last finalizer: the object is gone
		theirs = []edit{{"metadata.finalizers", func(*rand.Rand, any) any { return absent }}}
		dc.scenarios = append(dc.scenarios, "they remove every finalizer")
	case dc.lifecycle == "" && chance(r, 0.08):
		theirs = nil
		dc.scenarios = append(dc.scenarios, "no other writer")
	}
	if dc.lifecycle == lifeDeleted || dc.lifecycle == lifeRecreated {
		theirs = nil // they delete the object instead
	}
	if theirs != nil {
		dc.theirs = applyEdits(r, dc.initial, theirs)
		if dc.typed {
			dc.theirs = canonical(dc.kind, dc.theirs)
		}
	}
	dc.theirWay = "merge patch"
	if chance(r, 0.4) {
		dc.theirWay = "update"
	}
	if dc.lifecycle == lifeRecreated {
		dc.recreated = randomContent(r, dc.kind.fields(false, false))
		if dc.typed {
			dc.recreated = canonical(dc.kind, dc.recreated)
		}
	}
	dc.ours = applyEdits(r, dc.initial, ours)

	// Options.
	if dc.kind.conditions {
		for _, t := range poolCondTypes {
			if chance(r, 0.25) {
				dc.owned = append(dc.owned, t)
			}
		}
		dc.observedGeneration = chance(r, 0.35)
	}
	generateStale(dc, fields)
	return dc
}
