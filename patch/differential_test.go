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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/faults"
)

const (
	// patchSeedEnvVar sets the seed of TestDifferentialPatchAgreesWithTheModel: case i of a run
	// has seed TENON_PATCH_SEED+i, so TENON_PATCH_SEED=<a case's seed> TENON_PATCH_CASES=1
	// replays that case alone.
	patchSeedEnvVar = "TENON_PATCH_SEED"
	// patchCasesEnvVar sets the number of cases.
	patchCasesEnvVar = "TENON_PATCH_CASES"
	defaultCases     = 500
	// caseWorkers is the number of cases run at a time, each on an object of its own.
	caseWorkers = 6
)

// TestDifferentialPatchAgreesWithTheModel runs random cases of Helper.Patch against the API
// server and compares what it wrote, and what it returned, with the model of the guarantee
// table (model_test.go). Each case creates an object, reads it (S0, from which the Helper is
// made), lets another writer change it on the server (S1), changes its own copy (A), calls
// Patch with random options and, sometimes, an injected failure, and reads the result (F).
func TestDifferentialPatchAgreesWithTheModel(t *testing.T) {
	seed, n := differentialSettings(t)
	t.Logf("%s=%d %s=%d", patchSeedEnvVar, seed, patchCasesEnvVar, n)
	ns := env.Namespace(t)
	warmUp(t, ns)

	results := make([]caseResult, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range caseWorkers {
		wg.Go(func() {
			for i := range next {
				results[i] = runCase(t.Context(), ns, i, seed+int64(i))
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()

	report(t, seed, results)
}

// warmUp makes the first Patch of a Gadget in the process, and checks it. The first Patch of a
// kind without a status subresource finds that out (its first status request fails with 404);
// later ones send the status with the rest of the object. Without the warm-up, which case is
// the first would depend on the order in which the workers run, and a case replayed alone would
// take another path than in the run that found it. The first Patch is a case of its own: a
// condition conflict, which must write nothing (the table: "for a kind without a status
// subresource, one request carries everything: any conflict means nothing is written").
func warmUp(t *testing.T, ns string) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	gd := &testtypes.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "warm-up", Namespace: ns}, Spec: testtypes.WidgetSpec{Size: "small"}}
	gd.Status.Conditions = []metav1.Condition{{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: metav1.Now()}}
	g.Expect(c.Create(ctx, gd)).To(Succeed())
	h, err := patch.NewHelper(gd, c)
	g.Expect(err).NotTo(HaveOccurred())
	theirs := gd.DeepCopy()
	theirs.Status.Conditions[0].Message = "theirs"
	g.Expect(c.Update(ctx, theirs)).To(Succeed())

	gd.Spec.Size = "large"
	gd.Status.Conditions[0].Message = "ours"
	err = h.Patch(ctx, gd)
	latest := &testtypes.Gadget{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gd), latest)).To(Succeed())
	if !apierrors.IsConflict(err) || latest.Spec.Size != "small" || latest.Status.Conditions[0].Message != "theirs" {
		t.Errorf("the first Patch of a Gadget, a kind without a status subresource, with a condition both writers changed: "+
			"want a conflict (apierrors.IsConflict) and nothing written (spec.size %q, the condition's message %q), "+
			"got error %v, spec.size %q and message %q", "small", "theirs", err, latest.Spec.Size, latest.Status.Conditions[0].Message)
	}

	// Whatever the first Patch did, the kind is known from now on.
	h, err = patch.NewHelper(latest, c)
	g.Expect(err).NotTo(HaveOccurred())
	latest.Status.Phase = "warm"
	g.Expect(h.Patch(ctx, latest)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gd), latest)).To(Succeed())
	g.Expect(latest.Status.Phase).To(Equal("warm"))
}

// differentialSettings returns the seed and the number of cases, from the environment.
func differentialSettings(t *testing.T) (seed int64, n int) {
	t.Helper()
	return seedAndCases(t, patchSeedEnvVar, patchCasesEnvVar, defaultCases)
}

// seedAndCases returns a randomized test's seed and number of cases from the environment
// variables seedVar and casesVar: by default a fresh seed and defaultCases.
func seedAndCases(t *testing.T, seedVar, casesVar string, defaultCases int) (seed int64, n int) {
	t.Helper()
	seed = int64(envInt(t, seedVar, rand.Int64N(1_000_000_000)))
	n = envInt(t, casesVar, int64(defaultCases))
	if n < 1 {
		t.Fatalf("%s=%d: want a positive number", casesVar, n)
	}
	return seed, n
}

