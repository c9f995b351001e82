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

package threeway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// FuzzMergeAndDiff checks the three-way merge and the JSON Patch computed from it. From a random
// object (before), the controller's random changes (after) and other writers' random changes to
// other fields (latest), it computes the requests Patch would send to latest and applies them:
//
//   - they apply (their guards hold against the object they were computed for);
//   - the result is the merge: the patch carries exactly the computed changes;
//   - every field the controller changed has the controller's value;
//   - every field the others changed has theirs;
//   - with no other writer (latest = before) the result is after.
func FuzzMergeAndDiff(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed, seed*7919+1)
	}
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64) {
		r := rand.New(rand.NewPCG(seed1, seed2))
		before := randomObject(r)
		after := jsonvalue.DeepCopyMap(before)
		mutate(r, after, "c")
		latest := jsonvalue.DeepCopyMap(before)
		mutate(r, latest, "o")
		latest["metadata"].(map[string]any)["resourceVersion"] = "2"

		var opts Merger
		for _, ty := range []conditions.Type{"C1", "C2", "C3"} {
			if r.IntN(2) == 0 {
				opts.Owned = append(opts.Owned, ty)
			}
		}

		got := patchOnto(t, before, after, latest, opts)
		checkOwnership(t, before, after, latest, got)

		got = patchOnto(t, before, after, before, opts)
		if diff := cmp.Diff(writtenParts(after), writtenParts(got)); diff != "" {
			t.Fatalf("applying the patch to before does not give after (-want +got):\n%s", diff)
		}
	})
}

// patchOnto merges and diffs as Patch does, applies the requests to a copy of latest and returns it.
func patchOnto(t *testing.T, before, after, latest map[string]any, opts Merger) map[string]any {
	t.Helper()
	m := &Merger{Owned: opts.Owned}
	d := &Differ{Exact: true, Guarded: OwnedGuard(opts.Owned)}
	result := m.MergeMain(before, after, latest, false)
	main := d.DiffMain(latest, result, false)
	result = m.MergeStatus(before, after, result)
	status := d.DiffStatus(latest, result)
	if len(m.Conflicts) > 0 {
		t.Fatalf("merge: conflicts %v between writers of different fields", m.Conflicts)
	}
	doc := jsonvalue.DeepCopyMap(latest)
	for _, req := range []Request{main, status} {
		var err error
		if doc, err = applyJSONPatch(doc, req.Finish(latest, false)); err != nil {
			t.Fatalf("the patch does not apply to the object it was computed for: %v\nops: %+v", err, req.Ops)
		}
	}
	if diff := cmp.Diff(writtenParts(result), writtenParts(doc)); diff != "" {
		t.Fatalf("the patch does not produce the merge (-merge +patched):\n%s", diff)
	}
	return doc
}

// rfc6902 returns ops as structs encoding/json writes as RFC 6902 says.
func rfc6902(ops []Op) []any {
	out := make([]any, len(ops))
	for i, o := range ops {
		if o.Kind == "remove" {
			out[i] = struct {
				Op   string `json:"op"`
				Path string `json:"path"`
			}{o.Kind, o.Path}
			continue
		}
		out[i] = struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}{o.Kind, o.Path, o.Value}
	}
	return out
}

// applyJSONPatch applies ops to doc as the API server does, after checking that Marshal writes
// them as encoding/json does.
func applyJSONPatch(doc map[string]any, ops []Op) (map[string]any, error) {
	d, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	p, err := Marshal(ops)
	if err != nil {
		return nil, err
	}
	if want, err := json.Marshal(rfc6902(ops)); err != nil || !bytes.Equal(p, want) {
		return nil, fmt.Errorf("Marshal writes %s, encoding/json %s (%w)", p, want, err)
	}
	decoded, err := jsonpatch.DecodePatch(p)
	if err != nil {
		return nil, err
	}
	if d, err = decoded.Apply(d); err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(d, &out)
	return out, err
}

