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

package jsontext_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tenon-dev/tenon/internal/jsontext"
)

var (
	encodeSeed  = flag.Uint64("encode.seed", 0, "the seed of TestMarshalWritesWhatEncodingJSONWrites's random values (0: a fresh one)")
	encodeCases = flag.Int("encode.cases", 20000, "how many random values TestMarshalWritesWhatEncodingJSONWrites encodes")
)

// same fails t unless Marshal writes v as encoding/json does, or both fail.
func same(t *testing.T, v any, replay string) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := jsontext.Marshal(v)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) && wantErr == nil {
		t.Fatalf("Marshal(%#v) = %s, %v; encoding/json: %s, %v%s", v, got, err, want, wantErr, replay)
	}
}

// TestMarshalWritesWhatEncodingJSONWrites encodes random JSON values, with strings of every kind
// of character (HTML's, control characters, U+2028, bytes that are not UTF-8), numbers of every
// Go type the unstructured form holds and of random bits, and a few types JSON has no place
// for, with both encoders.
func TestMarshalWritesWhatEncodingJSONWrites(t *testing.T) {
	seed := *encodeSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range *encodeCases {
		same(t, randomJSON(r, 4), fmt.Sprintf("; replay: -encode.seed=%d (value %d)", seed, i))
	}
}

// characters are what random strings are made of.
var characters = []string{"a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
	"é", "\u2028", "\u2029", "😀", "\xff", "\xc3", "\xed\xa0\x80", "\ufffd", "k:{\"name\":\"a\"}"}

func randomString(r *rand.Rand) string {
	var b []byte
	for range r.IntN(6) {
		b = append(b, characters[r.IntN(len(characters))]...)
	}
	return string(b)
}

// randomJSON returns a random value of what request bodies hold, depth levels deep at most.
func randomJSON(r *rand.Rand, depth int) any {
	kind := r.IntN(14)
	if depth == 0 {
		kind = r.IntN(10)
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.Uint64())
	case 3:
		return []any{int(r.Int64()), int32(r.Int32()), uint8(r.Uint32()), uint64(r.Uint64()), json.Number("12.50")}[r.IntN(5)]
	case 4:
		return math.Float64frombits(r.Uint64())
	case 5:
		return []float64{0, math.Copysign(0, -1), 1e-7, 1e-6, 9.999e20, 1e21, 1e-9, 1.5e-300, 123456789, 0.1, math.Inf(1), math.NaN()}[r.IntN(12)]
	case 6:
		return math.Float32frombits(r.Uint32())
	case 7, 8:
		return randomString(r)
	case 9:
		return []any{map[string]any(nil), []any(nil), map[string]string{"b": "<", "a": "x"}, []string{"y"}, struct {
			A string `json:"a"`
		}{"&"}}[r.IntN(5)]
	case 10, 11:
		m := map[string]any{}
		for range r.IntN(20) {
			m[randomString(r)] = randomJSON(r, depth-1)
		}
		return m
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomJSON(r, depth-1)
		}
		return l
	}
}

// TestMarshalReportsACycleAndWritesDeepValues: a value that holds itself is an error, as
// encoding/json reports it, not a stack overflow; a deep one that does not is written whole.
func TestMarshalReportsACycleAndWritesDeepValues(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	l := []any{nil}
	l[0] = l
	for _, v := range []any{m, l, map[string]any{"a": []any{m}}} {
		if _, err := jsontext.Marshal(v); err == nil {
			t.Fatalf("Marshal of a value that holds itself: no error")
		}
	}
	deep := any("leaf")
	for i := range 2500 {
		if i%2 == 0 {
			deep = map[string]any{"k": deep}
		} else {
			deep = []any{deep, "x"}
		}
	}
	same(t, deep, "")
}

// FuzzMarshal compares Marshal with encoding/json on strings and numbers the fuzzer makes.
func FuzzMarshal(f *testing.F) {
	for _, c := range characters {
		f.Add(c, 1.5, int64(-3))
	}
	f.Fuzz(func(t *testing.T, s string, x float64, i int64) {
		same(t, map[string]any{s: []any{s, x, i, float32(x)}, "k": map[string]any{s: nil}}, "")
	})
}

func BenchmarkMarshal(b *testing.B) {
	var body map[string]any
	if err := json.Unmarshal([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"c-17","labels":{"app.kubernetes.io/name":"web","app.kubernetes.io/managed-by":"tenon"},"ownerReferences":[{"apiVersion":"example.com/v1alpha1","kind":"Cluster","name":"c-17","uid":"0b7f4e4c-3f1d-4d3e-9a43-1f0e6c2d5a10","controller":true,"blockOwnerDeletion":true}]},"spec":{"replicas":3,"selector":{"matchLabels":{"app.kubernetes.io/name":"web"}},"template":{"metadata":{"labels":{"app.kubernetes.io/name":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":8080,"name":"http","protocol":"TCP"}],"resources":{"limits":{"memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}}`), &body); err != nil {
		b.Fatal(err)
	}
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsontext.Marshal(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
