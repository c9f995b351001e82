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
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/jsontext"
)

var (
	decodeSeed  = flag.Uint64("decode.seed", 0, "the seed of TestDecodeAgreesWithEncodingJSON's random texts (0: a fresh one)")
	decodeCases = flag.Int("decode.cases", 20000, "how many random texts TestDecodeAgreesWithEncodingJSON decodes")
)

// agree fails t unless Decode and DecodeObject read text as encoding/json's Unmarshal into an
// any and into a map[string]any do: the same value, or an error from both.
func agree(t *testing.T, text string, replay string) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal([]byte(text), &want)
	for form, decode := range map[string]func() (any, error){
		"string": func() (any, error) { return jsontext.Decode(text) },
		"[]byte": func() (any, error) { return jsontext.Decode([]byte(text)) },
	} {
		got, err := decode()
		if (err != nil) != (wantErr != nil) || wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%s %q) = %#v, %v; encoding/json: %#v, %v%s", form, text, got, err, want, wantErr, replay)
		}
	}
	var wantObject map[string]any
	wantObjectErr := json.Unmarshal([]byte(text), &wantObject)
	gotObject, gotObjectErr := jsontext.DecodeObject(text)
	if (gotObjectErr != nil) != (wantObjectErr != nil) || wantObjectErr == nil && !reflect.DeepEqual(gotObject, wantObject) {
		t.Fatalf("DecodeObject(%q) = %#v, %v; encoding/json: %#v, %v%s", text, gotObject, gotObjectErr, wantObject, wantObjectErr, replay)
	}
}

// TestDecodeAgreesWithEncodingJSON decodes random texts, most of them JSON as managedFields and
// real objects write it and the rest broken by a random edit, with both decoders.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	seed := *decodeSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range *decodeCases {
		var b strings.Builder
		randomText(r, &b, 4)
		text := b.String()
		if r.IntN(3) == 0 {
			text = breakText(r, text)
		}
		agree(t, text, fmt.Sprintf("; replay: -decode.seed=%d (text %d)", seed, i))
	}
}

// fragments are what random texts are made of: field set keys, strings with escapes, bytes
// beyond ASCII, invalid UTF-8 and control characters, and numbers in and out of JSON's grammar
// and float64's range.
var (
	keys = []string{`"f:metadata"`, `"f:spec"`, `"."`, `"k:{\"name\":\"a\"}"`, `"v:\"x\""`, `"i:0"`, `""`, `"a"`, `"é"`,
		`"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\uDFFF x"`, "\"\xff\"", "\"\x01\"", `"\/\b\f\n\r\t\\"`, `"\x"`, `"\u12"`, "\"\x7f\""}
	numbers = []string{"0", "-0", "1", "-1", "12.5", "1e3", "1E+3", "1e-3", "0.1", "1e400", "-1e400", "1e-400",
		"01", "1.", ".5", "+1", "-", "1e", "123456789012345678901234567890", "9007199254740993", "2.5e-324"}
	spaces = []string{"", "", "", " ", "\n", "\t", "\r\n  ", "\v", "\u00a0"}
)

// randomText writes a random JSON value to b, depth levels deep at most.
func randomText(r *rand.Rand, b *strings.Builder, depth int) {
	b.WriteString(spaces[r.IntN(len(spaces))])
	kind := r.IntN(9)
	if depth == 0 {
		kind = r.IntN(6)
	}
	switch kind {
	case 0:
		b.WriteString([]string{"null", "true", "false", "nul", "True"}[r.IntN(5)])
	case 1, 2:
		b.WriteString(numbers[r.IntN(len(numbers))])
	case 3, 4, 5:
		b.WriteString(keys[r.IntN(len(keys))])
	case 6, 7:
		b.WriteByte('{')
		for j := range r.IntN(4) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(spaces[r.IntN(len(spaces))])
			b.WriteString(keys[r.IntN(len(keys))])
			b.WriteString(spaces[r.IntN(len(spaces))])
			b.WriteByte(':')
			randomText(r, b, depth-1)
		}
		b.WriteString(spaces[r.IntN(len(spaces))])
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for j := range r.IntN(4) {
			if j > 0 {
				b.WriteByte(',')
			}
			randomText(r, b, depth-1)
		}
		b.WriteString(spaces[r.IntN(len(spaces))])
		b.WriteByte(']')
	}
	b.WriteString(spaces[r.IntN(len(spaces))])
}

// breakText deletes, inserts or changes a byte of text, or cuts it short.
func breakText(r *rand.Rand, text string) string {
	if text == "" {
		return "{"
	}
	at := r.IntN(len(text))
	insert := string("{}[]:,\"\\0-eE. x\x00"[r.IntN(16)])
	switch r.IntN(4) {
	case 0:
		return text[:at] + text[at+1:]
	case 1:
		return text[:at] + insert + text[at:]
	case 2:
		return text[:at] + insert + text[at+1:]
	}
	return text[:at]
}

// TestDecodeStopsWhereEncodingJSONDoes pins the nesting limit and what a field set holds.
func TestDecodeStopsWhereEncodingJSONDoes(t *testing.T) {
	for _, depth := range []int{9999, 10000, 10001} {
		agree(t, strings.Repeat("[", depth)+strings.Repeat("]", depth), "")
		agree(t, strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth), "")
	}
	for _, text := range []string{
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:ownerReferences":{"k:{\"uid\":\"1f2e\"}":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}}}`,
		`null`, ` {} `, `{} {}`, `[]`, `"x"`, ``, ` `, `{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`,
	} {
		agree(t, text, "")
	}
}

// FuzzDecode compares Decode with encoding/json on whatever the fuzzer makes.
func FuzzDecode(f *testing.F) {
	for _, k := range append(append([]string{`{"f:spec":{".":{},"f:replicas":{}}}`, `[1,"a",null,true]`}, keys...), numbers...) {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, text string) {
		agree(t, text, "")
	})
}

// fieldSet is a Deployment's field set as the API server records an apply of it.
const fieldSet = `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:tenon.dev/cluster":{}},"f:ownerReferences":{"k:{\"uid\":\"0b7f4e4c-3f1d-4d3e-9a43-1f0e6c2d5a10\"}":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app.kubernetes.io/name":{},"f:tenon.dev/cluster":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{}}},"f:readinessProbe":{"f:httpGet":{"f:path":{},"f:port":{}}},"f:resources":{"f:limits":{"f:memory":{}},"f:requests":{"f:cpu":{},"f:memory":{}}}}}}}}}`

func BenchmarkDecode(b *testing.B) {
	data := []byte(fieldSet)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsontext.DecodeObject(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
