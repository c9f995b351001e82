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
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenon-dev/tenon/conditions"
)

// The tests of this file pin down the shape of what the engine computes: which operations a
// request holds and which guards protect them, and what the merge keeps of each writer. The
// fuzz test checks that requests apply and produce the merge; these check that each guard is
// the one the guarantees need and no other.

// obj decodes a JSON object written in a test.
func obj(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("bad test object %s: %v", text, err)
	}
	return m
}

// opStrings renders operations as "kind path value" lines, with "(guard)" for guards.
func opStrings(ops []Op) []string {
	out := make([]string, 0, len(ops))
	for _, o := range ops {
		s := o.Kind + " " + o.Path
		if o.Kind != "remove" {
			v, _ := json.Marshal(o.Value)
			s += " " + string(v)
		}
		if o.Guard {
			s += " (guard)"
		}
		out = append(out, s)
	}
	return out
}

func expectOps(t *testing.T, got []Op, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, opStrings(got)); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
}

func expectObject(t *testing.T, got map[string]any, want string) {
	t.Helper()
	if diff := cmp.Diff(obj(t, want), got); diff != "" {
		t.Errorf("merged object (-want +got):\n%s", diff)
	}
}

const (
	ready   = `{"type": "Ready", "status": "True", "reason": "Up", "lastTransitionTime": "2026-12-01T00:00:00Z"}`
	synced  = `{"type": "Synced", "status": "True", "reason": "Synced", "lastTransitionTime": "2026-12-01T00:00:00Z"}`
	recon   = `{"type": "Reconciling", "status": "True", "reason": "Progressing", "lastTransitionTime": "2026-12-01T00:00:00Z"}`
	notUp   = `{"type": "Ready", "status": "False", "reason": "Down", "lastTransitionTime": "2026-12-02T00:00:00Z"}`
	metaUID = `"metadata": {"uid": "u1", "resourceVersion": "7"}`
)

func TestAnEmptyRequestChangesNothing(t *testing.T) {
	d := &Differ{Exact: true}
	same := obj(t, `{`+metaUID+`, "spec": {"a": 1}}`)
	if req := d.DiffMain(same, same, false); !req.Empty() {
		t.Errorf("a request between equal objects is not empty: %v", opStrings(req.Ops))
	}
	if req := d.DiffMain(same, obj(t, `{`+metaUID+`, "spec": {"a": 2}}`), false); req.Empty() {
		t.Error("a request that changes spec.a is empty")
	}
}

func TestAConditionChangedInPlaceIsGuardedByWhatItsOwnerNeeds(t *testing.T) {
	base := obj(t, `{`+metaUID+`, "status": {"conditions": [`+ready+`, `+synced+`]}}`)
	result := obj(t, `{`+metaUID+`, "status": {"conditions": [`+notUp+`, `+synced+`]}}`)

	t.Run("owned: its type, status and transition time", func(t *testing.T) {
		d := &Differ{Exact: true, Guarded: OwnedGuard([]conditions.Type{conditions.Ready})}
		expectOps(t, d.DiffStatus(base, result).Ops,
			`test /status/conditions/0/type "Ready" (guard)`,
			`test /status/conditions/0/status "True" (guard)`,
			`test /status/conditions/0/lastTransitionTime "2026-12-01T00:00:00Z" (guard)`,
			`replace /status/conditions/0 `+compact(notUp))
	})
	t.Run("another writer's: the whole condition", func(t *testing.T) {
		d := &Differ{Exact: true, Guarded: OwnedGuard(nil)}
		expectOps(t, d.DiffStatus(base, result).Ops,
			`test /status/conditions/0 `+compact(ready)+` (guard)`,
			`replace /status/conditions/0 `+compact(notUp))
	})
}

