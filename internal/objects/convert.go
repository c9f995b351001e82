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

package objects

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/tenon-dev/tenon/internal/jsontext"
)

// This file converts a typed object to its JSON value as runtime.DefaultUnstructuredConverter
// does, value for value, from a plan made once per Go type: the upstream converter looks up a
// field's JSON name and its type's conversion in shared caches at every field of every object,
// and that lookup is most of its cost on the API's types. A type whose conversion has a case
// the plans do not cover (see planner.plan) is converted by the upstream converter whole.

// plans holds the plan of each Go type converted so far: reflect.Type to *plan, or to
// unplanned{} for a type the upstream converter converts.
var plans sync.Map

// unplanned marks a type whose objects the upstream converter converts.
type unplanned struct{}

// plan is how to convert a value of one Go type.
type plan struct {
	// custom is set for a type that converts itself (a json.Marshaler or an
	// UnstructuredConverter, by value or pointer): the value is what the upstream cache's entry
	// for the type returns.
	custom bool
	// intOrString is set for intstr.IntOrString, which converts itself through its JSON only:
	// its value is read directly (see intOrStringValue).
	intOrString bool
	// fieldsV1 is set for metav1.FieldsV1, a managedFields entry's field set, which converts
	// itself through its JSON: an object is read with jsontext (see fieldsV1Value).
	fieldsV1 bool
	typ      reflect.Type
	kind     reflect.Kind
	// elem is the plan of a pointer's, slice's or map's element.
	elem *plan
	// fields are a struct's fields, in their order.
	fields []fieldPlan
	// present is how many fields of a struct are always set (no omitempty or omitzero, not
	// inlined): the size its map is made with, which the fields omitted most of the time do not
	// inflate.
	present int
}

// fieldPlan is how to convert one field of a struct.
type fieldPlan struct {
	index     int
	name      string
	omitempty bool
	omitzero  func(reflect.Value) bool
	// inline is an embedded struct, or a pointer to one, without a JSON name: its fields are
	// the parent's.
	inline bool
	plan   *plan
}

// toMapPlanned returns obj's JSON value from its type's plan; ok is false when the type has
// none (the caller converts it upstream).
func toMapPlanned(obj runtime.Object) (m map[string]any, ok bool, err error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, false, nil
	}
	p := planOf(v.Elem().Type())
	if p == nil || p.kind != reflect.Struct || p.custom {
		return nil, false, nil
	}
	m = make(map[string]any, p.present)
	if err := p.fill(m, v.Elem()); err != nil {
		return nil, true, err
	}
	return m, true, nil
}

// planOf returns t's plan, made on first use; nil when the upstream converter converts t.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		if p, ok := p.(*plan); ok {
			return p
		}
		return nil
	}
	pl := planner{making: map[reflect.Type]*plan{}}
	p := pl.plan(t)
	if pl.failed {
		plans.Store(t, unplanned{})
		return nil
	}
	// Every type reached is planned now, cycles closed: keep them all.
	for typ, tp := range pl.making {
		plans.LoadOrStore(typ, tp)
	}
	return p
}

// planner makes the plans of a type and of the types it holds.
type planner struct {
	making map[reflect.Type]*plan
	failed bool
}

// plan makes t's plan. It fails (and the type is converted upstream) for what the upstream
// converter does in ways these plans do not: arrays, complex numbers, channels and functions
// (errors there), maps with keys other than strings, a struct that converts itself inlined
// into its parent, a map or scalar inlined, and a field tagged with json's "embed" directive,
// whose meaning depends on the Go version that built the program.
func (pl *planner) plan(t reflect.Type) *plan {
	if p, ok := pl.making[t]; ok {
		return p
	}
	p := &plan{typ: t, kind: t.Kind()}
	pl.making[t] = p
	if pl.convertsItself(p) {
		return p
	}
	switch k := t.Kind(); {
	case isScalar(k), k == reflect.Interface:
	case k == reflect.Pointer:
		p.elem = pl.plan(t.Elem())
	case k == reflect.Slice:
		if t.Elem().Kind() != reflect.Uint8 {
			p.elem = pl.plan(t.Elem())
		}
	case k == reflect.Map:
		if t.Key().Kind() != reflect.String {
			pl.failed = true
			return p
		}
		p.elem = pl.plan(t.Elem())
	case k == reflect.Struct:
		pl.structFields(p)
	default:
		pl.failed = true
	}
	return p
}