// caseResult is the outcome of one case.
type caseResult struct {
	seed int64
	// divergences are short, stable names of what went wrong, to group cases by; empty when the
	// case agrees with the model.
	divergences []string
	// desc describes the case and the divergence.
	desc string
	// predicted is the error class the model predicted, for the coverage check.
	predicted string
	// stale is how the oracle of a stale-snapshot case allowed its outcome, for the coverage
	// check: "" for other cases.
	stale string
}

// runCase runs the case of seed on an object named after i.
func runCase(ctx context.Context, ns string, i int, seed int64) caseResult {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	dc := generateCase(seed)
	r := &caseRun{dc: dc, key: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("%s-%d", strings.ToLower(dc.kind.gvk.Kind), i)}}
	if err := r.prepare(ctx); err != nil {
		return caseResult{seed: seed, divergences: []string{"setup: " + firstLine(err.Error())},
			desc: describeCase(dc, nil) + "\nsetup failed: " + err.Error()}
	}
	if err := r.patch(ctx); err != nil {
		return caseResult{seed: seed, divergences: []string{"setup: " + firstLine(err.Error())},
			desc: describeCase(dc, nil) + "\nsetup failed: " + err.Error()}
	}
	res := caseResult{seed: seed, predicted: r.pred.Errs[0], divergences: r.divergences(), stale: r.staleOutcome}
	if len(res.divergences) > 0 {
		res.desc = describeCase(dc, r) + "\n" + describeRequests(r.fc)
	}
	return res
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// caseRun is one case on the API server: what it sent and saw, and what the model predicted.
type caseRun struct {
	dc  *differentialCase
	key types.NamespacedName
	fc  *faults.Client // the Helper's client
	h   *patch.Helper

	// s0, s1 and a are S0 (as the Helper saw it), S1 and A (before the options) as JSON; aOpts
	// the content of A with the options applied.
	s0, s1, a, aOpts map[string]any
	// obj is the object given to Patch, before a deep copy of it made before the call.
	obj, before client.Object
	opts        []patch.Option

	// err is what Patch returned; f the content of the server object after it (nil: gone),
	// server the object read as obj's type.
	err    error
	f      map[string]any
	server client.Object
	pred   prediction

	// The stale-snapshot scenario (differential_stale_test.go): the History both Patches share;
	// L1, the object after the first Patch (nil: gone), as JSON and read as obj's type; and
	// whether the second Patch sent nothing, which the oracle allowed because L1 already held
	// its changes.
	history *patch.History
	l1      map[string]any
	l1Obj   client.Object
	skipped bool
	// staleOutcome is which prediction allowed the outcome: see staleOracle.
	staleOutcome string
	// rebased is the composite prediction when neither it nor the model's allowed the outcome,
	// for descriptions.
	rebased *prediction
}

// prepare creates the object, reads S0, makes the Helper, lets the other writer write, reads S1
// and makes our change.
func (r *caseRun) prepare(ctx context.Context) error {
	c, dc := env.Client(), r.dc
	if err := create(ctx, c, dc.kind, graft(r.skeleton(), dc.initial)); err != nil {
		return err
	}
	if dc.lifecycle == lifeDeleting {
		if err := c.Delete(ctx, newUnstructured(dc.kind, r.key)); err != nil {
			return fmt.Errorf("failed to delete the object: %w", err)
		}
	}

	obj := newObject(dc.kind, dc.typed)
	if err := c.Get(ctx, r.key, obj); err != nil {
		return fmt.Errorf("failed to read S0: %w", err)
	}
	r.s0 = toJSON(obj)
	if diff := cmp.Diff(content(toJSON(dc.initial)), content(r.s0)); diff != "" {
		return fmt.Errorf("S0 is not the object created (-created +S0):\n%s", diff)
	}
	var err error
	if r.fc, err = faults.Wrap(env.Client(), faultPlan(dc, r.key)); err != nil {
		return fmt.Errorf("failed to wrap the client: %w", err)
	}
	if dc.stale != "" {
		r.history = &patch.History{}
	}
	if r.h, err = patch.NewWriter(r.fc, patch.WriterOptions{History: r.history}).NewHelper(obj); err != nil {
		return fmt.Errorf("failed to create the Helper: %w", err)
	}
	if dc.stale != "" {
		if err := r.firstPatch(ctx, obj); err != nil {
			return err
		}
	}

	if err := otherWriter(ctx, c, dc, r.key, r.skeleton()); err != nil {
		return err
	}
	if dc.stale == staleOlderEntry {
		if err := r.freshSnapshot(ctx); err != nil {
			return err
		}
	}
	if r.s1, err = getRaw(ctx, c, dc.kind, r.key); err != nil {
		return fmt.Errorf("failed to read S1: %w", err)
	}
	switch {
	case dc.lifecycle == lifeDeleted && r.s1 != nil:
		return fmt.Errorf("the object still exists after the other writer deleted it")
	case dc.lifecycle == lifeRecreated:
		if r.s1 == nil {
			return fmt.Errorf("the recreated object does not exist")
		}
		if diff := cmp.Diff(content(toJSON(dc.recreated)), content(r.s1)); diff != "" {
			return fmt.Errorf("S1 is not the object recreated (-recreated +S1):\n%s", diff)
		}
	case dc.theirs != nil && r.s1 != nil:
		if diff := cmp.Diff(content(toJSON(dc.theirs)), content(r.s1)); diff != "" {
			return fmt.Errorf("S1 is not what the other writer wrote (-written +S1):\n%s", diff)
		}
	case dc.theirs != nil && dc.lifecycle != lifeDeleting:
		return fmt.Errorf("the object is gone after the other writer's change")
	}

	if r.obj, err = decodeObject(dc.kind, dc.typed, graft(r.s0, dc.ours)); err != nil {
		return err
	}
	if dc.observedGeneration {
		// Our change includes status.observedGeneration, as requeue.Report sets it: S0's
		// generation, a scalar change of ours.
		if _, err := conditions.SetObservedGeneration(r.obj); err != nil {
			return fmt.Errorf("failed to set status.observedGeneration: %w", err)
		}
	}
	r.before = r.obj.DeepCopyObject().(client.Object)
	r.a = toJSON(r.obj)
	r.opts = ownedOptions(dc)
	return nil
}

