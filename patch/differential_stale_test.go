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

package patch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/faults"
)

// The stale-snapshot scenario checks patch.History inside the differential test. A case of it
// reads S0, and a first Helper with a History H patches the object from S0 (its changes: first)
// to L1, which H records. Then, as in every case, the other writer may write (L2, the case's S1),
// and the case's Helper, made from S0, patches with H too. With staleSnapshot its snapshot S0 is
// older than L1, as a reconcile's is when the cache has not delivered its own last write yet:
//
//   - the outcome must be what the model predicts from S0, its changes and L2, as without a
//     History (the direct prediction: a Patch that retried after a conflict, or whose snapshot
//     the entry did not help), or the composite one: the model's merge of the changes onto L1
//     (A', what a Patch with a fresh read at L1 would have written), then the model of a Patch
//     from L1 to A' against L2. When A' is L1 this means: nothing sent, the server still holds L2,
//     and obj becomes L1. For a kind with a status subresource each part may follow either
//     prediction: the status request merges onto the server's answer to the metadata and spec
//     request, as without a History.
//
// With staleOlderEntry the case's snapshot is read after the other writer: H's entry is as old
// as or older than the snapshot and must be ignored, so the model applies as without a History.
const (
	staleSnapshot   = "stale snapshot, own last write newer"
	staleOlderEntry = "own last write older than the snapshot"
)

// How the oracle allowed a staleSnapshot case's outcome.
const (
	staleDirect    = "as without a History"
	staleComposite = "composite"
	staleSkipped   = "nothing sent"
	staleMixed     = "one part composite"
)

// checkStaleCoverage fails t when a run long enough to show them lacks an outcome of the
// stale-snapshot scenario: the History must have spared requests, and sent some. (The composite
// outcomes are too rare to require: a few in a thousand cases.)
func checkStaleCoverage(t *testing.T, results []caseResult) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range results {
		if r.stale != "" {
			seen[r.stale]++
		}
	}
	t.Logf("stale-snapshot outcomes: %v", seen)
	if len(results) < 400 {
		return
	}
	for _, o := range []string{staleDirect, staleSkipped} {
		if seen[o] == 0 {
			t.Errorf("no case of %d had the stale-snapshot outcome %q: the generator is too narrow", len(results), o)
		}
	}
}

// generateStale draws the stale-snapshot scenario of dc, from a generator of its own so that
// the rest of every case stays what its seed made it before the scenario existed.
func generateStale(dc *differentialCase, fields []kindField) {
	r := rand.New(rand.NewPCG(uint64(dc.seed), 0x73_7461_6c65))
	if dc.fault != faultNone || dc.lifecycle == lifeDeleting || !chance(r, 0.3) {
		return
	}
	dc.stale = staleSnapshot
	if dc.lifecycle != lifeDeleted && chance(r, 0.2) {
		dc.stale = staleOlderEntry
	}
	dc.first = dc.ours
	if chance(r, 0.35) {
		// The first Patch made other changes: the desired state changed in between.
		var edits []edit
		for _, f := range fields {
			if chance(r, 0.15) {
				edits = append(edits, edit{f.path, f.shape.edit})
			}
		}
		dc.first = applyEdits(r, dc.initial, edits)
		dc.scenarios = append(dc.scenarios, "the first Patch made other changes")
	} else {
		dc.scenarios = append(dc.scenarios, "the first Patch made the same changes")
	}
	if dc.lifecycle == "" && dc.theirs != nil && chance(r, 0.5) {
		// The common case: only the controller writes.
		dc.theirs = nil
		dc.scenarios = append(dc.scenarios, "no other writer")
	}
}

// firstPatch makes the first Patch of the scenario, from snapshot, with the History it creates,
// and reads L1.
func (r *caseRun) firstPatch(ctx context.Context, snapshot client.Object) error {
	c, dc := env.Client(), r.dc
	h, err := patch.NewWriter(c, patch.WriterOptions{History: r.history}).NewHelper(snapshot)
	if err != nil {
		return fmt.Errorf("failed to create the first Helper: %w", err)
	}
	first, err := decodeObject(dc.kind, dc.typed, graft(r.s0, dc.first))
	if err != nil {
		return err
	}
	if dc.observedGeneration {
		if _, err := conditions.SetObservedGeneration(first); err != nil {
			return fmt.Errorf("failed to set status.observedGeneration: %w", err)
		}
	}
	if err := h.Patch(ctx, first, ownedOptions(dc)...); err != nil {
		return fmt.Errorf("failed to make the first Patch: %w", err)
	}
	if r.l1, err = getRaw(ctx, c, dc.kind, r.key); err != nil {
		return fmt.Errorf("failed to read L1: %w", err)
	}
	if r.l1 != nil {
		r.l1Obj = newObject(dc.kind, dc.typed)
		if err := c.Get(ctx, r.key, r.l1Obj); err != nil {
			return fmt.Errorf("failed to read L1: %w", err)
		}
	}
	return nil
}

