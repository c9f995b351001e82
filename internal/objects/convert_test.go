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

package objects_test

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/tenon-dev/tenon/internal/objects"
)

const (
	// convertSeedEnvVar sets the seed of TestToMapAgreesWithTheUpstreamConverter: case i of a
	// run has seed TENON_CONVERT_SEED+i, so TENON_CONVERT_SEED=<a case's seed>
	// TENON_CONVERT_CASES=1 replays that case alone (on every type).
	convertSeedEnvVar = "TENON_CONVERT_SEED"
	// convertCasesEnvVar sets the number of random objects of each type.
	convertCasesEnvVar = "TENON_CONVERT_CASES"
)

// TestToMapAgreesWithTheUpstreamConverter converts random objects of every type client-go's
// scheme knows (the built-in kinds, their lists and options), of apiextensions' types (a
// CustomResourceDefinition's schema is a recursive type) and of types with the JSON tags' edge
// cases, with ToMap and with runtime.DefaultUnstructuredConverter, and requires the same JSON
// value, or an error from both.
func TestToMapAgreesWithTheUpstreamConverter(t *testing.T) {
	seed, n := time.Now().UnixNano(), 20
	if s := os.Getenv(convertSeedEnvVar); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", convertSeedEnvVar, s, err)
		}
		seed = v
	}
	if s := os.Getenv(convertCasesEnvVar); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: not a positive number", convertCasesEnvVar, s)
		}
		n = v
	}
	t.Logf("%s=%d %s=%d", convertSeedEnvVar, seed, convertCasesEnvVar, n)

	types := convertedTypes(t)
	// The types whose conversion has a case the plans leave upstream (see planner.plan).
	upstream := map[reflect.Type]bool{reflect.TypeFor[withIntKeys](): true}
	for _, typ := range types {
		if planned := objects.Planned(reflect.New(typ).Interface().(runtime.Object)); planned == upstream[typ] {
			t.Errorf("%v: planned %v, want %v", typ, planned, !upstream[typ])
		}
	}
	compared, failed := 0, 0
	for i := range n {
		caseSeed := seed + int64(i)
		for _, typ := range types {
			obj := reflect.New(typ).Interface().(runtime.Object)
			filler(caseSeed).Fill(obj)
			got, gotErr := objects.ToMap(obj)
			want, wantErr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			compared++
			switch {
			case (gotErr != nil) != (wantErr != nil):
				t.Errorf("%s=%d %s=1, %v: ToMap's error %v, upstream's %v", convertSeedEnvVar, caseSeed, convertCasesEnvVar, typ, gotErr, wantErr)
			case gotErr == nil && !reflect.DeepEqual(got, want):
				t.Errorf("%s=%d %s=1, %v: ToMap differs from upstream (-upstream +ToMap):\n%s",
					convertSeedEnvVar, caseSeed, convertCasesEnvVar, typ, cmp.Diff(want, got))
			default:
				continue
			}
			failed++
			if failed == 10 {
				t.Fatalf("stopped after %d differences", failed)
			}
		}
	}
	t.Logf("%d objects of %d types", compared, len(types))
}

// TestToMapAgreesWithTheUpstreamConverterWhereTypesAreOdd compares ToMap with the upstream
// converter on values randfill cannot make or upstream cannot convert when filled: values held
// in an interface behind an unexported field, a type that embeds a pointer to itself, which
// upstream converts only while no value of it is present, and IntOrStrings (read directly
// rather than through their JSON) that are not UTF-8 or of neither type.
func TestToMapAgreesWithTheUpstreamConverterWhereTypesAreOdd(t *testing.T) {
	for name, obj := range map[string]runtime.Object{
		"an unplanned struct behind an unexported field": &hidden{v: withArray{Name: "a"}},
		"an array behind an unexported field":            &hidden{v: [2]int{1, 2}},
		"a string behind an unexported field":            &hidden{v: "s"},
		"a number":                                       &withIntOrString{Value: intstr.FromInt32(-7), Pointer: ptrTo(intstr.FromInt32(8080))},
		"a string":                                       &withIntOrString{Value: intstr.FromString("http <&>"), List: []intstr.IntOrString{intstr.FromString("")}},
		"a string that is not UTF-8":                     &withIntOrString{Value: intstr.FromString("a\xffb"), ByName: map[string]*intstr.IntOrString{"p": ptrTo(intstr.FromString("\xc3"))}},
		"neither a number nor a string":                  &withIntOrString{Pointer: &intstr.IntOrString{Type: 7}},
		"no value of a type embedding itself":            &selfEmbedding{},
		"an empty list of a type embedding itself":       &selfEmbedding{List: []embedsItself{}},
	} {
		t.Run(name, func(t *testing.T) {
			got, gotErr := objects.ToMap(obj)
			want, wantErr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if (gotErr != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("ToMap: %v, %v; upstream: %v, %v", got, gotErr, want, wantErr)
			}
		})
	}
}

