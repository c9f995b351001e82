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
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/jsontext"
	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/internal/shardlabels"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// orEmpty returns v, or "" when v is nil.
func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// hashOf returns the hash of an apply request: its body and whether it forces ownership. Two
// bodies that are the same JSON value have the same hash, whatever the Go types of their
// numbers (see jsonvalue.AppendCanonical).
func hashOf(desired map[string]any, force bool) ([32]byte, error) {
	data, err := jsonvalue.AppendCanonical(make([]byte, 0, 1024), desired)
	if err != nil {
		return [32]byte{}, fmt.Errorf("failed to encode the apply request: %w", err)
	}
	if force {
		data = append(data, 1)
	}
	return sha256.Sum256(data), nil
}

// appliedMetadata lists the metadata fields an apply request may declare; the rest is identity
// the request is addressed by, or belongs to the API server.
var appliedMetadata = []string{"name", "namespace", "labels", "annotations", "ownerReferences", "finalizers"}

// applyBody returns the body of the apply request for m, a desired object of kind gvk as a JSON
// value: m without status and server-owned metadata, with its apiVersion and kind. m is not
// modified: even a typed object's conversion may hold the object's own values (a field type
// whose ToUnstructured returns a map it holds), so the body is a copy.
func applyBody(m map[string]any, gvk schema.GroupVersionKind) map[string]any {
	body := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "status", "metadata":
		default:
			body[k] = pruneNulls(jsonvalue.DeepCopy(v))
		}
	}
	meta := jsonvalue.NestedMap(m, "metadata")
	applied := make(map[string]any, len(appliedMetadata))
	for _, k := range appliedMetadata {
		if v, ok := meta[k]; ok && v != nil {
			applied[k] = jsonvalue.DeepCopy(v)
		}
	}
	if labels, ok := applied["labels"].(map[string]any); ok {
		withoutShardLabels(applied, labels)
	}
	body["metadata"] = applied
	body["apiVersion"], body["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return body
}

// withoutShardLabels removes the sharder's labels from labels, the labels of meta, an apply
// request's metadata, and the labels themselves when it removed some and none is left. They are the sharder's and
// the shard's to write (see the sharding package): a desired child that copies its owner's
// labels would otherwise make this field manager own the owner's shard label on the child and
// put it back after every move of the sharder.
func withoutShardLabels(meta, labels map[string]any) {
	removed := false
	for k := range labels {
		if shardlabels.Is(k) {
			delete(labels, k)
			removed = true
		}
	}
	if removed && len(labels) == 0 {
		delete(meta, "labels")
	}
}

// statusBody returns the body of the status apply request for m, a desired object of kind gvk
// as a JSON value: its identity (live's) and status, with only the owned conditions when owned is
// set, and transition times carried over from current, the conditions the object has. A
// condition that sets no time and has none to carry over gets the current time when stamp is
// set and every condition in current has a time: a condition of current without one says that
// the schema has no lastTransitionTime, or does not require one. Without such stamping, a time is
// carried over only for a condition whose time this manager applied (carry reports it): so a
// condition applied without one stays without one, and the same desired object makes the same
// request again, rather than one that takes over another writer's time. m is not modified.
func statusBody(m map[string]any, gvk schema.GroupVersionKind, live client.Object, current []any, owned []conditions.Type, stamp bool,
	carry func(conditionType string) bool,
) map[string]any {
	status, _ := pruneNulls(jsonvalue.DeepCopy(m["status"])).(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	meta := map[string]any{"name": live.GetName()}
	if ns := live.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	body := map[string]any{
		"apiVersion": gvk.GroupVersion().String(),
		"kind":       gvk.Kind,
		"metadata":   meta,
		"status":     status,
	}
	raw, has := status["conditions"]
	if !has {
		return body
	}
	desired, ok := jsonvalue.Conditions(raw)
	if !ok {
		return body // not a list of conditions keyed by type: applied as it is
	}
	stamp = stamp && !slices.ContainsFunc(current, func(e any) bool { return !hasTime(jsonvalue.Map(e)) })
	if out := conditionsToApply(desired, current, owned, stamp, carry); len(out) > 0 {
		status["conditions"] = out
	} else {
		delete(status, "conditions")
	}
	return body
}

// conditionsToApply returns the conditions of desired that the status apply declares (those of
// the owned types, or all of them when owned is nil), each with its lastTransitionTime: the
// current condition's when its status did not change and stamp or carry says so, now when it
// has none and stamp is set, its own otherwise. A condition that does not set its status (an
// apply configuration that leaves the status to another manager) has not changed it: it gets the
// current condition's time as one whose status did not change, and never the current time.
// desired's conditions are modified.
func conditionsToApply(desired, current []any, owned []conditions.Type, stamp bool, carry func(conditionType string) bool) []any {
	out := make([]any, 0, len(desired))
	for _, e := range desired {
		c := jsonvalue.Map(e)
		t := jsonvalue.ConditionType(c)
		if owned != nil && !slices.Contains(owned, conditions.Type(t)) {
			continue
		}
		l := jsonvalue.FindCondition(current, t)
		switch {
		case l != nil && hasTime(l) && (c["status"] == nil || jsonvalue.SameStatus(l, c)) && (stamp || carry(t)):
			c["lastTransitionTime"] = jsonvalue.DeepCopy(l["lastTransitionTime"])
		case c["status"] == nil:
			// Not this apply's status, so not its transition either: no time of its own.
		case !hasTime(c) && stamp:
			c["lastTransitionTime"] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		}
		out = append(out, c)
	}
	return out
}

// timesApplied returns the types of the conditions whose lastTransitionTime manager's status apply
// set, as live's managedFields show them, and false when live has none to show (a cache that
// strips them).
func timesApplied(live client.Object, manager string) (map[string]bool, bool) {
	entries := live.GetManagedFields()
	if len(entries) == 0 {
		return nil, false
	}
	out := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "status" {
			continue
		}
		set, ok := managed.FieldSet(e)
		if !ok {
			return nil, false
		}
		for k, v := range jsonvalue.NestedMap(set, "f:status", "f:conditions") {
			key, ok := strings.CutPrefix(k, "k:")
			if !ok {
				continue
			}
			selector, err := jsontext.DecodeObject(key)
			if err != nil {
				continue
			}
			if t, _ := selector["type"].(string); t != "" {
				_, out[t] = jsonvalue.Map(v)["f:lastTransitionTime"]
			}
		}
	}
	return out, true
}