// freshSnapshot reads the object again and makes the case's Helper from it: a snapshot as new
// as or newer than the History's entry.
func (r *caseRun) freshSnapshot(ctx context.Context) error {
	obj := newObject(r.dc.kind, r.dc.typed)
	if err := env.Client().Get(ctx, r.key, obj); err != nil {
		return fmt.Errorf("failed to read S0 again: %w", err)
	}
	r.s0 = toJSON(obj)
	var err error
	if r.h, err = patch.NewHelper(obj, r.fc); err != nil {
		return fmt.Errorf("failed to create the Helper: %w", err)
	}
	return nil
}

// staleOracle replaces the prediction of a staleSnapshot case when the outcome is not the one
// the model predicts from S0, the changes and L2 (the direct prediction), by the composite one,
// or, for a kind with a status subresource, by the metadata and spec of one and the status of the
// other, when that allows the outcome; see the scenario above.
func (r *caseRun) staleOracle(mc modelCase) {
	class := errorClass(r.err)
	rv := []string{"metadata", "resourceVersion"}
	if r.err == nil && !r.pred.Unchanged && r.fc.Count(faults.Writes) == 0 &&
		r.l1 != nil && !equal(getPath(r.l1, rv), getPath(r.s0, rv)) {
		// Nothing sent although the snapshot differs, and the first Patch wrote: the History's
		// entry held the changes. (When the first Patch sent nothing, as when A differs from S0
		// only in a condition's lastTransitionTime, the History holds no entry, and nothing was
		// sent because the changes leave nothing to send.)
		r.skipped = true
	}
	allows := func(p prediction) bool {
		return slices.Contains(p.Errs, class) && equal(forComparison(p.F), forComparison(r.f))
	}
	r.staleOutcome = staleDirect
	defer func() {
		if r.skipped && r.staleOutcome != "" {
			r.staleOutcome = staleSkipped
		}
	}()
	if allows(r.pred) {
		return
	}
	p, ok := r.composite(mc)
	if !ok {
		return
	}
	candidates := []prediction{p}
	if mc.StatusSubresource && p.F != nil && r.pred.F != nil {
		mix := func(main, status prediction) prediction {
			f := withoutStatus(main.F)
			put(f, "status", lookup(status.F, "status"))
			return prediction{F: normalize(f).(map[string]any), Errs: slices.Concat(main.Errs, status.Errs)}
		}
		candidates = append(candidates, mix(p, r.pred), mix(r.pred, p))
	}
	for i, c := range candidates {
		if allows(c) {
			r.pred = c
			r.staleOutcome = []string{staleComposite, staleMixed, staleMixed}[i]
			return
		}
	}
	r.rebased = &p
}

// composite is the model of a Patch that merges onto L1 and sends the result to L2: the
// changes merged onto L1 as the model merges them (A'), then a Patch from L1 to A' against L2.
// ok is false when L1 is gone.
func (r *caseRun) composite(mc modelCase) (p prediction, ok bool) {
	if r.l1 == nil {
		return prediction{}, false
	}
	onL1 := mc
	onL1.S1, onL1.Fault = r.l1, faultNone
	p1 := predict(onL1)
	if p1.F == nil {
		return prediction{}, false
	}
	second := mc
	second.S0, second.A, second.ObservedGeneration = r.l1, graft(r.l1, p1.F), false
	p = predict(second)
	if slices.Equal(p.Errs, []string{errNone}) {
		// The merge onto L1 found a conflict: what it could write was written, then the error.
		p.Errs = p1.Errs
	}
	p.Alternatives = nil
	return p, true
}

func contentOrNil(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	return content(obj)
}

func withoutStatus(c map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		if k != "status" {
			out[k] = v
		}
	}
	return out
}
