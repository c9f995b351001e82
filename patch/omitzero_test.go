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
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

var omitZeroSeed = flag.Int64("omitzero.seed", 0, "the seed of TestOmitZeroStructsWalksAsItsReferenceDoes's objects (0: a fresh one)")

// TestOmitZeroStructsWalksAsItsReferenceDoes fills random objects of every type in client-go's
// scheme, with struct fields zeroed at random, and checks that omitZeroStructs removes what
// referenceOmitZeroStructs, the plain recursive walk it replaced, removes.
func TestOmitZeroStructsWalksAsItsReferenceDoes(t *testing.T) {
	seed := *omitZeroSeed
	if seed == 0 {
		seed = rand.Int63()
	}
	r := rand.New(rand.NewSource(seed))
	f := randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.25).NumElements(0, 3).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) { *q = resource.MustParse(fmt.Sprint(c.Intn(5000))) },
		func(v *any, c randfill.Continue) {
			if c.Bool() {
				*v = &corev1.ObjectReference{Name: c.String(5)}
			}
		},
		func(o *runtime.Object, c randfill.Continue) {
			if c.Bool() {
				*o = &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}
			}
		},
		func(e *runtime.RawExtension, c randfill.Continue) {},
		func(is *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*is = intstr.FromInt32(c.Int31())
			}
		},
	)
	types := 0
	for _, typ := range clientgoscheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(typ.Name(), "List") {
			continue
		}
		types++
		for i := range 4 {
			obj, ok := reflect.New(typ).Interface().(client.Object)
			if !ok {
				break
			}
			f.Fill(obj)
			zeroSome(r, reflect.ValueOf(obj).Elem())
			m, err := objects.ToMap(obj)
			if err != nil {
				continue // a value upstream cannot convert either (a quantity or time randfill made)
			}
			want := jsonvalue.DeepCopyMap(m)
			referenceOmitZeroStructs(reflect.ValueOf(obj), want)
			omitZeroStructs(reflect.ValueOf(obj), m)
			if diff := cmp.Diff(want, m); diff != "" {
				t.Fatalf("%v, object %d (replay: -omitzero.seed=%d): (-reference +omitZeroStructs)\n%s", typ, i, seed, diff)
			}
		}
	}
	if types < 200 {
		t.Fatalf("only %d types", types)
	}
}

// TestOmitZeroStructsWalksIntoInterfacesAndMaps covers what client-go's types do not hold: a
// value in an interface, maps of structs, and a type that holds itself.
func TestOmitZeroStructsWalksIntoInterfacesAndMaps(t *testing.T) {
	type inner struct {
		Port intstr.IntOrString `json:"port,omitempty"`
		Name string             `json:"name,omitempty"`
	}
	type node struct {
		Held  any              `json:"held,omitempty"`
		ByKey map[string]inner `json:"byKey,omitempty"`
		Next  *node            `json:"next,omitempty"`
		Inner inner            `json:"inner,omitempty"`
	}
	v := &node{Held: &inner{Name: "a"}, ByKey: map[string]inner{"k": {Name: "b"}}, Next: &node{Held: inner{}, Inner: inner{Name: "c"}}}
	m := map[string]any{
		"held":  map[string]any{"port": int64(0), "name": "a"},
		"byKey": map[string]any{"k": map[string]any{"port": int64(0), "name": "b"}},
		"next":  map[string]any{"held": map[string]any{"port": int64(0)}, "inner": map[string]any{"port": int64(0), "name": "c"}},
		"inner": map[string]any{"port": int64(0)},
	}
	want := jsonvalue.DeepCopyMap(m)
	referenceOmitZeroStructs(reflect.ValueOf(v), want)
	omitZeroStructs(reflect.ValueOf(v), m)
	if diff := cmp.Diff(want, m); diff != "" {
		t.Fatalf("(-reference +omitZeroStructs)\n%s", diff)
	}
	if _, ok := m["inner"]; ok || m["held"].(map[string]any)["port"] != nil {
		t.Fatalf("zero structs left: %v", m)
	}
}

// zeroSome sets struct fields below v to their zero value, one in three.
func zeroSome(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			zeroSome(r, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			zeroSome(r, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fv := v.Field(i)
			if !fv.CanSet() {
				continue
			}
			if fv.Kind() == reflect.Struct && r.Intn(3) == 0 {
				fv.SetZero()
				continue
			}
			zeroSome(r, fv)
		}
	}
}

