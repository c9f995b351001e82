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

package jsonvalue_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

var canonicalSeed = flag.Uint64("canonical.seed", 0, "the seed of TestAppendCanonicalIsEqual's random values (0: a fresh one)")

func canonical(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonvalue.AppendCanonical(nil, v)
	if err != nil {
		t.Fatalf("AppendCanonical(%#v): %v", v, err)
	}
	return b
}

// TestAppendCanonicalSeparatesWhatRunsTogether pins the values whose plain concatenation would
// be the same bytes: the length prefixes keep them apart.
func TestAppendCanonicalSeparatesWhatRunsTogether(t *testing.T) {
	for _, pair := range [][2]any{
		{map[string]any{"a": "bc"}, map[string]any{"ab": "c"}},
		{[]any{"ab", "c"}, []any{"a", "bc"}},
		{[]any{[]any{"a"}, "b"}, []any{[]any{"a", "b"}}},
		{map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": map[string]any{}, "b": "c"}},
		{"", nil},
		{map[string]any{}, []any{}},
		{int64(1), "1"},
		{true, "t"},
		{0.5, int64(0)},
		{float32(0.1), float64(float32(0.1))}, // sent as 0.1 and as 0.10000000149011612
		{json.Number("0.10000000149011612"), float32(0.1)},
	} {
		if bytes.Equal(canonical(t, pair[0]), canonical(t, pair[1])) {
			t.Errorf("%#v and %#v have the same encoding", pair[0], pair[1])
		}
	}
}

// TestAppendCanonicalReportsWhatItCannotEncode: a value encoding/json refuses is an error that
// names its type, not a hash of nothing.
func TestAppendCanonicalReportsWhatItCannotEncode(t *testing.T) {
	_, err := jsonvalue.AppendCanonical(nil, map[string]any{"a": []any{make(chan int)}})
	if err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Fatalf("err = %v, want one that names chan int", err)
	}
}

// TestAppendCanonicalIsEqual checks on random JSON values that two values have the same
// encoding exactly when jsonvalue.Equal finds them equal: a value and a copy with its numbers
// of other Go types (as a typed object's conversion and a decoded body hold them) encode the
// same; a copy with one change encodes differently.
func TestAppendCanonicalIsEqual(t *testing.T) {
	seed := *canonicalSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range 2000 {
		v := randomValue(r, 4)
		retyped := retype(r, v)
		changed, what := change(r, v)
		if !bytes.Equal(canonical(t, v), canonical(t, retyped)) {
			t.Fatalf("seed %d, value %d: %s and %s, the same value with numbers of other types, encode differently (replay: -canonical.seed=%d)", seed, i, show(v), show(retyped), seed)
		}
		if jsonvalue.Equal(v, changed) {
			continue // the change made the same value (a number of another type)
		}
		if bytes.Equal(canonical(t, v), canonical(t, changed)) {
			t.Fatalf("seed %d, value %d: %s and %s (%s) encode the same (replay: -canonical.seed=%d)", seed, i, show(v), show(changed), what, seed)
		}
	}
}

func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(data)
}

// randomValue returns a random JSON value, with keys and strings from a small alphabet so that
// values collide often.
func randomValue(r *rand.Rand, depth int) any {
	kind := r.IntN(8)
	if depth == 0 {
		kind = r.IntN(5)
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return int64(r.IntN(5) - 2)
	case 3:
		return []float64{0, 0.5, 1.5, 0.1, 0.3, 1e-7, 3.4e38, float64(float32(0.1))}[r.IntN(8)]
	case 4:
		return []string{"", "a", "b", "ab"}[r.IntN(4)]
	case 5, 6:
		m := map[string]any{}
		for range r.IntN(4) {
			m[[]string{"", "a", "b", "ab"}[r.IntN(4)]] = randomValue(r, depth-1)
		}
		return m
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	}
}

// retype returns a copy of v with each number of another Go type that holds the same value.
func retype(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = retype(r, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = retype(r, e)
		}
		return out
	case int64:
		return []any{x, float64(x), int(x), int32(x), json.Number(fmt.Sprint(x))}[r.IntN(5)]
	case float64:
		if x == float64(int64(x)) {
			return []any{x, int64(x), json.Number(fmt.Sprint(int64(x)))}[r.IntN(3)]
		}
		// A float32 is sent as the shortest decimal that reads back as it: the same number only
		// where that decimal is x.
		same := []any{x, json.Number(strconv.FormatFloat(x, 'g', -1, 64))}
		if f32 := float32(x); strconv.FormatFloat(float64(f32), 'g', -1, 32) == strconv.FormatFloat(x, 'g', -1, 64) {
			same = append(same, f32)
		}
		return same[r.IntN(len(same))]
	}
	return v
}

// change returns a copy of v with one random change, and what it was.
func change(r *rand.Rand, v any) (any, string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && r.IntN(3) > 0 {
			keys := jsonvalue.SortedKeys(x)
			k := keys[r.IntN(len(keys))]
			out := jsonvalue.DeepCopyMap(x)
			if r.IntN(4) == 0 {
				delete(out, k)
				return out, "removed " + k
			}
			e, what := change(r, x[k])
			out[k] = e
			return out, k + ": " + what
		}
		out := jsonvalue.DeepCopyMap(x)
		k := fmt.Sprint("new", r.IntN(3))
		out[k] = randomValue(r, 1)
		return out, "added " + k
	case []any:
		if len(x) > 0 && r.IntN(3) > 0 {
			out := jsonvalue.DeepCopy(x).([]any)
			i := r.IntN(len(x))
			if r.IntN(4) == 0 {
				return append(out[:i], out[i+1:]...), fmt.Sprint("removed ", i)
			}
			e, what := change(r, x[i])
			out[i] = e
			return out, fmt.Sprint(i, ": ", what)
		}
		return append(jsonvalue.DeepCopy(x).([]any), randomValue(r, 1)), "appended"
	}
	return randomValue(r, 2), "replaced"
}