func TestAConditionDroppedIsRemovedAloneAndTheKeptOnesTypesAreTested(t *testing.T) {
	d := &Differ{Exact: true, Guarded: OwnedGuard([]conditions.Type{conditions.Ready, "Reconciling"})}
	base := obj(t, `{`+metaUID+`, "status": {"conditions": [`+ready+`, `+recon+`, `+synced+`]}}`)

	expectOps(t, d.DiffStatus(base, obj(t, `{`+metaUID+`, "status": {"conditions": [`+ready+`, `+synced+`]}}`)).Ops,
		`test /status/conditions/0/type "Ready" (guard)`,
		`test /status/conditions/2/type "Synced" (guard)`,
		`test /status/conditions/1/type "Reconciling" (guard)`,
		`remove /status/conditions/1`)
	// Dropped and changed: the change in place, the removal after it, each at base's index.
	expectOps(t, d.DiffStatus(base, obj(t, `{`+metaUID+`, "status": {"conditions": [`+notUp+`, `+synced+`]}}`)).Ops,
		`test /status/conditions/0/type "Ready" (guard)`,
		`test /status/conditions/0/status "True" (guard)`,
		`test /status/conditions/0/lastTransitionTime "2026-12-01T00:00:00Z" (guard)`,
		`replace /status/conditions/0 `+compact(notUp),
		`test /status/conditions/2/type "Synced" (guard)`,
		`test /status/conditions/1/type "Reconciling" (guard)`,
		`remove /status/conditions/1`)
}

func TestAConditionAddedOrTheLastRemovedReplacesTheListGuardedByBasesList(t *testing.T) {
	d := &Differ{Exact: true, Guarded: OwnedGuard([]conditions.Type{conditions.Ready})}
	list := `[` + ready + `]`
	base := obj(t, `{`+metaUID+`, "status": {"conditions": `+list+`, "replicas": 1}}`)

	expectOps(t, d.DiffStatus(base, obj(t, `{`+metaUID+`, "status": {"conditions": [`+ready+`, `+synced+`], "replicas": 1}}`)).Ops,
		`test /status/conditions `+compact(list)+` (guard)`,
		`add /status/conditions `+compact(`[`+ready+`, `+synced+`]`))
	expectOps(t, d.DiffStatus(base, obj(t, `{`+metaUID+`, "status": {"replicas": 1}}`)).Ops,
		`test /status/conditions `+compact(list)+` (guard)`,
		`remove /status/conditions`)
	// Types in another order: no index can be kept.
	twoBase := obj(t, `{`+metaUID+`, "status": {"conditions": [`+ready+`, `+synced+`]}}`)
	expectOps(t, d.DiffStatus(twoBase, obj(t, `{`+metaUID+`, "status": {"conditions": [`+synced+`, `+ready+`]}}`)).Ops,
		`test /status/conditions `+compact(`[`+ready+`, `+synced+`]`)+` (guard)`,
		`add /status/conditions `+compact(`[`+synced+`, `+ready+`]`))
}

func TestAStatusBaseShowsEmptyIsWrittenWholeAfterATestThatItIsStillEmpty(t *testing.T) {
	d := &Differ{Exact: true}
	expectOps(t, d.DiffStatus(obj(t, `{`+metaUID+`, "status": {}}`), obj(t, `{`+metaUID+`, "status": {"replicas": 2}}`)).Ops,
		`test /status {} (guard)`,
		`add /status {"replicas":2}`)
	expectOps(t, d.DiffStatus(obj(t, `{`+metaUID+`, "status": "odd"}`), obj(t, `{`+metaUID+`, "status": {"replicas": 2}}`)).Ops,
		`add /status {"replicas":2}`)
	expectOps(t, d.DiffStatus(obj(t, `{`+metaUID+`, "status": {"replicas": 1}}`), obj(t, `{`+metaUID+`, "status": {"replicas": 2}}`)).Ops,
		`add /status/replicas 2`)
}