// ownedOptions returns the OwnedConditions option of dc, if any.
func ownedOptions(dc *differentialCase) []patch.Option {
	if len(dc.owned) == 0 {
		return nil
	}
	var owned patch.OwnedConditions
	for _, t := range dc.owned {
		owned = append(owned, conditions.Type(t))
	}
	return []patch.Option{owned}
}

func (r *caseRun) skeleton() map[string]any {
	return map[string]any{
		"apiVersion": r.dc.kind.gvk.GroupVersion().String(), "kind": r.dc.kind.gvk.Kind,
		"metadata": map[string]any{"name": r.key.Name, "namespace": r.key.Namespace},
	}
}

// patch calls Patch, reads F and asks the model what F should be.
func (r *caseRun) patch(ctx context.Context) error {
	c, dc := env.Client(), r.dc
	r.fc.Reset()
	r.err = r.h.Patch(ctx, r.obj, r.opts...)

	f, err := getRaw(ctx, c, dc.kind, r.key)
	if err != nil {
		return fmt.Errorf("failed to read F: %w", err)
	}
	if f != nil {
		r.f = content(f)
		r.server = newObject(dc.kind, dc.typed)
		if err := c.Get(ctx, r.key, r.server); err != nil {
			return fmt.Errorf("failed to read F: %w", err)
		}
	}

	mc := modelCase{
		S0: r.s0, A: r.a, S1: r.s1,
		StatusSubresource:  dc.kind.statusSubresource,
		Owned:              dc.owned,
		Force:              dc.force,
		ObservedGeneration: dc.observedGeneration,
		Fault:              dc.fault,
		FaultClass:         dc.faultClass,
		FaultOnRetry:       dc.faultMode != faultEvery,
	}
	faultFired := r.fc.Count(faults.SelectorFunc(func(c faults.Call) bool {
		return c.Outcome == faults.Injected && c.Rule == len(r.fc.Plan().Rules)-1
	})) > 0
	if dc.faultMode != faultEvery && !faultFired {
		// Whether Patch sends a request after a conflict depends on how it guards its requests
		// and on whether anything is left to write, which the table leaves open: the fault
		// never fired, and the injected conflicts were conflicts like any other.
		mc.Fault = faultNone
	}
	if !mc.StatusSubresource && !statusWrittenWithObject(r.s0) {
		// A kind without a status subresource whose snapshot's managedFields do not show the
		// status written through the object: Patch cannot know, and writes as for a kind with
		// the subresource (finding out with a status request answered 404), as Helper.Patch
		// documents.
		mc.StatusSubresource = true
		probe := r.fc.Calls(faults.Writes, faults.Status)
		injected := r.fc.Calls(faults.SelectorFunc(func(c faults.Call) bool { return c.Outcome == faults.Injected }))
		if mc.Fault == faultMain && len(probe) > 0 && len(injected) > 0 && injected[0].Seq > probe[0].Seq {
			// The request for the object after the 404 carried the status: its fault is the
			// status part's.
			mc.Fault = faultStatus
		}
	}
	r.aOpts = withOptions(mc)
	r.pred = predict(mc)
	for _, alt := range r.pred.Alternatives {
		if slices.Contains(alt.Errs, errorClass(r.err)) && equal(forComparison(alt.F), forComparison(r.f)) {
			r.pred = alt
		}
	}
	if r.dc.stale == staleSnapshot {
		r.staleOracle(mc)
	}
	return nil
}

