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

package managed

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/tenon-dev/tenon/internal/jsontext"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// UpToDate reports whether an apply of desired by manager would change nothing on live. declared
// is the field set the apply declares, as the API server computes it from the kind's schema (see
// [DeclaredFields]), or nil when the schema is not known; declaredMeta is the part of it in
// metadata, whose schema (ObjectMeta's) every kind shares, or nil when not known either (see
// [DeclaredMetadata]): it is used when declared is nil. UpToDate walks desired, live and the
// field set of manager's managedFields entry for the apply operation on subresource ("" for the
// main resource) together, and holds only when:
//
//   - there is exactly one such entry, recorded for desired's apiVersion, and it owns exactly
//     declared when declared is known, and exactly declaredMeta in metadata otherwise, when that
//     is known;
//   - at every map or struct, the entry owns exactly the fields desired sets there, and live has
//     each of them (live may have more: other managers' fields and server defaults, which the
//     apply keeps);
//   - at every list, live has as many elements as desired, in the same order, and the entry owns
//     exactly desired's elements, each by its key ("k:"), value ("v:") or index ("i:");
//   - at every value the entry owns as a whole, with no owned fields below it (a scalar, an
//     atomic map, struct or list, or an empty value), live's value is exactly desired's: the
//     apply replaces such a value, so a key live has and desired does not would be removed;
//   - a non-empty map or list owned as a whole is atomic: the schema says so (declared, or in
//     metadata declaredMeta, is known and matched), or, without a schema, it is a list no other
//     entry owns elements or fields of. Without a schema a non-empty map or struct owned as a
//     whole (such as an owner reference, which ObjectMeta's schema makes atomic) is never proved:
//     it is also what a granular one looks like that the manager applied empty before and that
//     the server then filled with defaults, and applying desired would take ownership of them.
//
// Then server-side apply would neither change a value nor take or release ownership of a field.
// desired is the body of the apply request; its apiVersion, kind, metadata.name and
// metadata.namespace are identity, not fields. When live has no managedFields (a cache that
// strips them), nothing can be proved and UpToDate returns false.
//
// It is conservative: a value the server normalises (a quantity "1000m" read back as "1"), a list
// another manager added elements to, a list key the server defaulted, or a default the server
// filled in inside a value owned as a whole (a fieldRef's apiVersion) make it return false, and
// the caller applies; never the other way round. An empty map desired sets that live lacks is
// proved only at a place omits knows the stored form omits it (see [Omits]).
func UpToDate(desired, live map[string]any, managed []Entry, manager, subresource string, declared, declaredMeta map[string]any, omits Omits) bool {
	entry, others := applyEntry(managed, manager, subresource)
	if entry == nil || entry.apiVersion != desired["apiVersion"] {
		return false
	}
	owned, ok := entry.set, entry.ok
	if !ok || declared != nil && !jsonvalue.Equal(declared, owned) {
		return false
	}
	p := proof{schema: declared != nil, at: newPlaces(omits)}
	if declared == nil && declaredMeta != nil {
		ownedMeta, _ := owned["f:metadata"].(map[string]any)
		if ownedMeta == nil {
			ownedMeta = map[string]any{}
		}
		if !jsonvalue.Equal(declaredMeta, ownedMeta) {
			return false
		}
		p.metadata = true
	}
	return p.unchanged(owned, DesiredFields(desired), live, others, true)
}

// applyEntry returns manager's entry for the apply operation on subresource among managed, and
// the field sets of the other entries; nil for the entry when there is none, or more than one
// (server-side apply keeps one entry per manager: a state not understood).
func applyEntry(managed []Entry, manager, subresource string) (entry *Entry, others []map[string]any) {
	for i := range managed {
		e := &managed[i]
		if e.manager != manager || e.operation != metav1.ManagedFieldsOperationApply || e.subresource != subresource {
			if e.ok {
				others = append(others, e.set)
			}
			continue
		}
		if entry != nil {
			return nil, nil
		}
		entry = e
	}
	return entry, others
}