func TestAnObjectWithAnEmptyKeyIsWrittenWholeUnderTheLock(t *testing.T) {
	d := &Differ{Exact: true}
	req := d.DiffMain(obj(t, `{`+metaUID+`, "spec": {"m": {"": 1, "b": 1}}}`), obj(t, `{`+metaUID+`, "spec": {"m": {"": 2, "b": 1}}}`), false)
	if !req.Lock {
		t.Error("a write under an empty key is not locked")
	}
	expectOps(t, req.Ops, `add /spec/m {"":2,"b":1}`)
	req = d.DiffMain(obj(t, `{`+metaUID+`, "spec": {"m": {"b": 1}}}`), obj(t, `{`+metaUID+`, "spec": {"m": {"b": 2}}}`), false)
	if req.Lock {
		t.Error("a write without an empty key is locked")
	}
	expectOps(t, req.Ops, `add /spec/m/b 2`)
	// An empty object that gets a member with an empty key: written whole after a test that it
	// is still empty, which needs no pointer into it.
	req = d.DiffMain(obj(t, `{`+metaUID+`, "spec": {"m": {}}}`), obj(t, `{`+metaUID+`, "spec": {"m": {"": 1}}}`), false)
	if req.Lock {
		t.Error("an empty object written whole is locked")
	}
	expectOps(t, req.Ops, `test /spec/m {} (guard)`, `add /spec/m {"":1}`)
}