// isScalar reports whether k is the kind of a string, a boolean or a number.
func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// convertsItself sets up p, the plan of a type that converts itself, and reports whether its
// type is one.
func (pl *planner) convertsItself(p *plan) bool {
	switch p.typ {
	case intOrStringType:
		p.intOrString = true
		return true
	case reflect.PointerTo(intOrStringType):
		// What upstream's cache entry does for a pointer that converts itself: nothing for nil,
		// otherwise what the value converts to.
		p.elem = pl.plan(p.typ.Elem())
		return true
	}
	// Its upstream cache entry is made when a value is converted, as upstream: making it walks
	// the type's fields, and a struct that embeds a pointer to itself has no end.
	p.custom = convertsItself(p.typ)
	p.fieldsV1 = p.typ == fieldsV1Type || p.typ == reflect.PointerTo(fieldsV1Type)
	return p.custom
}

// structFields sets the fields of p, the plan of a struct.
func (pl *planner) structFields(p *plan) {
	p.fields = make([]fieldPlan, 0, p.typ.NumField())
	for i := range p.typ.NumField() {
		if f, ok := pl.field(p.typ.Field(i)); ok {
			f.index = i
			p.fields = append(p.fields, f)
			if !f.inline && !f.omitempty && f.omitzero == nil {
				p.present++
			}
		}
	}
}

// The interfaces by which a type converts itself, as the upstream cache's entries test them.
var (
	marshalerType                      = reflect.TypeFor[json.Marshaler]()
	unstructuredConverterType          = reflect.TypeFor[value.UnstructuredConverter]()
	unstructuredConverterWithErrorType = reflect.TypeFor[value.UnstructuredConverterWithError]()
)

// convertsItself reports whether t or a pointer to it converts itself to a JSON value.
func convertsItself(t reflect.Type) bool {
	for _, i := range []reflect.Type{marshalerType, unstructuredConverterType, unstructuredConverterWithErrorType} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// field makes the plan of one struct field; ok is false for a field that is never converted.
func (pl *planner) field(sf reflect.StructField) (f fieldPlan, ok bool) {
	name, options := jsonTag(sf)
	if name == "-" {
		return fieldPlan{}, false
	}
	if !sf.IsExported() && !sf.Anonymous && !isScalar(sf.Type.Kind()) {
		// A value read through an unexported field cannot be taken out as an interface, which
		// converting what it holds may need: upstream converts the type.
		pl.failed = true
	}
	f.name = name
	for _, o := range options {
		switch o {
		case "omitempty":
			f.omitempty = true
		case "omitzero":
			f.omitzero = value.OmitZeroFunc(sf.Type)
		case "embed":
			pl.failed = true
		}
	}
	f.plan = pl.plan(sf.Type)
	if f.name == "" {
		f.inline = true
		inner := f.plan
		if inner.kind == reflect.Pointer && !inner.custom {
			inner = inner.elem
		}
		if inner.kind != reflect.Struct || inner.custom || inner.intOrString {
			pl.failed = true
		}
	}
	return f, true
}

// jsonTag returns the name a struct field has in the JSON value, as upstream ("" inlines it,
// "-" leaves it out), and the options of its tag.
func jsonTag(sf reflect.StructField) (name string, options []string) {
	if tag, ok := sf.Tag.Lookup("json"); ok && tag != "" {
		items := strings.Split(tag, ",")
		name, options = items[0], items[1:]
	}
	if name == "" && !sf.Anonymous {
		name = sf.Name
	}
	return name, options
}

// fill sets in m the fields of v, a struct of p's type.
func (p *plan) fill(m map[string]any, v reflect.Value) error {
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		if f.omitempty && isEmpty(fv) || f.omitzero != nil && f.omitzero(fv) {
			continue
		}
		if f.inline {
			inner := f.plan
			if inner.kind == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				inner, fv = inner.elem, fv.Elem()
			}
			if err := inner.fill(m, fv); err != nil {
				return err
			}
			continue
		}
		// A field of a scalar kind is its value, even where its type converts itself, as
		// upstream.
		out, isScalar, err := scalar(fv)
		if !isScalar {
			out, err = f.plan.convert(fv)
		}
		if err != nil {
			return err
		}
		m[f.name] = out
	}
	return nil
}

// scalar returns the JSON value of v when its kind is a string, a boolean or a number; ok is
// false for other kinds.
func scalar(v reflect.Value) (out any, ok bool, err error) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), true, nil
	case reflect.Bool:
		return v.Bool(), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := fromUint(v.Uint())
		return n, true, err
	case reflect.Float32, reflect.Float64:
		return v.Float(), true, nil
	}
	return nil, false, nil
}