// divergences compares what the case saw with the model and returns what differs.
func (r *caseRun) divergences() []string {
	var out []string
	pred := r.pred

	// The error class.
	if got := errorClass(r.err); !slices.Contains(pred.Errs, got) {
		d := fmt.Sprintf("error: want %s", strings.Join(pred.Errs, " or "))
		if len(pred.Conflicts) > 0 {
			d += " (" + strings.Join(conflictFields(pred.Conflicts), ", ") + ")"
		}
		if r.err != nil {
			got += " (" + r.err.Error() + ")"
		}
		out = append(out, d+", got "+got)
	}

	// F, field by field, each value named after the object it comes from, which tells the rule
	// that failed.
	want, got := forComparison(pred.F), forComparison(r.f)
	switch {
	case want == nil && got != nil:
		out = append(out, "F: want the object gone, it exists")
	case want != nil && got == nil:
		out = append(out, "F: want the object, it is gone")
	default:
		s0, s1, a := forComparison(content(r.s0)), forComparison(content(r.s1)), forComparison(r.aOpts)
		for _, f := range diffFields(want, got) {
			path := strings.Split(f, ".")
			from := func(v any) string {
				switch {
				case equal(v, getPath(s1, path)):
					return "S1's"
				case equal(v, getPath(a, path)):
					return "A's"
				case equal(v, getPath(s0, path)):
					return "S0's"
				}
				return "a merge"
			}
			out = append(out, fmt.Sprintf("F at %s: want %s, got %s", f, from(getPath(want, path)), from(getPath(got, path))))
		}
	}

	// obj.
	after := toJSON(r.obj)
	isServer := r.server != nil && equal(withoutTypeMeta(after), withoutTypeMeta(toJSON(r.server)))
	unchanged := reflect.DeepEqual(r.before, r.obj)
	switch {
	case r.err != nil && !unchanged:
		out = append(out, "obj: changed by a Patch that failed, at "+strings.Join(diffFields(toJSON(r.before), after), ", "))
	case r.err != nil:
	case r.skipped:
		if r.l1Obj != nil && !equal(withoutTypeMeta(after), withoutTypeMeta(toJSON(r.l1Obj))) {
			out = append(out, "obj: after a Patch that sent nothing because of the History it is not the Helper's own last write")
		}
	case pred.Unchanged:
		// Nothing to send, so Patch cannot know F: obj may stay as it was, become A with the
		// options applied (which equals S0), or the server's object.
		// With the History's entry newer than the snapshot, obj becomes the entry (L1): the
		// object the Patch merged onto. (An object that equals the snapshot exactly is returned
		// at once, unchanged.)
		isL1 := r.dc.stale == staleSnapshot && r.l1Obj != nil && equal(withoutTypeMeta(after), withoutTypeMeta(toJSON(r.l1Obj)))
		if !unchanged && !equal(content(after), content(r.s0)) && !isServer && !isL1 {
			out = append(out, "obj: changed by a Patch that had nothing to send")
		}
	case r.server != nil && !isServer && (!pred.UnchangedButTimes || !unchanged):
		out = append(out, "obj: after a successful Patch it is not the server's object")
	}

	// Requests.
	if pred.Unchanged && equal(writtenFields(r.a), writtenFields(r.s0)) && r.fc.Count(faults.Writes) > 0 {
		out = append(out, "requests: a write although A equals S0")
	}
	mainWrites, statusWrites := r.fc.Count(faults.Writes, faults.Match{Subresource: faults.NoSubresource}), r.fc.Count(faults.Writes, faults.Status)
	if probe := r.fc.Calls(faults.Writes, faults.Status); !r.dc.kind.statusSubresource && len(probe) == 1 && apierrors.IsNotFound(probe[0].Err) {
		// A kind without a status subresource whose snapshot shows no status written through the
		// object (its managedFields) costs one status request answered 404 and one more request
		// for the object: Helper.Patch's documentation says so.
		mainWrites, statusWrites = mainWrites-1, 0
	}
	if r.dc.theirs == nil && r.dc.lifecycle == "" && r.dc.fault == faultNone && (mainWrites > 1 || statusWrites > 1) {
		out = append(out, "requests: more than one per part without another writer")
	}
	return out
}

// create creates the object obj (with its status, for a kind with a status subresource).
func create(ctx context.Context, c client.Client, k *kindInfo, obj map[string]any) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	status, hasStatus := u.Object["status"]
	if err := c.Create(ctx, u); err != nil {
		return fmt.Errorf("failed to create the object: %w", err)
	}
	if k.statusSubresource && hasStatus {
		u.Object["status"] = status
		if err := c.Status().Update(ctx, u); err != nil {
			return fmt.Errorf("failed to write the status of the object: %w", err)
		}
	}
	return nil
}