// withIntOrString holds IntOrStrings in every position.
type withIntOrString struct {
	metav1.TypeMeta `json:",inline"`
	Value           intstr.IntOrString             `json:"value"`
	Pointer         *intstr.IntOrString            `json:"pointer"`
	List            []intstr.IntOrString           `json:"list"`
	ByName          map[string]*intstr.IntOrString `json:"byName"`
}

func (in *withIntOrString) DeepCopyObject() runtime.Object { c := *in; return &c }

func ptrTo[T any](v T) *T { return &v }

// hidden holds a value in an unexported field.
type hidden struct {
	metav1.TypeMeta `json:",inline"`
	v               any
}

func (in *hidden) DeepCopyObject() runtime.Object { c := *in; return &c }

// withArray has an array, which the plans leave to upstream.
type withArray struct {
	Name   string   `json:"name"`
	Digest *[4]byte `json:"digest,omitempty"`
}

// embedsItself embeds a pointer to itself.
type embedsItself struct {
	*embedsItself        //nolint:unused // what the test is about: a type that embeds a pointer to itself
	Name          string `json:"name"`
}

// selfEmbedding holds a type that embeds a pointer to itself.
type selfEmbedding struct {
	metav1.TypeMeta `json:",inline"`
	List            []embedsItself `json:"list"`
	One             *embedsItself  `json:"one"`
}

func (in *selfEmbedding) DeepCopyObject() runtime.Object { c := *in; return &c }

// convertedTypes returns the struct types the differential test fills.
func convertedTypes(t *testing.T) []reflect.Type {
	t.Helper()
	seen := map[reflect.Type]bool{}
	var out []reflect.Type
	add := func(typ reflect.Type) {
		if !seen[typ] && typ.Kind() == reflect.Struct {
			if _, ok := reflect.New(typ).Interface().(runtime.Object); ok {
				seen[typ] = true
				out = append(out, typ)
			}
		}
	}
	for _, typ := range clientgoscheme.Scheme.AllKnownTypes() {
		add(typ)
	}
	for _, obj := range []runtime.Object{
		&apiextensionsv1.CustomResourceDefinition{}, &apiextensionsv1.ConversionReview{},
		&tagCases{}, &inlinePointer{}, &withInterface{}, &withIntKeys{}, &recursive{}, &withIntOrString{},
	} {
		add(reflect.TypeOf(obj).Elem())
	}
	if len(out) < 300 {
		t.Fatalf("only %d types: client-go's scheme is not what this test expects", len(out))
	}
	return out
}

// filler returns a randfill.Filler of seed that fills the types randfill cannot (an interface
// holds one of a few JSON-like values) and gives quantities a parseable value.
func filler(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.25).NumElements(0, 3).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = resource.MustParse(fmt.Sprintf("%d%s", c.Intn(5000), []string{"", "m", "Mi", "Gi", "k"}[c.Intn(5)]))
		},
		func(v *any, c randfill.Continue) {
			switch c.Intn(6) {
			case 0:
				*v = nil
			case 1:
				*v = c.String(8)
			case 2:
				*v = map[string]any{"a": int64(c.Intn(9)), "b": []any{true, "x"}}
			case 3:
				*v = &corev1.ObjectReference{Name: c.String(5)}
			case 4:
				*v = intstr.FromInt32(c.Int31())
			default:
				*v = map[int]string{c.Intn(9): "k"}
			}
		},
		func(o *runtime.Object, c randfill.Continue) {
			if c.Bool() {
				*o = &corev1.ConfigMap{Data: map[string]string{"k": c.String(4)}}
			}
		},
		func(e *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				e.Raw = []byte(fmt.Sprintf(`{"n":%d}`, c.Intn(100)))
			}
		},
		func(is *intstr.IntOrString, c randfill.Continue) {
			switch c.Intn(3) {
			case 0:
				*is = intstr.FromInt32(c.Int31())
			case 1:
				*is = intstr.FromString(c.String(6))
			default:
				c.FillNoCustom(is) // mostly neither type
			}
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			j.Raw = []byte(strconv.Itoa(c.Intn(100)))
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			// Mostly field sets, which convert without encoding/json; now and then a number
			// in one, JSON of another kind, or bytes that are not JSON, which convert upstream.
			// (One that does not convert fails the whole object, so they are rare.)
			switch c.Intn(40) {
			case 0:
				c.FillNoCustom(f)
			case 1, 2, 3:
				f.SetRawBytes([]byte([]string{`null`, `[{"f:a":{}}]`, `"f:a"`, `{"f:a":{}} x`, `{"f:a":1}`, `{"k:{\"port\":80}":{"f:x":[1.5]}}`, ` {}`}[c.Intn(7)]))
			default:
				f.SetRawBytes([]byte(fieldSet(c, 3)))
			}
		},
	)
}