// hasTime reports whether the condition c has a lastTransitionTime.
func hasTime(c map[string]any) bool {
	return c["lastTransitionTime"] != nil && c["lastTransitionTime"] != ""
}

// undeclaredTransitionTime reports whether err is server-side apply's refusal of a condition's
// lastTransitionTime that the kind's schema does not declare (a 500, "field not declared in
// schema").
func undeclaredTransitionTime(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 500 &&
		strings.Contains(status.Status().Message, ".lastTransitionTime: field not declared in schema")
}

// transitionTimes returns what an [applyRecord] keeps of obj's conditions: the type, status and
// lastTransitionTime of each, or nil when obj has none or they are not a list keyed by type.
func transitionTimes(obj map[string]any) []any {
	raw, _ := jsonvalue.Nested(obj, "status", "conditions")
	list, ok := jsonvalue.Conditions(raw)
	if !ok || len(list) == 0 {
		return nil
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		c := jsonvalue.Map(e)
		kept := map[string]any{"type": c["type"]}
		for _, k := range []string{"status", "lastTransitionTime"} {
			if v, ok := c[k]; ok {
				kept[k] = jsonvalue.DeepCopy(v)
			}
		}
		out = append(out, kept)
	}
	return out
}

// requestMap returns obj as a JSON value to build a request from, as [objects.ToMap] does (an
// unstructured object's own map, which callers must not modify), but for a typed object without
// its empty struct fields (see [omitZeroStructs]).
func requestMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	m, err := objects.ToMap(obj)
	if err != nil {
		return nil, err
	}
	omitZeroStructs(reflect.ValueOf(obj), m)
	return m, nil
}

// omitZeroStructs removes from m, the JSON value of the typed value v, every field whose Go type
// is a struct (not a pointer to one), whose json tag has omitempty and whose value is the zero
// value. encoding/json and runtime.DefaultUnstructuredConverter omit an empty string, number,
// bool, map, list or nil pointer with omitempty, but never a struct: a Service port's unset
// targetPort (an intstr.IntOrString) would be sent as 0, owned, and defaulted to the port by the
// server, so the live object could never match the request. A Go struct field cannot tell unset
// from zero, and omitempty says the type's author means zero as unset; a pointer to a struct, a
// field without omitempty and anything an unstructured object holds are sent as they are.
func omitZeroStructs(v reflect.Value, m any) {
	walkerOf(v.Type()).walk(v, m)
}

// walker is what omitZeroStructs needs of a Go type, worked out once per type (as encoding/json
// caches its encoders), with the walkers of the types it holds, so that a walk looks up only the
// types of values held in interfaces.
type walker struct {
	kind reflect.Kind
	// elem walks the elements of a pointer, slice, array or map (a map with string keys only:
	// nil for another).
	elem *walker
	// fields are the encoded fields of a struct: none for a type that encodes itself.
	fields []fieldWalker
	// omits is set when a value of the type may hold a struct field omitZeroStructs removes,
	// so that it must be walked: not for scalars, strings, types that encode themselves and
	// what holds only those.
	omits bool
}

// fieldWalker is one encoded field of a struct.
type fieldWalker struct {
	index int
	// name is the field's JSON name; "" for an embedded struct whose fields are inlined.
	name string
	// omitZeroStruct is set for a struct field with omitempty: omitted when zero.
	omitZeroStruct bool
	walker         *walker
}

// walkers caches walkerOf by reflect.Type.
var walkers sync.Map

// walkerOf returns the walker of t.
func walkerOf(t reflect.Type) *walker {
	if w, ok := walkers.Load(t); ok {
		return w.(*walker)
	}
	made := map[reflect.Type]*walker{}
	w := makeWalker(t, made)
	omits(w, map[*walker]bool{})
	actual, _ := walkers.LoadOrStore(t, w)
	return actual.(*walker)
}