func TestATypedBaseGuessesAnAddedObjectsAbsenceFromManagedFields(t *testing.T) {
	base := obj(t, `{`+metaUID+`, "spec": {"a": 1}}`)
	result := obj(t, `{`+metaUID+`, "spec": {"a": 1, "volume": {"emptyDir": {}}}}`)
	for _, tt := range []struct {
		name    string
		written func([]string) bool
		lock    bool
		ops     []string
	}{
		{"no managedFields: locked", nil, true, []string{`add /spec/volume {"emptyDir":{}}`}},
		{"written before: tested empty", func([]string) bool { return true }, false,
			[]string{`test /spec/volume {} (guard)`, `add /spec/volume {"emptyDir":{}}`}},
		{"never written: tested missing", func([]string) bool { return false }, false,
			[]string{`test /spec/volume null (guard)`, `add /spec/volume {"emptyDir":{}}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := (&Differ{Exact: false, Written: tt.written}).DiffMain(base, result, false)
			if req.Lock != tt.lock {
				t.Errorf("Lock = %v, want %v", req.Lock, tt.lock)
			}
			expectOps(t, req.Ops, tt.ops...)
		})
	}
}

func TestFinishTestsTheUIDAndLocksWithTheResourceVersion(t *testing.T) {
	d := &Differ{Exact: true}
	base := obj(t, `{`+metaUID+`, "spec": {"l": [1]}}`)
	req := d.DiffMain(base, obj(t, `{`+metaUID+`, "spec": {"l": [2]}}`), false)

	expectOps(t, req.Finish(base, false),
		`test /metadata/uid "u1"`,
		`test /spec/l [1] (guard)`,
		`add /spec/l [2]`)
	expectOps(t, req.Finish(base, true),
		`test /metadata/uid "u1"`,
		`replace /metadata/resourceVersion "7"`,
		`add /spec/l [2]`)
	noUID := obj(t, `{"metadata": {"uid": "", "resourceVersion": "7"}, "spec": {"l": [1]}}`)
	expectOps(t, req.Finish(noUID, false), `test /spec/l [1] (guard)`, `add /spec/l [2]`)
}

func TestAppliesTellsWhetherEveryTestHolds(t *testing.T) {
	doc := obj(t, `{"spec": {"a": 1, "l": [null]}}`)
	for _, tt := range []struct {
		name string
		ops  []Op
		want bool
	}{
		{"a test that holds and a write", []Op{{Kind: "test", Path: "/spec/a", Value: 1}, {Kind: "add", Path: "/spec/b", Value: 2}}, true},
		{"a test that fails", []Op{{Kind: "test", Path: "/spec/a", Value: 2}}, false},
		{"a path that is missing", []Op{{Kind: "replace", Path: "/spec/x/y", Value: 2}}, false},
		{"a list with a null element, which json-patch cannot compare", []Op{{Kind: "test", Path: "/spec/l", Value: []any{nil}}}, false},
		{"a value JSON cannot encode", []Op{{Kind: "add", Path: "/spec/b", Value: math.Inf(1)}}, false},
		{"an unknown operation", []Op{{Kind: "frobnicate", Path: "/spec/a", Value: 1}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Applies(doc, tt.ops); got != tt.want {
				t.Errorf("Applies = %v, want %v", got, tt.want)
			}
		})
	}
	if Applies(map[string]any{"bad": math.NaN()}, nil) {
		t.Error("a document JSON cannot encode applies")
	}
}

func TestTheMergeKeepsLatestsStatusWhenTheReconcileDidNotChangeIt(t *testing.T) {
	m := &Merger{}
	before := obj(t, `{"status": {"replicas": 1}}`)
	for _, latest := range []string{`{"status": "another writer's"}`, `{"status": {"replicas": 3}}`, `{}`} {
		expectObject(t, m.MergeStatus(before, before, obj(t, latest)), latest)
	}
}

func TestWhatTheReconcileRemovedGoesWholeAndLeavesNoEmptyObject(t *testing.T) {
	m := &Merger{}
	// The status removed.
	expectObject(t, m.MergeStatus(obj(t, `{"status": {"replicas": 1}}`), obj(t, `{}`), obj(t, `{"status": {"replicas": 1}}`)), `{}`)
	// An object in spec removed.
	expectObject(t, m.MergeMain(obj(t, `{"spec": {"a": {"x": 1}, "b": 1}}`), obj(t, `{"spec": {"b": 1}}`), obj(t, `{"spec": {"a": {"x": 1}, "b": 1}}`), false),
		`{"spec": {"b": 1}}`)
	// The last finalizer removed: no empty list.
	expectObject(t, m.MergeMain(obj(t, `{"metadata": {"finalizers": ["a"]}}`), obj(t, `{"metadata": {}}`), obj(t, `{"metadata": {"finalizers": ["a"]}}`), false),
		`{"metadata": {}}`)
	expectObject(t, m.MergeMain(obj(t, `{"spec": {"b": 1}}`), obj(t, `{"spec": {"b": 2}}`), obj(t, `{"spec": {"b": 1}}`), false),
		`{"spec": {"b": 2}}`)
}

func TestAListIsWrittenWholeUnlessAnotherWriterChangedIt(t *testing.T) {
	before := obj(t, `{"spec": {"l": [1]}}`)
	after := obj(t, `{"spec": {"l": [1, 2]}}`)
	for _, tt := range []struct {
		name, latest, want string
		conflict           bool
	}{
		{"latest has before's list", `{"spec": {"l": [1]}}`, `{"spec": {"l": [1, 2]}}`, false},
		{"latest has the reconcile's list already", `{"spec": {"l": [1, 2]}}`, `{"spec": {"l": [1, 2]}}`, false},
		{"another writer changed it", `{"spec": {"l": [1, 3]}}`, ``, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &Merger{}
			got := m.MergeMain(before, after, obj(t, tt.latest), false)
			if tt.conflict {
				if diff := cmp.Diff([]string{"/spec/l"}, m.Conflicts); diff != "" {
					t.Errorf("conflicts (-want +got):\n%s", diff)
				}
				return
			}
			if len(m.Conflicts) > 0 {
				t.Errorf("conflicts %v", m.Conflicts)
			}
			expectObject(t, got, tt.want)
		})
	}
}

func TestOwnerReferencesMergeByUID(t *testing.T) {
	r1 := `{"uid": "1", "kind": "A", "name": "a"}`
	r1b := `{"uid": "1", "kind": "A", "name": "a", "blockOwnerDeletion": true}`
	r2 := `{"uid": "2", "kind": "B", "name": "b"}`
	c1 := `{"uid": "3", "kind": "C", "name": "c", "controller": true}`
	c2 := `{"uid": "4", "kind": "D", "name": "d", "controller": true}`
	refs := func(rs ...string) string {
		s := `{"metadata": {"ownerReferences": [`
		for i, r := range rs {
			if i > 0 {
				s += ", "
			}
			s += r
		}
		return s + `]}}`
	}

	m := &Merger{}
	// Another writer changed r1; this reconcile added r2 and did not touch r1.
	expectObject(t, m.MergeMain(obj(t, refs(r1)), obj(t, refs(r1, r2)), obj(t, refs(r1b)), false), refs(r1b, r2))
	// This reconcile removed r1, which another writer changed meanwhile: removed.
	expectObject(t, m.MergeMain(obj(t, refs(r1, r2)), obj(t, refs(r2)), obj(t, refs(r1b, r2, c1)), false), refs(r2, c1))
	if len(m.Conflicts) > 0 {
		t.Errorf("conflicts %v", m.Conflicts)
	}
	// A controller of this reconcile's while another writer set another: a conflict.
	m = &Merger{}
	m.MergeMain(obj(t, refs(r1)), obj(t, refs(r1, c1)), obj(t, refs(r1, c2)), false)
	if diff := cmp.Diff([]string{"/metadata/ownerReferences"}, m.Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
}

func TestAConditionAddedGoesToItsPlaceInTheTypesOrder(t *testing.T) {
	cond := func(t string) string { return fmt.Sprintf(`{"type": %q, "status": "True"}`, t) }
	status := func(types ...string) string {
		s := `{"status": {"conditions": [`
		for i, ty := range types {
			if i > 0 {
				s += ", "
			}
			s += cond(ty)
		}
		return s + `]}}`
	}
	for _, tt := range []struct {
		name   string
		order  []conditions.Type
		latest []string
		add    string
		want   []string
	}{
		{"default: after Ready, alphabetically", nil, []string{"Ready", "Zeta"}, "Alpha", []string{"Ready", "Alpha", "Zeta"}},
		{"default: Ready first", nil, []string{"Alpha", "Zeta"}, "Ready", []string{"Ready", "Alpha", "Zeta"}},
		{"default: last", nil, []string{"Ready", "Alpha"}, "Zeta", []string{"Ready", "Alpha", "Zeta"}},
		{"an order: its types first, in its order", []conditions.Type{"Available", "Ready"}, []string{"Ready", "Alpha"}, "Available", []string{"Available", "Ready", "Alpha"}},
		{"an order: after the ordered", []conditions.Type{"Available", "Ready"}, []string{"Available", "Ready", "Zeta"}, "Beta", []string{"Available", "Ready", "Beta", "Zeta"}},
		{"an order: between the ordered", []conditions.Type{"Available", "Progressing", "Ready"}, []string{"Available", "Ready"}, "Progressing", []string{"Available", "Progressing", "Ready"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &Merger{Order: tt.order}
			before := obj(t, status(tt.latest...))
			got := m.MergeStatus(before, obj(t, status(append(append([]string{}, tt.latest...), tt.add)...)), before)
			expectObject(t, got, status(tt.want...))
		})
	}
}

func TestSameConditionIgnoresTheTransitionTimeOnly(t *testing.T) {
	a := obj(t, `{"type": "Ready", "status": "True", "lastTransitionTime": "x"}`)
	for _, tt := range []struct {
		b    string
		want bool
	}{
		{`{"type": "Ready", "status": "True", "lastTransitionTime": "y"}`, true},
		{`{"type": "Ready", "status": "True"}`, true},
		{`{"type": "Ready", "status": "True", "reason": "Up"}`, false},
		{`{"type": "Ready", "status": "False", "lastTransitionTime": "x"}`, false},
		{`{"type": "Ready"}`, false},
	} {
		if got := sameCondition(a, obj(t, tt.b)); got != tt.want {
			t.Errorf("sameCondition(%v, %s) = %v, want %v", a, tt.b, got, tt.want)
		}
		if got := sameCondition(obj(t, tt.b), a); got != tt.want {
			t.Errorf("sameCondition(%s, %v) = %v, want %v", tt.b, a, got, tt.want)
		}
	}
	if !sameCondition(nil, nil) || sameCondition(a, nil) || sameCondition(nil, a) {
		t.Error("a missing condition is the same as a missing one only")
	}
}

// compact returns the JSON of text without spaces, as opStrings renders values.
func compact(text string) string {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