// convert returns the JSON value of v, a value of p's type.
func (p *plan) convert(v reflect.Value) (any, error) {
	if p.custom || p.intOrString {
		return p.convertItself(v)
	}
	if out, ok, err := scalar(v); ok {
		return out, err
	}
	switch p.kind {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, nil
		}
		return p.elem.convert(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		inner := planOf(v.Elem().Type())
		if inner == nil {
			return convertUpstream(v.Elem())
		}
		return inner.convert(v.Elem())
	case reflect.Slice:
		return p.convertSlice(v)
	case reflect.Map:
		return p.convertMap(v)
	case reflect.Struct:
		out := make(map[string]any, p.present)
		if err := p.fill(out, v); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("unrecognized type: %v", p.kind)
}

// convertItself returns the JSON value of v, a value of p's type, which converts itself: what
// the upstream cache's entry for the type returns, read directly where that is known to be the
// same (see intOrStringValue and fieldsV1Value).
func (p *plan) convertItself(v reflect.Value) (any, error) {
	switch {
	case p.intOrString:
		if out, ok := intOrStringValue(v); ok {
			return out, nil
		}
	case p.fieldsV1:
		if out, ok := fieldsV1Value(v); ok {
			return out, nil
		}
	}
	return value.TypeReflectEntryOf(p.typ).ToUnstructured(v)
}

// convertSlice returns the JSON value of v, a slice of p's type.
func (p *plan) convertSlice(v reflect.Value) (any, error) {
	if v.IsNil() {
		return nil, nil
	}
	if p.elem == nil {
		// A []byte is its base64 text, as encoding/json writes it.
		return base64.StdEncoding.EncodeToString(v.Bytes()), nil
	}
	out := make([]any, v.Len())
	for i := range out {
		e, err := p.elem.convert(v.Index(i))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// convertMap returns the JSON value of v, a map of p's type.
func (p *plan) convertMap(v reflect.Value) (any, error) {
	if v.IsNil() {
		return nil, nil
	}
	out := make(map[string]any, v.Len())
	for it := v.MapRange(); it.Next(); {
		e, err := p.elem.convert(it.Value())
		if err != nil {
			return nil, err
		}
		out[it.Key().String()] = e
	}
	return out, nil
}

// fieldsV1Type is the type fieldsV1Value reads.
var fieldsV1Type = reflect.TypeFor[metav1.FieldsV1]()

// fieldsV1Value returns what upstream converts v, a metav1.FieldsV1 or a pointer to one, to when
// its JSON is an object without numbers (a field set always is): that object, read with jsontext
// rather than by encoding/json's decoder and a pass over its numbers. ok is false for anything
// else (a nil pointer, null, another JSON value, a number anywhere, JSON that does not read),
// which upstream converts.
func fieldsV1Value(v reflect.Value) (out map[string]any, ok bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	f, _ := v.Interface().(metav1.FieldsV1)
	data, err := f.MarshalJSON()
	if err != nil || len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	m, err := jsontext.DecodeObject(data)
	if err != nil || m == nil || holdsNumber(m) {
		return nil, false
	}
	return m, true
}

// holdsNumber reports whether the JSON value v holds a number, which upstream reads as an int64
// or a float64 as it is written.
func holdsNumber(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if holdsNumber(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsNumber(e) {
				return true
			}
		}
	case float64:
		return true
	}
	return false
}

// intOrStringType is the type intOrStringValue reads.
var intOrStringType = reflect.TypeFor[intstr.IntOrString]()

// intOrStringValue returns what upstream converts v, an intstr.IntOrString, to: the JSON value
// its MarshalJSON writes, read back. ok is false where that is not simply its number or its
// string: a type that is neither (an error upstream) or a string that is not UTF-8 (which
// encoding/json writes with replacement characters).
func intOrStringValue(v reflect.Value) (out any, ok bool) {
	is, _ := v.Interface().(intstr.IntOrString)
	switch {
	case is.Type == intstr.Int:
		return int64(is.IntVal), true
	case is.Type == intstr.String && utf8.ValidString(is.StrVal):
		return is.StrVal, true
	}
	return nil, false
}

// convertUpstream converts v, held in an interface, with the upstream converter's rules for a
// value of a type that has no plan.
func convertUpstream(v reflect.Value) (any, error) {
	holder := struct {
		V any `json:"v"`
	}{V: v.Interface()}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&holder)
	if err != nil {
		return nil, err
	}
	return m["v"], nil
}

// fromUint returns n as the int64 of a JSON value, as upstream: an error above MaxInt64.
func fromUint(n uint64) (int64, error) {
	if n > math.MaxInt64 {
		return 0, fmt.Errorf("unsigned value %d does not fit into int64 (overflow)", n)
	}
	return int64(n), nil
}

// isEmpty reports whether omitempty leaves v out, as upstream.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}