// AppliedSet returns the field set of manager's entry for the apply operation on subresource
// among managed; nil when there is none, more than one, or it has no field set.
func AppliedSet(managed []Entry, manager, subresource string) map[string]any {
	entry, _ := applyEntry(managed, manager, subresource)
	if entry == nil || !entry.ok {
		return nil
	}
	return entry.set
}

// FieldSet returns the field set of a managedFields entry.
func FieldSet(e *metav1.ManagedFieldsEntry) (map[string]any, bool) {
	if e.FieldsV1 == nil {
		return nil, false
	}
	set, err := jsontext.DecodeObject(e.FieldsV1.GetRawBytes())
	if err != nil || set == nil {
		return nil, false // not JSON, or null: no field set to read
	}
	return set, true
}

// DesiredFields returns desired without what identifies the object rather than describing it.
func DesiredFields(desired map[string]any) map[string]any {
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

// DeclaredFields returns the field set an apply of desired declares, in managedFields' format
// and without identity (apiVersion, kind, metadata.name and metadata.namespace), computed with
// types, a converter that knows the schemas of the built-in kinds; nil when types does not know
// desired's kind or desired does not match its schema.
func DeclaredFields(types managedfields.TypeConverter, desired map[string]any) map[string]any {
	if types == nil {
		return nil
	}
	tv, err := types.ObjectToTyped(&unstructured.Unstructured{Object: desired})
	if err != nil {
		return nil
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return nil
	}
	data, err := set.ToJSON()
	if err != nil {
		return nil
	}
	fields, err := jsontext.DecodeObject(data)
	if err != nil || fields == nil {
		return nil
	}
	delete(fields, "f:apiVersion")
	delete(fields, "f:kind")
	if meta, ok := fields["f:metadata"].(map[string]any); ok {
		delete(meta, "f:name")
		delete(meta, "f:namespace")
		if len(meta) == 0 {
			delete(fields, "f:metadata")
		}
	}
	return fields
}

// DeclaredMetadata returns the field set an apply of desired declares in metadata, in
// managedFields' format (the value of "f:metadata", empty when desired sets no metadata but its
// name and namespace), computed with types from ObjectMeta's schema, which every kind shares,
// custom resources included; nil when desired's metadata does not match it.
func DeclaredMetadata(types managedfields.TypeConverter, desired map[string]any) map[string]any {
	meta, _ := desired["metadata"].(map[string]any)
	// A ConfigMap's metadata is an ObjectMeta, as every kind's is.
	fields := DeclaredFields(types, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
	if fields == nil {
		return nil
	}
	m, _ := fields["f:metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// Omits reports whether the stored form of a kind is known to omit an empty map or list an apply
// sets at place: the field names from the object's root, "[]" for a list's elements, joined by dots
// ("metadata.labels", "spec.containers.[].resources.limits"). A built-in kind's Go types drop an
// empty map there (a Pod's nodeSelector, any object's labels), so live lacks it although the
// manager owns it, and applying again changes nothing. A lacking empty map proves nothing by
// itself: the server also prunes a map that an apply emptied by removing the manager's fields
// below it (a Node's status.features), and applying again sets it; so does an admission policy
// that removes it from some objects only. The caller knows the places from the kind's Go types.
// A nil Omits knows none. Even where the stored form omits it, a lacking empty map that another
// managedFields entry owns too proves nothing: applying it again takes the field from that entry
// (the API server reports a conflict without force).
type Omits func(place string) bool

// places tracks where a proof is, for [Omits]; a nil *places knows no place, and a proof with it
// proves no lacking empty map.
type places struct {
	omits Omits
	path  []string
}

// newPlaces returns places for omits; nil for a nil omits.
func newPlaces(omits Omits) *places {
	if omits == nil {
		return nil
	}
	return &places{omits: omits}
}

// push enters the field or list element name.
func (ps *places) push(name string) {
	if ps != nil {
		ps.path = append(ps.path, name)
	}
}

// pop leaves the place push entered.
func (ps *places) pop() {
	if ps != nil {
		ps.path = ps.path[:len(ps.path)-1]
	}
}

// omitted reports whether d, the value desired sets where live has none, is an empty map or
// list the stored form omits here.
func (ps *places) omitted(d any) bool {
	return ps != nil && Empty(d) && ps.omits(strings.Join(ps.path, "."))
}

// proof walks desired, live and owned field sets for [UpToDate].
type proof struct {
	// at is where the walk is, for the empty maps the stored form omits; nil when none are known.
	at *places
	// schema is set when the owned fields were checked against the schema's: a value owned as a
	// whole is then atomic or empty.
	schema bool
	// metadata is set when the owned fields in metadata were checked against ObjectMeta's
	// schema: schema holds there.
	metadata bool
}

// unchanged reports whether applying the value d, whose owned fields (managedFields' fieldsV1
// format: "f:<name>" for a field, "k:<json>" for a list element by key, "v:<json>" for a set
// element by value, "i:<n>" for one by index, "." for the element itself) are owned, leaves the
// live value l as it is and owns exactly the fields of d; others are the field sets of the other
// managedFields entries at the same place. See [UpToDate] for the rules.
func (p proof) unchanged(owned map[string]any, d, l any, others []map[string]any, root bool) bool {
	if children(owned) == 0 && !root {
		// Owned as a whole: the apply sets it to d, whatever live has.
		return jsonvalue.Equal(d, l) && p.atomic(d, others)
	}
	switch dv := d.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		return ok && p.unchangedFields(owned, dv, lv, others, root)
	case []any:
		lv, ok := l.([]any)
		return ok && p.unchangedElements(owned, dv, lv, others)
	}
	// A scalar with owned fields below it: not the same shape.
	return false
}

// unchangedFields is unchanged for the fields of a map or struct, d, live l.
func (p proof) unchangedFields(owned, d, l map[string]any, others []map[string]any, root bool) bool {
	fields := 0
	for k, de := range d {
		q := p
		if root && k == "metadata" && p.metadata {
			q.schema = true
		}
		sub, ok := owned["f:"+k].(map[string]any)
		if !ok {
			// A field the entry does not own: with the schema known (and matched), the apply
			// declares none here (an empty list of type map or set, such as finalizers: []), and
			// changes nothing where live holds it or the stored form omits it. Without the schema
			// it may be a field desired added since.
			if !q.schema || !declaresNothing(de) || !q.at.holdsField(k, de, l) {
				return false
			}
			continue
		}
		fields++
		q.at.push(k)
		theirs := below(others, "f:"+k)
		le, ok := l[k]
		// An empty map the stored form omits, which no other entry owns: applying it again sets
		// nothing. Where another entry owns the place, the apply takes the field from it (a
		// conflict without force).
		same := ok && q.unchanged(sub, de, le, theirs, false) ||
			!ok && children(sub) == 0 && len(theirs) == 0 && q.at.omitted(de)
		q.at.pop()
		if !same {
			return false
		}
	}
	return fields == children(owned)
}

// unchangedElements is unchanged for the elements of a list, d, live l.
func (p proof) unchangedElements(owned map[string]any, d, l []any, others []map[string]any) bool {
	if len(l) != len(d) || len(d) != children(owned) {
		return false
	}
	sels := selectorsOf(owned)
	for i, de := range d {
		k := sels.take(i, de)
		if k == "" {
			return false
		}
		sub, _ := owned[k].(map[string]any)
		p.at.push("[]")
		same := p.unchanged(sub, de, l[i], below(others, k), false)
		p.at.pop()
		if !same {
			return false
		}
	}
	return true
}

// atomic reports whether the value d, owned as a whole, can be taken for an atomic value or an
// empty one: an apply of it then owns it as a whole again.
func (p proof) atomic(d any, others []map[string]any) bool {
	switch dv := d.(type) {
	case map[string]any:
		return len(dv) == 0 || p.schema
	case []any:
		if len(dv) == 0 || p.schema {
			return true
		}
		// A list of type map or set another manager owns elements of is granular.
		for _, o := range others {
			if children(o) > 0 {
				return false
			}
		}
		return true
	}
	return true
}

// children returns the number of fields and elements in the field set owned, not counting the
// element itself (".").
func children(owned map[string]any) int {
	n := 0
	for k := range owned {
		if k != "." {
			n++
		}
	}
	return n
}

// below returns the field sets under key k of each of sets that has one.
func below(sets []map[string]any, k string) []map[string]any {
	var out []map[string]any
	for _, s := range sets {
		if sub, ok := s[k].(map[string]any); ok {
			out = append(out, sub)
		}
	}
	return out
}

// elementSelector is a key of a field set that selects a list element ("i:<n>", "v:<json>",
// "k:<json>"), read once.
type elementSelector struct {
	key   string
	kind  byte
	index string
	value any
	keyOf map[string]any
	used  bool
}

// selectors are the element selectors of one field set, in the order of their keys.
type selectors []elementSelector

// selectorsOf returns the element selectors among owned's keys, each read once (a selector that
// is not valid JSON selects nothing).
func selectorsOf(owned map[string]any) selectors {
	var out selectors
	for _, k := range jsonvalue.SortedKeys(owned) {
		if len(k) < 2 || k[1] != ':' {
			continue
		}
		s := elementSelector{key: k, kind: k[0]}
		raw := k[2:]
		switch s.kind {
		case 'i':
			s.index = raw
		case 'v':
			var err error
			if s.value, err = jsontext.Decode(raw); err != nil {
				continue
			}
		case 'k':
			var err error
			if s.keyOf, err = jsontext.DecodeObject(raw); err != nil {
				continue
			}
		default:
			continue
		}
		out = append(out, s)
	}
	return out
}

// take returns the key of the first selector not taken yet that selects the element e at index
// i of a list, and marks it taken; "" when none does.
func (ss selectors) take(i int, e any) string {
	for j := range ss {
		s := &ss[j]
		if s.used || !s.selects(i, e) {
			continue
		}
		s.used = true
		return s.key
	}
	return ""
}

// mark marks the selector k taken.
func (ss selectors) mark(k string) {
	for j := range ss {
		if ss[j].key == k {
			ss[j].used = true
		}
	}
}

// selects reports whether s selects the element e at index i.
func (s *elementSelector) selects(i int, e any) bool {
	switch s.kind {
	case 'i':
		return s.index == strconv.Itoa(i)
	case 'v':
		return jsonvalue.Equal(s.value, e)
	}
	em, ok := e.(map[string]any)
	if !ok {
		return false
	}
	for kk, kv := range s.keyOf {
		if ev, ok := em[kk]; !ok || !jsonvalue.Equal(ev, kv) {
			return false
		}
	}
	return true
}

// FixedPoint reports whether obj, the API server's answer to an apply of desired by manager to
// subresource, is what applying desired again would leave as it is, as far as a mutating
// admission plugin or webhook can have changed it. Such a plugin may add to the object as it is
// applied (a Node's not-ready taint, a Pod's default tolerations, an injected sidecar), and what it
// adds becomes the manager's: a field or list element desired does not set, or more elements in a
// list the manager owns as a whole. Applying the same desired object again would remove them, so
// the Applier's memory of the apply must not skip the next one. A plugin may also change or
// remove a value desired sets, on some operations only (a value set on a creation, which the
// next apply, an update, sets back): every value the manager owns as a whole (a scalar, an
// atomic map or list) must be in obj exactly as desired sets it, and the manager's elements of a
// list of type map or set in desired's order, one of each. A value the API server stores
// in another form (a quantity spelt canonically, a zero its stored form omits, a default inside
// an atomic value) proves nothing either way, so that apply is sent once more; it writes nothing,
// and that proves the fixed point (send records it). An empty map obj lacks is one of those,
// unless omits knows the stored form omits it there (see [Omits]). Defaults the server adds
// beside what desired sets are not the manager's and are added again. A list key the server
// defaults (a port's protocol) is taken to be desired's.
func FixedPoint(desired map[string]any, obj *unstructured.Unstructured, manager, subresource string, omits Omits) bool {
	return FixedPointOf(desired, obj.Object, EntriesOf(obj), manager, subresource, omits)
}

// FixedPointOf is [FixedPoint] for an answer read as object, a JSON value, and its
// managedFields entries: object need not hold them, nor, for an apply to the main resource,
// the status, which such an apply neither declares nor owns.
func FixedPointOf(desired, object map[string]any, entries []Entry, manager, subresource string, omits Omits) bool {
	return newPlaces(omits).fixedPoint(desired, object, entries, manager, subresource)
}

// fixedPoint is [FixedPointOf] at ps.
func (ps *places) fixedPoint(desired, object map[string]any, entries []Entry, manager, subresource string) bool {
	var owned map[string]any
	var others []map[string]any
	found := false
	for _, e := range entries {
		switch {
		case e.manager != manager || e.operation != metav1.ManagedFieldsOperationApply || e.subresource != subresource:
			if e.ok {
				others = append(others, e.set)
			}
		case !e.ok:
			return false
		default:
			owned, found = e.set, true
		}
	}
	if found {
		return ps.ownsOnly(owned, DesiredFields(desired), object, others)
	}
	// No entry: the manager owns nothing (what it applied sets no field, such as an empty list
	// of type map), and nothing the apply did can be undone by applying again. Applying again
	// may still set what obj lacks: an apply of an empty list that removed the manager's last
	// element removes the list, and applying it again creates it empty (which a schema's
	// minItems may refuse).
	return ps.holds(DesiredFields(desired), object)
}

// holds reports whether l, the value obj holds, has every field d, the value applied where the
// manager owns nothing, sets: applying d again then adds no field.
func (ps *places) holds(d, l any) bool {
	dm, isMap := d.(map[string]any)
	if !isMap {
		return l != nil
	}
	lm, _ := l.(map[string]any)
	for name, de := range dm {
		if !ps.holdsField(name, de, lm) {
			return false
		}
	}
	return true
}

// holdsField reports whether the map l holds the field name that d, applied where the manager
// owns nothing, sets. An empty map or list l lacks is held only where the stored form is known to
// omit it (any object's finalizers: [], which ObjectMeta drops).
func (ps *places) holdsField(name string, d any, l map[string]any) bool {
	ps.push(name)
	defer ps.pop()
	le, ok := l[name]
	if !ok {
		return ps.omitted(d)
	}
	return ps.holds(d, le)
}

// Entry is what the proofs read of a managedFields entry: whose it is, and its field set
// (ok is false when it has none, or none that can be read).
type Entry struct {
	manager     string
	operation   metav1.ManagedFieldsOperationType
	subresource string
	apiVersion  string
	set         map[string]any
	ok          bool
}

// NewEntry returns the proofs' form of e, whose field set is set (ok is false when e has none,
// or none that can be read). set is read, never modified.
func NewEntry(e *metav1.ManagedFieldsEntry, set map[string]any, ok bool) Entry {
	return Entry{manager: e.Manager, operation: e.Operation, subresource: e.Subresource, apiVersion: e.APIVersion, set: set, ok: ok}
}

// EntriesOf returns the managedFields entries of obj as they stand in its map, where a field
// set is a JSON object already: without the round trip through JSON that
// Unstructured.GetManagedFields and FieldSet make of every entry.
func EntriesOf(obj *unstructured.Unstructured) []Entry {
	raw, _ := jsonvalue.Nested(obj.Object, "metadata", "managedFields")
	list, _ := raw.([]any)
	out := make([]Entry, 0, len(list))
	for _, item := range list {
		m, isMap := item.(map[string]any)
		if !isMap {
			return slowEntriesOf(obj)
		}
		e := Entry{}
		var ok1, ok2 bool
		e.manager, ok1 = m["manager"].(string)
		op, ok2 := m["operation"].(string)
		e.operation = metav1.ManagedFieldsOperationType(op)
		if sub, present := m["subresource"]; present {
			if e.subresource, present = sub.(string); !present {
				return slowEntriesOf(obj)
			}
		}
		if !ok1 || !ok2 {
			return slowEntriesOf(obj)
		}
		if v, present := m["apiVersion"]; present {
			if e.apiVersion, present = v.(string); !present {
				return slowEntriesOf(obj)
			}
		}
		switch set := m["fieldsV1"].(type) {
		case map[string]any:
			e.set, e.ok = set, true
		case nil:
		default:
			return slowEntriesOf(obj)
		}
		out = append(out, e)
	}
	return out
}

// slowEntriesOf is EntriesOf for a map of another shape than a JSON decoder makes.
func slowEntriesOf(obj *unstructured.Unstructured) []Entry {
	return typedEntries(obj.GetManagedFields())
}

// typedEntries returns the entries of managed, each field set decoded from its JSON.
func typedEntries(managed []metav1.ManagedFieldsEntry) []Entry {
	out := make([]Entry, 0, len(managed))
	for i := range managed {
		e := &managed[i]
		set, ok := FieldSet(e)
		out = append(out, NewEntry(e, set, ok))
	}
	return out
}

// ownsOnly reports whether owned, a field set, holds no field or element that d, the value
// applied, does not set, and l, the value the object holds, is d exactly wherever the manager
// owns a value as a whole. others are the field sets of the other managedFields entries at the
// same place: an empty list or map applied owns the elements or keys live has unless another
// entry owns them (a list of type map or set, a granular map, whose members are theirs), as an
// atomic one's are (a Node's not-ready taint, which admission adds to an apply of `taints: []`).
func (ps *places) ownsOnly(owned map[string]any, d, l any, others []map[string]any) bool {
	if children(owned) == 0 {
		return ps.ownsWhole(d, l, others)
	}
	switch dv := d.(type) {
	case map[string]any:
		// A map or struct the manager owns fields of that obj lacks is no fixed point, even when
		// every field below it is an empty map the stored form omits: admission may have removed
		// it (a pointer to a struct, which applying again sets, empty or not).
		lv, ok := l.(map[string]any)
		return ok && ps.ownsOnlyFields(owned, dv, lv, others)
	case []any:
		lv, _ := l.([]any)
		return ps.ownsOnlyElements(owned, dv, lv, others)
	}
	return false
}

// ownsWhole is ownsOnly for a value the manager owns as a whole.
func (ps *places) ownsWhole(d, l any, others []map[string]any) bool {
	dl, isList := d.([]any)
	ll, _ := l.([]any)
	dm, isMap := d.(map[string]any)
	lm, _ := l.(map[string]any)
	switch {
	case isMap && len(dm) == 0 && len(lm) > 0:
		// An empty map applied: a granular map's keys are their managers', an atomic map's are
		// this manager's (admission filled it) and applying again removes them.
		return ownedByOthers(others)
	case !isList || len(ll) == len(dl):
		// The value as applied, exactly: admission may have changed it as it was applied (on a
		// creation only, say), and applying again would set it back.
		// An empty map l lacks is one only where the stored form is known to omit it, and no
		// other entry owns the place: applying it again would take the field from that entry (a
		// conflict without force; a ConfigMap's binaryData another writer created).
		return jsonvalue.Equal(d, l) || l == nil && len(others) == 0 && ps.omitted(d)
	}
	if len(dl) > 0 {
		return false
	}
	return ownedByOthers(others)
}

// ownsOnlyFields is ownsOnly for the fields of a map or struct, d, live l.
func (ps *places) ownsOnlyFields(owned, d, l map[string]any, others []map[string]any) bool {
	for k, sub := range owned {
		if k == "." {
			continue
		}
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			return false
		}
		de, ok := d[name]
		if !ok {
			return false
		}
		sm, _ := sub.(map[string]any)
		ps.push(name)
		only := ps.ownsOnly(sm, de, l[name], below(others, k))
		ps.pop()
		if !only {
			return false
		}
	}
	// A field desired sets that the manager does not own (an empty list of type map, which owns
	// nothing) must be held: an apply that removed the manager's last element removed the list,
	// and applying again creates it empty.
	for name, de := range d {
		if _, ok := owned["f:"+name]; ok {
			continue
		}
		if !ps.holdsField(name, de, l) {
			return false
		}
	}
	return true
}

// ownsOnlyElements is ownsOnly for the elements of a list, d, live l.
func (ps *places) ownsOnlyElements(owned map[string]any, d, l []any, others []map[string]any) bool {
	if children(owned) != len(d) {
		return false
	}
	used := make(map[string]bool, len(d))
	sels := selectorsOf(owned)
	last := -1
	for i, de := range d {
		k := sels.take(i, de)
		if k == "" {
			k = defaultedSelector(owned, used, de)
			sels.mark(k)
		}
		if k == "" {
			return false
		}
		used[k] = true
		// Applying again puts the manager's elements in desired's order and keeps one of each:
		// admission may have reordered them, or added a second of a key or value.
		at, n := liveIndex(k, l)
		if n != 1 || at <= last {
			return false
		}
		last = at
		sm, _ := owned[k].(map[string]any)
		ps.push("[]")
		only := ps.ownsOnly(sm, de, l[at], below(others, k))
		ps.pop()
		if !only {
			return false
		}
	}
	return true
}

// liveIndex returns the index in l of the element that the field set key k (a "k:" key, a "v:"
// value or an "i:" index) selects, and how many elements of l it selects; -1 and 0 for none or a
// key it cannot read.
func liveIndex(k string, l []any) (at, n int) {
	if len(k) < 2 || k[1] != ':' {
		return -1, 0
	}
	var want any
	if k[0] != 'i' {
		var err error
		if want, err = jsontext.Decode(k[2:]); err != nil {
			return -1, 0
		}
	}
	key, _ := want.(map[string]any)
	at = -1
	for i, e := range l {
		var match bool
		switch k[0] {
		case 'i':
			match = k[2:] == strconv.Itoa(i)
		case 'v':
			match = jsonvalue.Equal(e, want)
		case 'k':
			em, ok := e.(map[string]any)
			match = ok && key != nil
			for kk, kv := range key {
				if !match {
					break
				}
				match = jsonvalue.Equal(em[kk], kv)
			}
		}
		if match {
			if n == 0 {
				at = i
			}
			n++
		}
	}
	return at, n
}

// ownedByOthers reports whether one of others, the field sets of other managers at a place,
// owns something below it.
func ownedByOthers(others []map[string]any) bool {
	for _, o := range others {
		if children(o) > 0 {
			return true
		}
	}
	return false
}

// defaultedSelector returns the key of owned that selects the list element e once the server
// defaulted the key fields e leaves out: every key field e sets has the key's value. "" when
// none, or more than one, does.
func defaultedSelector(owned map[string]any, used map[string]bool, e any) string {
	em, ok := e.(map[string]any)
	if !ok {
		return ""
	}
	found := ""
	for k := range owned {
		if used[k] || !strings.HasPrefix(k, "k:") {
			continue
		}
		key, err := jsontext.DecodeObject(k[2:])
		if err != nil {
			continue
		}
		match := true
		for kk, kv := range key {
			if ev, ok := em[kk]; ok && !jsonvalue.Equal(ev, kv) {
				match = false
				break
			}
		}
		if match {
			if found != "" {
				return ""
			}
			found = k
		}
	}
	return found
}

// Empty reports whether v, a JSON value, is an empty map or list.
func Empty(v any) bool {
	switch vv := v.(type) {
	case map[string]any:
		return len(vv) == 0
	case []any:
		return len(vv) == 0
	}
	return false
}

// declaresNothing reports whether v is an empty map or list, or a map of such values only.
func declaresNothing(v any) bool {
	if m, isMap := v.(map[string]any); isMap {
		for _, e := range m {
			if !declaresNothing(e) {
				return false
			}
		}
		return true
	}
	return Empty(v)
}