// makeWalker returns the walker of t, and of every type it holds, without omits; made holds
// those begun, for a type that holds itself.
func makeWalker(t reflect.Type, made map[reflect.Type]*walker) *walker {
	if w, ok := made[t]; ok {
		return w
	}
	w := &walker{kind: t.Kind()}
	made[t] = w
	switch w.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		w.elem = makeWalker(t.Elem(), made)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			w.elem = makeWalker(t.Elem(), made)
		}
	case reflect.Struct:
		if encodesItself(t) {
			break
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, omitempty := jsonField(f)
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			w.fields = append(w.fields, fieldWalker{index: i, name: name,
				omitZeroStruct: omitempty && f.Type.Kind() == reflect.Struct, walker: makeWalker(f.Type, made)})
		}
	}
	return w
}

// omits works out w.omits for w and the walkers it holds; seen holds those begun, taken to omit
// while their answer is worked out (the safe answer, for a type that holds itself).
func omits(w *walker, seen map[*walker]bool) bool {
	if done, ok := seen[w]; ok {
		return done
	}
	seen[w] = true
	w.omits = false
	switch w.kind {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		w.omits = w.elem != nil && omits(w.elem, seen)
	case reflect.Interface:
		w.omits = true
	case reflect.Struct:
		for _, f := range w.fields {
			// Every field's walker is worked out, for the walks that skip to it.
			if sub := omits(f.walker, seen); f.name == "" || f.omitZeroStruct || sub {
				w.omits = true
			}
		}
	}
	seen[w] = w.omits
	return w.omits
}

// walk removes what omitZeroStructs removes from m, the JSON value of v, a value of w's type.
func (w *walker) walk(v reflect.Value, m any) {
	switch w.kind {
	case reflect.Pointer:
		if !v.IsNil() {
			w.elem.walk(v.Elem(), m)
		}
	case reflect.Interface:
		if !v.IsNil() {
			walkerOf(v.Elem().Type()).walk(v.Elem(), m)
		}
	case reflect.Struct:
		if fields, ok := m.(map[string]any); ok {
			w.walkFields(v, fields)
		}
	case reflect.Slice, reflect.Array:
		if list, ok := m.([]any); ok && len(list) == v.Len() && w.elem.omits {
			w.walkElements(v, list)
		}
	case reflect.Map:
		if entries, ok := m.(map[string]any); ok && w.elem != nil && w.elem.omits {
			w.walkEntries(v, entries)
		}
	}
}

// walkFields is walk for v, a struct, and fields, its JSON object.
func (w *walker) walkFields(v reflect.Value, fields map[string]any) {
	for _, f := range w.fields {
		switch {
		case f.name == "":
			f.walker.walk(v.Field(f.index), fields) // inlined: its fields are this struct's
		case f.omitZeroStruct && v.Field(f.index).IsZero():
			delete(fields, f.name)
		case f.walker.omits:
			if sub, ok := fields[f.name]; ok {
				f.walker.walk(v.Field(f.index), sub)
			}
		}
	}
}

// walkElements is walk for v, a slice or an array, and list, its JSON list.
func (w *walker) walkElements(v reflect.Value, list []any) {
	for i := range list {
		w.elem.walk(v.Index(i), list[i])
	}
}

// walkEntries is walk for v, a map with string keys, and entries, its JSON object.
func (w *walker) walkEntries(v reflect.Value, entries map[string]any) {
	for it := v.MapRange(); it.Next(); {
		if sub, ok := entries[it.Key().String()]; ok {
			w.elem.walk(it.Value(), sub)
		}
	}
}

// jsonField returns the name runtime.DefaultUnstructuredConverter gives the struct field f ("" for
// an embedded struct without a name, whose fields are inlined; "-" for one never encoded), and
// whether its tag has omitempty.
func jsonField(f reflect.StructField) (name string, omitempty bool) {
	tag, _ := f.Tag.Lookup("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && !f.Anonymous {
		name = f.Name
	}
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "omitempty" {
			omitempty = true
		}
	}
	return name, omitempty
}

// unstructuredEncoder is the interface of types that convert themselves to unstructured values
// (metav1.Time, resource.Quantity).
type unstructuredEncoder interface{ ToUnstructured() any }

var (
	jsonMarshalerType       = reflect.TypeFor[json.Marshaler]()
	unstructuredEncoderType = reflect.TypeFor[unstructuredEncoder]()
)

// encodesItself reports whether values of t have their own JSON encoding, so their JSON value is
// not made of t's fields.
func encodesItself(t reflect.Type) bool {
	for _, i := range []reflect.Type{jsonMarshalerType, unstructuredEncoderType} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// pruneNulls removes null fields from objects in v, recursively: a typed object converted to
// unstructured has them for fields it cannot omit, and an apply request must not declare them.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = pruneNulls(e)
		}
	case []any:
		for i := range x {
			x[i] = pruneNulls(x[i])
		}
	}
	return v
}