// otherWriter makes the other writer's change on the server.
func otherWriter(ctx context.Context, c client.Client, dc *differentialCase, key types.NamespacedName, skeleton map[string]any) error {
	switch dc.lifecycle {
	case lifeDeleted, lifeRecreated:
		u := newUnstructured(dc.kind, key)
		if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
			return fmt.Errorf("failed to remove the finalizers: %w", err)
		}
		if err := c.Delete(ctx, u); err != nil {
			return fmt.Errorf("failed to delete the object: %w", err)
		}
		if dc.lifecycle == lifeRecreated {
			return create(ctx, c, dc.kind, graft(skeleton, dc.recreated))
		}
		return nil
	}
	if dc.theirs == nil {
		return nil
	}
	cur, err := getRaw(ctx, c, dc.kind, key)
	if err != nil {
		return fmt.Errorf("failed to read the object: %w", err)
	}
	target := graft(cur, dc.theirs)
	// ignoreGone ignores the status write's NotFound after the other writer removed the last
	// finalizer of an object being deleted.
	ignoreGone := func(err error) error {
		if dc.lifecycle == lifeDeleting && apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	separate := dc.kind.statusSubresource
	if dc.theirWay == "merge patch" {
		p := mergePatch(cur, toJSON(target))
		st, hasStatus := p["status"]
		if separate {
			delete(p, "status")
		}
		if len(p) > 0 {
			if err := c.Patch(ctx, newUnstructured(dc.kind, key), client.RawPatch(types.MergePatchType, marshal(p))); err != nil {
				return fmt.Errorf("failed to merge-patch the object as the other writer: %w", err)
			}
		}
		if separate && hasStatus {
			err := c.Status().Patch(ctx, newUnstructured(dc.kind, key), client.RawPatch(types.MergePatchType, marshal(map[string]any{"status": st})))
			if err := ignoreGone(err); err != nil {
				return fmt.Errorf("failed to merge-patch the status as the other writer: %w", err)
			}
		}
		return nil
	}
	u, err := toUnstructured(target)
	if err != nil {
		return err
	}
	if err := c.Update(ctx, u); err != nil {
		return fmt.Errorf("failed to update the object as the other writer: %w", err)
	}
	if separate {
		put(u.Object, "status", clone(lookup(target, "status")))
		if err := ignoreGone(c.Status().Update(ctx, u)); err != nil {
			return fmt.Errorf("failed to update the status as the other writer: %w", err)
		}
	}
	return nil
}

// faultPlan fails every one of Patch's requests that dc.fault names, with dc.faultClass.
func faultPlan(dc *differentialCase, key types.NamespacedName) faults.Plan {
	if dc.fault == faultNone {
		return faults.Plan{Seed: 1}
	}
	kind := dc.kind.gvk.Kind + "." + dc.kind.gvk.Group
	rule := faults.Rule{Match: faults.Match{Verbs: faults.Writes, Kind: kind, Namespace: key.Namespace, Name: key.Name, Subresource: faults.NoSubresource}}
	if dc.fault == faultStatus {
		rule.Subresource = "status"
	}
	var rules []faults.Rule
	switch dc.faultMode {
	case faultRetry:
		rule.Nth = 2
	case faultAfterConflicts:
		conflict := faults.Rule{Match: rule.Match, Fault: faults.Conflict, Times: dc.conflicts}
		rules = append(rules, conflict)
	}
	switch dc.faultClass {
	case errForbidden:
		rule.Fault = faults.Forbidden
	case errInternal:
		rule.Fault = faults.InternalError
	case errInvalid:
		rule.Err = apierrors.NewInvalid(dc.kind.gvk.GroupKind(), key.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "text"), "<b>&amp;</b>", "injected: must not contain HTML"),
			field.Required(field.NewPath("spec", "count"), "injected"),
		})
	}
	return faults.Plan{Seed: 1, Rules: append(rules, rule)}
}

func newObject(k *kindInfo, typed bool) client.Object {
	if typed {
		return k.newTyped()
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	return u
}

func newUnstructured(k *kindInfo, key types.NamespacedName) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u
}

// getRaw reads the object as the API server holds it, or nil when it does not exist.
func getRaw(ctx context.Context, c client.Client, k *kindInfo, key types.NamespacedName) (map[string]any, error) {
	u := newUnstructured(k, key)
	if err := c.Get(ctx, key, u); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return toJSON(u.Object), nil
}

func toUnstructured(obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(marshal(obj)); err != nil {
		return nil, fmt.Errorf("failed to decode an object: %w", err)
	}
	return u, nil
}