// writtenParts returns the parts of an object the helper writes, with conditions decoded so that
// equal conditions compare equal whatever their JSON form, in the order of their types and
// without LastTransitionTime, which the merge takes from latest when the status did not change.
func writtenParts(obj map[string]any) map[string]any {
	var out map[string]any
	data, _ := json.Marshal(obj)
	_ = json.Unmarshal(data, &out) // numbers as the server's answer has them
	n, _ := normalised(out)
	out, _ = n.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	delete(out, "apiVersion")
	delete(out, "kind")
	if m, ok := out["metadata"].(map[string]any); ok {
		delete(m, "resourceVersion")
	}
	if s, ok := out["status"].(map[string]any); ok {
		if raw, ok := s["conditions"]; ok {
			cs, _ := parseConditions(raw)
			slices.SortFunc(cs, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
			for i := range cs {
				cs[i].LastTransitionTime = metav1.Time{}
			}
			s["conditions"] = fmt.Sprintf("%+v", cs)
		}
	}
	return out
}

// checkOwnership checks that got has after's value for everything with the controller's prefix
// "c" and latest's for everything with the others' prefix "o".
func checkOwnership(t *testing.T, before, after, latest, got map[string]any) {
	t.Helper()
	owner := func(key string) map[string]any {
		if strings.HasPrefix(strings.ToLower(key), "c") {
			return after
		}
		return latest
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}, {"spec"}, {"status"}} {
		g := jsonvalue.NestedMap(got, path...)
		for _, k := range jsonvalue.SortedKeys(jsonvalue.NestedMap(before, path...), jsonvalue.NestedMap(after, path...), jsonvalue.NestedMap(latest, path...), g) {
			if k == "conditions" {
				continue
			}
			wv, wok := normalised(jsonvalue.NestedMap(owner(k), path...)[k])
			gv, gok := normalised(g[k])
			if wok != gok || (wok && !jsonvalue.Equal(wv, gv)) {
				t.Fatalf("%v.%s is %v (present %v), want %v (present %v)", path, k, gv, gok, wv, wok)
			}
		}
	}

	// Finalizers: the controller's additions and removals on top of latest's list, each once
	// (in after's order when latest did not change the list, in latest's otherwise).
	bf, af := jsonvalue.StringList(metadata(before, "finalizers")), jsonvalue.StringList(metadata(after, "finalizers"))
	var want []string
	for _, f := range jsonvalue.StringList(metadata(latest, "finalizers")) {
		if !slices.Contains(bf, f) || slices.Contains(af, f) {
			want = append(want, f)
		}
	}
	for _, f := range af {
		if !slices.Contains(bf, f) && !slices.Contains(want, f) {
			want = append(want, f)
		}
	}
	g := jsonvalue.StringList(metadata(got, "finalizers"))
	slices.Sort(g)
	slices.Sort(want)
	if !slices.Equal(g, want) {
		t.Fatalf("finalizers %v, want %v (before %v, after %v, latest %v)", g, want, bf, af, metadata(latest, "finalizers"))
	}

	// Owner references: each as its writer left it, none lost, none resurrected.
	gotRefs := jsonvalue.List(metadata(got, "ownerReferences"))
	for _, uid := range []string{"c-uid-0", "c-uid-1", "c-uid-2", "c-uid-3", "o-uid-0", "o-uid-1", "o-uid-2", "o-uid-3"} {
		src := jsonvalue.List(metadata(owner(uid), "ownerReferences"))
		i, j := indexByUID(src, uid), indexByUID(gotRefs, uid)
		if (i < 0) != (j < 0) || (i >= 0 && !jsonvalue.Equal(src[i], gotRefs[j])) {
			t.Fatalf("owner reference %s is %v, want %v", uid, gotRefs, src)
		}
	}

	// Conditions: the controller's types as in after (LastTransitionTime aside), the others' as
	// in latest.
	gc, _ := parseConditions(statusConditions(got))
	for _, ty := range []string{"C1", "C2", "C3", "O1", "O2", "O3"} {
		src, _ := parseConditions(statusConditions(owner(ty)))
		w, g := find(src, ty), find(gc, ty)
		if (w == nil) != (g == nil) || (w != nil && (w.Status != g.Status || w.Reason != g.Reason || w.Message != g.Message || w.ObservedGeneration != g.ObservedGeneration)) {
			t.Fatalf("condition %s is %+v, want %+v", ty, g, w)
		}
		if ty[0] == 'O' && w != nil && !w.LastTransitionTime.Equal(&g.LastTransitionTime) {
			t.Fatalf("the others' condition %s changed its time", ty)
		}
	}
}

// normalised returns v as the API server would store it, and whether it is there: no null
// values, and no empty objects or lists, which the helper treats as missing ones.
func normalised(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case []any:
		return x, len(x) > 0
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if n, ok := normalised(e); ok {
				out[k] = n
			}
		}
		return out, len(out) > 0
	}
	return v, true
}

func metadata(m map[string]any, field string) any {
	v, _ := jsonvalue.Nested(m, "metadata", field)
	return v
}

func statusConditions(m map[string]any) any {
	v, _ := jsonvalue.Nested(m, "status", "conditions")
	return v
}