// fieldSet returns a random field set in managedFields' JSON, depth levels deep at most, with
// keys of every kind ("f:", "k:" with escaped JSON, "v:", "i:", ".") and strings beyond ASCII.
func fieldSet(c randfill.Continue, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range c.Intn(4) {
		if i > 0 {
			b.WriteByte(',')
		}
		key := []string{`"f:spec"`, `"."`, `"k:{\"name\":\"web\",\"port\":8080}"`, `"v:\"x\""`, `"i:0"`, `"f:é"`, `"f:\u00e9\n"`}[c.Intn(7)]
		b.WriteString(key + ":")
		if depth > 0 && c.Intn(2) == 0 {
			b.WriteString(fieldSet(c, depth-1))
		} else {
			b.WriteString("{}")
		}
	}
	b.WriteByte('}')
	return b.String()
}

// tagCases holds the JSON tags' cases: omitempty and omitzero on every kind, fields without a
// tag or a name, skipped fields, a field named "-" by its tag's name, unsigned numbers (large
// ones fail), bytes, and scalar kinds of types that convert themselves, which a struct's field
// writes as their value but a list or map converts.
type tagCases struct {
	metav1.TypeMeta `json:",inline"`
	Meta            metav1.ObjectMeta `json:"metadata"`

	Plain       string
	Unnamed     string                        `json:",omitempty"`
	Skipped     string                        `json:"-"`
	Dash        string                        `json:"-,"` //nolint:staticcheck // upstream leaves it out, as it does "-"
	OmitEmpty   *int32                        `json:"omitEmpty,omitempty"`
	OmitZero    metav1.Time                   `json:"omitZero,omitzero"`
	ZeroStruct  corev1.PodSpec                `json:"zeroStruct,omitzero"`
	Empties     []string                      `json:"empties,omitempty"`
	Nil         map[string]bool               `json:"nil"`
	Unsigned    uint64                        `json:"unsigned"`
	Small       uint8                         `json:"small,omitempty"`
	Float       float32                       `json:"float"`
	Bytes       []byte                        `json:"bytes"`
	NamedBytes  []namedByte                   `json:"namedBytes"`
	Marshaled   marshaledString               `json:"marshaled"`
	MarshaledIn []marshaledString             `json:"marshaledIn"`
	MarshaledBy map[string]marshaledString    `json:"marshaledBy"`
	TimePtr     *metav1.Time                  `json:"timePtr"`
	Times       []metav1.Time                 `json:"times"`
	Quantities  map[string]*resource.Quantity `json:"quantities"`
	unexported  string                        //nolint:unused // upstream converts an unexported field too
}

type namedByte uint8

// marshaledString converts itself, but a struct's field of it is its string.
type marshaledString string

func (m marshaledString) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote("marshaled:" + string(m))), nil
}

func (in *tagCases) DeepCopyObject() runtime.Object { c := *in; return &c }

// inlinePointer inlines a pointer to a struct, and embeds a struct without a tag.
type inlinePointer struct {
	*metav1.TypeMeta `json:",inline"`
	corev1.ObjectReference
	Spec *appsv1.DeploymentSpec `json:"spec,omitempty"`
}

func (in *inlinePointer) DeepCopyObject() runtime.Object { c := *in; return &c }

func (in *inlinePointer) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// withInterface holds values of any type, some of which the upstream converter refuses.
type withInterface struct {
	metav1.TypeMeta `json:",inline"`
	Any             any            `json:"any"`
	Anys            []any          `json:"anys"`
	ByName          map[string]any `json:"byName,omitempty"`
}

func (in *withInterface) DeepCopyObject() runtime.Object { c := *in; return &c }

// withIntKeys has a map the upstream converter refuses: its keys are not strings.
type withIntKeys struct {
	metav1.TypeMeta `json:",inline"`
	ByNumber        map[int]string `json:"byNumber"`
}

func (in *withIntKeys) DeepCopyObject() runtime.Object { c := *in; return &c }

// recursive refers to itself.
type recursive struct {
	metav1.TypeMeta `json:",inline"`
	Name            string               `json:"name"`
	Next            *recursive           `json:"next,omitempty"`
	Children        []recursive          `json:"children"`
	ByName          map[string]recursive `json:"byName"`
}

func (in *recursive) DeepCopyObject() runtime.Object { c := *in; return &c }

// BenchmarkToMap converts a StatefulSet of the shape an operator applies (a pod template with
// a container, ports, probes and resources) with ToMap and with the upstream converter.
func BenchmarkToMap(b *testing.B) {
	replicas := int32(3)
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", Labels: map[string]string{"app": "db", "tier": "data"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "registry.example.com/db:1.2.3", Args: []string{"--port=5432", "--data=/var/lib/db"},
					Ports:        []corev1.ContainerPort{{Name: "db", ContainerPort: 5432, Protocol: corev1.ProtocolTCP}},
					Env:          []corev1.EnvVar{{Name: "MODE", Value: "primary"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/db"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}}},
				}}},
			},
		},
	}
	for _, c := range []struct {
		name    string
		convert func(runtime.Object) (map[string]any, error)
	}{
		{"tenon", objects.ToMap},
		{"upstream", func(o runtime.Object) (map[string]any, error) {
			return runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.convert(sts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