// decodeObject returns obj as a typed or an unstructured object of kind k.
func decodeObject(k *kindInfo, typed bool, obj map[string]any) (client.Object, error) {
	if !typed {
		return toUnstructured(obj)
	}
	o := k.newTyped()
	if err := json.Unmarshal(marshal(obj), o); err != nil {
		return nil, fmt.Errorf("failed to decode an object: %w", err)
	}
	return o, nil
}

// marshal encodes v without escaping HTML characters, for readable descriptions.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// mergePatch returns the JSON merge patch (RFC 7386) that turns from into to.
func mergePatch(from, to map[string]any) map[string]any {
	p := map[string]any{}
	for k, fv := range from {
		tv, ok := to[k]
		fm, fok := fv.(map[string]any)
		tm, tok := tv.(map[string]any)
		switch {
		case !ok:
			p[k] = nil
		case fok && tok:
			if sub := mergePatch(fm, tm); len(sub) > 0 {
				p[k] = sub
			}
		case !equal(fv, tv):
			p[k] = tv
		}
	}
	for k, tv := range to {
		if _, ok := from[k]; !ok {
			p[k] = tv
		}
	}
	return p
}

// errorClass names the classes of err, as apierrors predicates see them: "conflict", or
// "conflict+forbidden" for an error that is both.
func errorClass(err error) string {
	if err == nil {
		return errNone
	}
	var classes []string
	for _, p := range []struct {
		class string
		is    func(error) bool
	}{
		{errConflict, apierrors.IsConflict},
		{errNotFound, apierrors.IsNotFound},
		{errForbidden, apierrors.IsForbidden},
		{errInternal, apierrors.IsInternalError},
		{errInvalid, apierrors.IsInvalid},
	} {
		if p.is(err) {
			classes = append(classes, p.class)
		}
	}
	if len(classes) == 0 {
		return "other"
	}
	return strings.Join(classes, "+")
}