// referenceOmitZeroStructs is the plain recursive walk omitZeroStructs replaced, kept as the
// reference its test compares it with: it looks up each struct type's plan as it meets it.
func referenceOmitZeroStructs(v reflect.Value, m any) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		if fields, ok := m.(map[string]any); ok {
			referenceOmitZeroFields(v, fields)
		}
	case reflect.Slice, reflect.Array:
		if list, ok := m.([]any); ok && len(list) == v.Len() && referenceMayOmit(v.Type().Elem()) {
			for i := range list {
				referenceOmitZeroStructs(v.Index(i), list[i])
			}
		}
	case reflect.Map:
		if entries, ok := m.(map[string]any); ok && v.Type().Key().Kind() == reflect.String && referenceMayOmit(v.Type().Elem()) {
			referenceOmitZeroEntries(v, entries)
		}
	}
}

// referenceOmitZeroEntries is referenceOmitZeroStructs for v, a map with string keys, and entries, its JSON object.
func referenceOmitZeroEntries(v reflect.Value, entries map[string]any) {
	for it := v.MapRange(); it.Next(); {
		if sub, ok := entries[it.Key().String()]; ok {
			referenceOmitZeroStructs(it.Value(), sub)
		}
	}
}

// referenceOmitZeroFields is referenceOmitZeroStructs for v, a struct, and fields, its JSON object.
func referenceOmitZeroFields(v reflect.Value, fields map[string]any) {
	for _, f := range referencePlanOf(v.Type()).fields {
		switch {
		case f.name == "":
			referenceOmitZeroStructs(v.Field(f.index), fields) // inlined: its fields are this struct's
		case f.omitZeroStruct && v.Field(f.index).IsZero():
			delete(fields, f.name)
		case f.walk:
			if sub, ok := fields[f.name]; ok {
				referenceOmitZeroStructs(v.Field(f.index), sub)
			}
		}
	}
}

// referenceStructPlan is what referenceOmitZeroStructs needs of a struct type's fields, worked out once per type
// (as encoding/json caches its encoders): the fields encoded from the struct's own fields, none
// for a type that encodes itself.
type referenceStructPlan struct {
	fields []referenceFieldPlan
}

// referenceFieldPlan is one encoded field of a struct.
type referenceFieldPlan struct {
	index int
	// name is the field's JSON name; "" for an embedded struct whose fields are inlined.
	name string
	// omitZeroStruct is set for a struct field with omitempty: omitted when zero.
	omitZeroStruct bool
	// walk is set when the field's value may hold such a field (see mayOmit).
	walk bool
}

var (
	// referencePlans caches referencePlanOf by reflect.Type; referenceOmittable caches mayOmit.
	referencePlans, referenceOmittable sync.Map
)

// referencePlanOf returns the plan of struct type t.
func referencePlanOf(t reflect.Type) *referenceStructPlan {
	if p, ok := referencePlans.Load(t); ok {
		return p.(*referenceStructPlan)
	}
	p := &referenceStructPlan{}
	if !encodesItself(t) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, omitempty := jsonField(f)
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			p.fields = append(p.fields, referenceFieldPlan{index: i, name: name,
				omitZeroStruct: omitempty && f.Type.Kind() == reflect.Struct, walk: referenceMayOmit(f.Type)})
		}
	}
	actual, _ := referencePlans.LoadOrStore(t, p)
	return actual.(*referenceStructPlan)
}

// mayOmit reports whether a value of type t may hold a struct field that referenceOmitZeroStructs
// removes, so that it must be walked: false for scalars, strings, types that encode themselves
// and what holds only those.
func referenceMayOmit(t reflect.Type) bool {
	if v, ok := referenceOmittable.Load(t); ok {
		return v.(bool)
	}
	// A type that refers to itself is walked while its answer is worked out (the safe answer).
	referenceOmittable.Store(t, true)
	result := referenceMayOmitUncached(t)
	referenceOmittable.Store(t, result)
	return result
}

func referenceMayOmitUncached(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return referenceMayOmit(t.Elem())
	case reflect.Interface:
		return true
	case reflect.Struct:
		for _, f := range referencePlanOf(t).fields {
			if f.name == "" || f.omitZeroStruct || f.walk {
				return true
			}
		}
	}
	return false
}