func find(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// randomObject returns a random object with fields of both prefixes.
func randomObject(r *rand.Rand) map[string]any {
	obj := map[string]any{
		"apiVersion": "test.tenon.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "1"},
	}
	for _, p := range []string{"c", "o"} {
		mutate(r, obj, p)
	}
	return obj
}

// mutate makes random changes to the fields of obj with prefix p ("c" for the controller, "o" for
// the others): labels, annotations, finalizers, owner references, spec, status fields and
// conditions.
func mutate(r *rand.Rand, obj map[string]any, p string) {
	meta, _ := childMap(obj, "metadata")
	for _, field := range []string{"labels", "annotations"} {
		if r.IntN(3) == 0 {
			continue
		}
		m, _ := childMap(meta, field)
		mutateMap(r, m, p, func() any { return randomString(r) })
		if len(m) == 0 && r.IntN(2) == 0 {
			delete(meta, field)
		}
	}
	if r.IntN(2) == 0 {
		fs := jsonvalue.List(meta["finalizers"])
		fs = slices.DeleteFunc(slices.Clone(fs), func(f any) bool {
			s, _ := f.(string)
			return strings.HasPrefix(s, p) && r.IntN(2) == 0
		})
		for range r.IntN(3) {
			f := fmt.Sprintf("%s.example.com/f%d", p, r.IntN(4))
			if !slices.Contains(fs, any(f)) {
				fs = append(fs, f)
			}
		}
		setList(meta, "finalizers", fs)
	}
	if r.IntN(2) == 0 {
		refs, _ := jsonvalue.DeepCopy(jsonvalue.List(meta["ownerReferences"])).([]any)
		refs = slices.DeleteFunc(refs, func(ref any) bool { return strings.HasPrefix(uidOf(ref), p) && r.IntN(3) == 0 })
		for range r.IntN(3) {
			uid := fmt.Sprintf("%s-uid-%d", p, r.IntN(4))
			ref := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": randomString(r), "uid": uid}
			if i := indexByUID(refs, uid); i >= 0 {
				refs[i] = ref
			} else {
				refs = append(refs, ref)
			}
		}
		setList(meta, "ownerReferences", refs)
	}
	if r.IntN(4) > 0 {
		spec, _ := childMap(obj, "spec")
		mutateMap(r, spec, p, func() any { return randomValue(r, 3) })
	}
	if r.IntN(4) > 0 {
		status, _ := childMap(obj, "status")
		mutateMap(r, status, p, func() any { return randomValue(r, 2) })
		if r.IntN(3) > 0 {
			mutateConditions(r, status, strings.ToUpper(p))
		}
		if len(status) == 0 {
			delete(obj, "status")
		}
	}
}

// mutateMap adds, changes and removes keys with prefix p.
func mutateMap(r *rand.Rand, m map[string]any, p string, value func() any) {
	for range 1 + r.IntN(4) {
		k := fmt.Sprintf("%s%d", p, r.IntN(5))
		switch r.IntN(4) {
		case 0:
			delete(m, k)
		case 1:
			if sub, ok := m[k].(map[string]any); ok {
				mutateMap(r, sub, p, value)
				continue
			}
			m[k] = value()
		default:
			m[k] = value()
		}
	}
}

// mutateConditions sets and removes conditions of types with prefix p ("C" or "O").
func mutateConditions(r *rand.Rand, status map[string]any, p string) {
	cs, _ := parseConditions(status["conditions"])
	for range 1 + r.IntN(3) {
		ty := fmt.Sprintf("%s%d", p, 1+r.IntN(3))
		i := slices.IndexFunc(cs, func(c metav1.Condition) bool { return c.Type == ty })
		if r.IntN(4) == 0 {
			if i >= 0 {
				cs = slices.Delete(cs, i, i+1)
			}
			continue
		}
		c := metav1.Condition{
			Type:               ty,
			Status:             []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}[r.IntN(3)],
			Reason:             []string{"A", "B"}[r.IntN(2)],
			Message:            []string{"", "m", "a/b~c"}[r.IntN(3)],
			ObservedGeneration: int64(r.IntN(3)),
			LastTransitionTime: metav1.Unix(int64(1_700_000_000+r.IntN(3)), 0),
		}
		if i >= 0 {
			cs[i] = c
		} else {
			// Others insert anywhere, as writers with another order would.
			at := r.IntN(len(cs) + 1)
			cs = slices.Insert(cs, at, c)
		}
	}
	if len(cs) == 0 {
		delete(status, "conditions")
		return
	}
	raw := make([]any, len(cs))
	for i := range cs {
		raw[i] = map[string]any{
			"type": cs[i].Type, "status": string(cs[i].Status), "reason": cs[i].Reason, "message": cs[i].Message,
			"lastTransitionTime": cs[i].LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z"),
		}
		if cs[i].ObservedGeneration != 0 {
			raw[i].(map[string]any)["observedGeneration"] = cs[i].ObservedGeneration
		}
	}
	status["conditions"] = raw
}

func randomString(r *rand.Rand) string {
	return []string{"", "a", "b", "x/y", "~0", "long value"}[r.IntN(6)]
}

// randomValue returns a random JSON value: scalars, lists and objects nested up to depth.
func randomValue(r *rand.Rand, depth int) any {
	n := 6
	if depth == 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return randomString(r)
	case 1:
		return int64(r.IntN(3))
	case 2:
		return r.IntN(2) == 0
	case 3:
		return nil
	case 4:
		l := make([]any, r.IntN(3))
		for i := range l {
			for l[i] == nil { // the API server stores no null elements
				l[i] = randomValue(r, depth-1)
			}
		}
		return l
	}
	m := map[string]any{}
	for range r.IntN(3) {
		m[randomString(r)] = randomValue(r, depth-1)
	}
	return m
}

// parseConditions reads raw, a status.conditions value, as metav1.Conditions, for the checks of
// this file; a missing value is an empty list.
func parseConditions(raw any) ([]metav1.Condition, bool) {
	l, ok := raw.([]any)
	if !ok {
		return nil, raw == nil
	}
	out := make([]metav1.Condition, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out[i]) != nil {
			return nil, false
		}
	}
	return out, true
}