// conflictFields returns the fields of the model's conflict paths, each once.
func conflictFields(paths []string) []string {
	var out []string
	for _, p := range paths {
		f, _, _ := strings.Cut(p, "[")
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// forComparison returns a copy of content c fit for comparison: owner references sorted by uid,
// since the table gives their order only in some cases. nil stays nil.
func forComparison(c map[string]any) map[string]any {
	if c == nil {
		return nil
	}
	out := clone(c).(map[string]any)
	if refs := asList(getPath(out, []string{"metadata", "ownerReferences"})); refs != nil {
		sort.SliceStable(refs, func(i, j int) bool {
			return asObject(refs[i])["uid"].(string) < asObject(refs[j])["uid"].(string)
		})
	}
	return out
}

// diffFields returns the fields at which a and b differ, such as metadata.labels, spec.tags
// or data: the top-level fields, and the fields of metadata, spec and status.
func diffFields(a, b any) []string {
	out := map[string]any{}
	var walk func(a, b any, path string)
	walk = func(a, b any, path string) {
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		// Recurse into objects, an absent one being empty, down to the fields of the table.
		if (aok || isAbsent(a)) && (bok || isAbsent(b)) && (aok || bok) && strings.Count(path, ".") < 1 {
			for _, k := range sortedKeys(am, bm) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(lookup(am, k), lookup(bm, k), p)
			}
			return
		}
		if !equal(a, b) {
			parts := strings.Split(path, ".")
			if parts[0] != "metadata" && parts[0] != "spec" && parts[0] != "status" {
				parts = parts[:1]
			}
			out[strings.Join(parts, ".")] = true
		}
	}
	walk(a, b, "")
	return sortedKeys(out)
}

func withoutTypeMeta(obj map[string]any) map[string]any {
	out := clone(obj).(map[string]any)
	delete(out, "apiVersion")
	delete(out, "kind")
	return out
}

// describeCase describes a case: what was generated and, when r is set, what it saw.
func describeCase(dc *differentialCase, r *caseRun) string {
	var b strings.Builder
	flavour := "unstructured"
	if dc.typed {
		flavour = "typed"
	}
	fmt.Fprintf(&b, "case %s=%d %s=1: %s, %s Helper", patchSeedEnvVar, dc.seed, patchCasesEnvVar, dc.kind.gvk.Kind, flavour)
	if dc.lifecycle != "" {
		fmt.Fprintf(&b, ", object %s", dc.lifecycle)
	}
	if dc.stale != "" {
		fmt.Fprintf(&b, ", History: %s", dc.stale)
	}
	if dc.theirs != nil {
		fmt.Fprintf(&b, ", other writer: %s", dc.theirWay)
	}
	switch {
	case dc.fault == faultNone:
	case dc.faultMode == faultRetry:
		fmt.Fprintf(&b, ", injected %s on the second %s request", dc.faultClass, dc.fault)
	case dc.faultMode == faultAfterConflicts:
		fmt.Fprintf(&b, ", injected %d conflicts, then %s, on the %s requests", dc.conflicts, dc.faultClass, dc.fault)
	default:
		fmt.Fprintf(&b, ", injected %s on every %s request", dc.faultClass, dc.fault)
	}
	if len(dc.scenarios) > 0 {
		fmt.Fprintf(&b, "\n  scenarios: %s", strings.Join(dc.scenarios, "; "))
	}
	if r == nil || r.obj == nil {
		fmt.Fprintf(&b, "\n  created: %s", marshal(content(toJSON(dc.initial))))
		return b.String()
	}
	var opts []string
	if r.history != nil {
		opts = append(opts, "a Writer with a *patch.History")
	}
	for _, opt := range r.opts {
		opts = append(opts, fmt.Sprintf("%T%v", opt, opt))
	}
	fmt.Fprintf(&b, "\n  options: [%s]", strings.Join(opts, " "))

	// S0 only at the fields that either writer changed or at which F diverges.
	s0 := content(r.s0)
	fields := diffFields(s0, r.aOpts)
	if r.s1 != nil {
		fields = append(fields, diffFields(s0, content(r.s1))...)
	}
	if r.pred.F != nil && r.f != nil {
		fields = append(fields, diffFields(forComparison(r.pred.F), forComparison(r.f))...)
	}
	shown := map[string]any{}
	for _, f := range fields {
		setPath(shown, strings.Split(f, "."), getPath(s0, strings.Split(f, ".")))
	}
	fmt.Fprintf(&b, "\n  S0:     %s (only the fields that matter)", marshal(shown))
	if r.s1 == nil {
		fmt.Fprintf(&b, "\n  S1:     gone")
	} else {
		fmt.Fprintf(&b, "\n  S1-S0:  %s", marshal(mergePatch(s0, content(r.s1))))
	}
	if dc.stale != "" {
		if r.l1 == nil {
			fmt.Fprintf(&b, "\n  L1:     gone (the first Patch's object)")
		} else {
			fmt.Fprintf(&b, "\n  L1-S0:  %s (the first Patch's object, resourceVersion %v)", marshal(mergePatch(s0, content(r.l1))), getPath(r.l1, []string{"metadata", "resourceVersion"}))
		}
		fmt.Fprintf(&b, "\n  skipped: %v (nothing sent because L1 holds the changes)", r.skipped)
		if p := r.rebased; p != nil {
			fmt.Fprintf(&b, "\n  composite (onto L1, then L1 to that against S1): error %s; F-S1: %s", strings.Join(p.Errs, " or "), marshal(mergePatch(contentOrNil(r.s1), forComparison(p.F))))
		}
	}
	fmt.Fprintf(&b, "\n  A-S0:   %s (with the options)", marshal(mergePatch(s0, r.aOpts)))
	fromS1 := func(f map[string]any) string {
		switch {
		case f == nil:
			return "gone"
		case r.s1 == nil:
			return string(marshal(f))
		}
		return string(marshal(mergePatch(content(r.s1), f)))
	}
	fmt.Fprintf(&b, "\n  want:   error %s", strings.Join(r.pred.Errs, " or "))
	if len(r.pred.Conflicts) > 0 {
		fmt.Fprintf(&b, " (conflicts: %s)", strings.Join(r.pred.Conflicts, ", "))
	}
	fmt.Fprintf(&b, "; F-S1: %s", fromS1(r.pred.F))
	gotErr := errorClass(r.err)
	if r.err != nil {
		gotErr += " (" + firstLine(r.err.Error()) + ")"
	}
	fmt.Fprintf(&b, "\n  got:    error %s; F-S1: %s", gotErr, fromS1(r.f))
	if diff := cmp.Diff(forComparison(r.pred.F), forComparison(r.f)); diff != "" {
		fmt.Fprintf(&b, "\n  F (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(toJSON(r.before), toJSON(r.obj)); diff != "" && r.err != nil {
		fmt.Fprintf(&b, "\n  obj (-before +after Patch):\n%s", diff)
	}
	return b.String()
}

// describeRequests lists the writes Patch sent.
func describeRequests(fc *faults.Client) string {
	var b strings.Builder
	b.WriteString("  Patch's requests:")
	for _, c := range fc.Calls() {
		fmt.Fprintf(&b, "\n    %s", firstLine(c.String()))
		if len(c.Patch) > 0 {
			p := string(c.Patch)
			if len(p) > 400 {
				p = p[:400] + "..."
			}
			fmt.Fprintf(&b, "\n      %s", p)
		}
	}
	return b.String()
}

// report fails t with every divergence, grouped by kind, each with its seeds and the smallest
// case that shows it.
func report(t *testing.T, seed int64, results []caseResult) {
	t.Helper()
	groups := map[string][]*caseResult{}
	predicted := map[string]int{}
	failed := 0
	for i := range results {
		r := &results[i]
		predicted[r.predicted]++
		if len(r.divergences) > 0 {
			failed++
		}
		for _, d := range r.divergences {
			groups[d] = append(groups[d], r)
		}
	}
	t.Logf("predicted outcomes: %v", predicted)
	checkStaleCoverage(t, results)
	// The generator must produce every outcome, or the run proves less than it seems to.
	if len(results) >= 200 {
		for _, class := range []string{errNone, errConflict, errNotFound, errForbidden, errInternal, errInvalid} {
			if predicted[class] == 0 {
				t.Errorf("no case of %d predicted the outcome %q: the generator is too narrow", len(results), class)
			}
		}
	}
	if failed == 0 {
		return
	}
	reportDivergences(t, patchSeedEnvVar, patchCasesEnvVar, seed, results)
}

// reportDivergences fails t with every divergence of results, grouped by kind, each with its
// seeds and the smallest case that shows it; seedVar and casesVar replay the run.
func reportDivergences(t *testing.T, seedVar, casesVar string, seed int64, results []caseResult) {
	t.Helper()
	groups := map[string][]*caseResult{}
	failed := 0
	for i := range results {
		r := &results[i]
		if len(r.divergences) > 0 {
			failed++
		}
		for _, d := range r.divergences {
			groups[d] = append(groups[d], r)
		}
	}
	if failed == 0 {
		return
	}
	names := sortedKeys(func() map[string]any {
		m := map[string]any{}
		for k := range groups {
			m[k] = true
		}
		return m
	}())
	sort.SliceStable(names, func(i, j int) bool { return len(groups[names[i]]) > len(groups[names[j]]) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d cases diverged from the model. Replay the run with %s=%d (and the same number of cases), one case with %s=<its seed> %s=1.\n",
		failed, len(results), seedVar, seed, seedVar, casesVar)
	for _, name := range names {
		// Seeds of the cases where this is the only divergence first: they show it alone.
		rs := slices.Clone(groups[name])
		sort.SliceStable(rs, func(i, j int) bool { return len(rs[i].divergences) < len(rs[j].divergences) })
		var seeds []string
		alone := 0
		for _, r := range rs {
			if len(r.divergences) == 1 {
				alone++
			}
			if len(seeds) < 8 {
				seeds = append(seeds, strconv.FormatInt(r.seed, 10))
			}
		}
		fmt.Fprintf(&b, "- %s: %d cases (%d alone), seeds %s\n", name, len(rs), alone, strings.Join(seeds, " "))
	}
	// The smallest case of each kind of divergence that some case shows alone; the others come
	// with one of those, usually as its consequence (a conflict missed, so a list written).
	alone := func(name string) bool {
		return slices.ContainsFunc(groups[name], func(r *caseResult) bool { return len(r.divergences) == 1 })
	}
	if !slices.ContainsFunc(names, alone) {
		alone = func(name string) bool { return name == names[0] }
	}
	shown := 0
	for _, name := range names {
		if !alone(name) {
			continue
		}
		shown++
		if shown > 30 {
			fmt.Fprintf(&b, "\n(more kinds of divergence, not shown)\n")
			break
		}
		// The fewest divergences, then the shortest description.
		rs := slices.Clone(groups[name])
		sort.SliceStable(rs, func(i, j int) bool {
			if len(rs[i].divergences) != len(rs[j].divergences) {
				return len(rs[i].divergences) < len(rs[j].divergences)
			}
			return len(rs[i].desc) < len(rs[j].desc)
		})
		fmt.Fprintf(&b, "\n== %s (%d cases); smallest:\n%s\n", name, len(rs), rs[0].desc)
	}
	t.Error(b.String())
}

// statusWrittenWithObject reports whether obj's managedFields show a status field written
// through the object itself (subresource "") rather than a status subresource.
func statusWrittenWithObject(obj map[string]any) bool {
	entries, _ := nestedField(obj, "metadata", "managedFields").([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if sub, _ := m["subresource"].(string); sub != "" {
			continue
		}
		fields, _ := m["fieldsV1"].(map[string]any)
		if status, ok := fields["f:status"].(map[string]any); ok && len(status) > 0 {
			return true
		}
	}
	return false
}

func nestedField(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// writtenFields is content without the normalisation: A may differ from S0 only in values the
// model treats as missing (an empty object), and then Patch may well write them.
func writtenFields(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			out[k] = v
		}
	}
	meta := asObject(obj["metadata"])
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		if v, ok := meta[k]; ok {
			out["metadata."+k] = v
		}
	}
	return out
}
