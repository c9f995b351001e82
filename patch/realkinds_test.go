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

// The differential test of real kinds: the Helper's cases drawn from the schemas the API server
// serves, for Kubernetes' own kinds and other projects' custom resources (internal/realkinds),
// rather than from shapes we wrote. The model is the one of model_test.go; what it cannot know,
// the API server's defaulting, normalisation and validation, the API server itself tells: the
// model's prediction is sent as a dry run, and F must equal what the dry run answered, or the
// Patch must fail as the dry run did, having written nothing of that part.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/faults"
)

const (
	// realSeedEnvVar and realCasesEnvVar set the seed and the number of cases of the tests of
	// real kinds; case i has seed TENON_REAL_SEED+i, so a case's seed with TENON_REAL_CASES=1
	// replays it alone (its kind follows from its seed).
	realSeedEnvVar  = "TENON_REAL_SEED"
	realCasesEnvVar = "TENON_REAL_CASES"
	// defaultRealCases is the number of cases per kind family by default (make test).
	defaultRealCases = 200
)

// realKind is a kind of internal/realkinds with its schema, loaded once.
type realKind struct {
	realkinds.Kind
	schema *realkinds.Schema
}

var (
	realKindsOnce sync.Once
	realKindsList []*realKind
	realKindsErr  error
)

// loadRealKinds returns every kind of internal/realkinds with its schema from the API server.
func loadRealKinds(t *testing.T) []*realKind {
	t.Helper()
	realKindsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, k := range realkinds.Kinds() {
			s, err := realkinds.Load(ctx, env.Config(), k.GVK)
			if err != nil {
				realKindsErr = err
				return
			}
			realKindsList = append(realKindsList, &realKind{Kind: k, schema: s})
		}
	})
	if realKindsErr != nil {
		t.Fatalf("failed to load the schemas of the real kinds: %v", realKindsErr)
	}
	return realKindsList
}

// families returns the kind families, sorted, and the kinds of each.
func families(kinds []*realKind) ([]string, map[string][]*realKind) {
	byFamily := map[string][]*realKind{}
	for _, k := range kinds {
		byFamily[k.Family] = append(byFamily[k.Family], k)
	}
	names := make([]string, 0, len(byFamily))
	for f := range byFamily {
		names = append(names, f)
	}
	sort.Strings(names)
	return names, byFamily
}

// realCaseKind returns the kind of the case of seed: the families in turn, a random kind of
// the family.
func realCaseKind(kinds []*realKind, seed int64) *realKind {
	names, byFamily := families(kinds)
	r := rand.New(rand.NewPCG(uint64(seed), 0x6b696e64))
	fam := byFamily[names[int(uint64(seed)%uint64(len(names)))]]
	return fam[r.IntN(len(fam))]
}

// TestRealKindsPatchAgreesWithTheModel runs random cases of Helper.Patch on objects of real kinds
// and compares the outcome with the model, made exact by the API server's dry run. Each case
// creates a seed object of its kind with a few changes, reads it (S0, typed for Kubernetes' own
// kinds half the time), lets another writer change it (S1), changes its own copy (A) by edits
// drawn from the kind's schema, sometimes at the very fields the other writer changed, and calls
// Patch with random owned conditions.
func TestRealKindsPatchAgreesWithTheModel(t *testing.T) {
	kinds := loadRealKinds(t)
	fams, _ := families(kinds)
	seed, n := realSettings(t, len(fams))
	t.Logf("%s=%d %s=%d (over %d kinds in %d families)", realSeedEnvVar, seed, realCasesEnvVar, n, len(kinds), len(fams))
	ns := env.Namespace(t)

	results := make([]caseResult, n)
	kindOf := make([]string, n)
	conds := make([]string, n) // how a case's writers edited status.conditions
	next := make(chan int)
	var wg sync.WaitGroup
	for range caseWorkers {
		wg.Go(func() {
			for i := range next {
				k := realCaseKind(kinds, seed+int64(i))
				kindOf[i] = k.Family + "/" + k.GVK.Kind
				results[i], conds[i] = runRealCase(t.Context(), k, ns, i, seed+int64(i))
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()

	perKind, predicted := map[string]int{}, map[string]int{}
	setups := 0
	for i, r := range results {
		perKind[kindOf[i]]++
		predicted[r.predicted]++
		if slices.ContainsFunc(r.divergences, func(d string) bool { return strings.HasPrefix(d, "setup: ") }) {
			setups++
		}
	}
	t.Logf("cases per kind: %v", perKind)
	condCases := map[string]int{}
	for i, c := range conds {
		if c != "" {
			condCases[kindOf[i]+" "+c]++
		}
	}
	t.Logf("cases whose writers edited status.conditions: %v", condCases)
	if n >= 1000 {
		// Conditions with fields of their own must be drawn: a Node's lastHeartbeatTime, a Pod's
		// lastProbeTime, a Deployment's lastUpdateTime, Cluster API's severity.
		for _, k := range []string{"core/Node", "core/Pod", "apps/Deployment", "cluster-api/Phase1Obj"} {
			if condCases[k+" both"] == 0 {
				t.Errorf("no case of %s had both writers edit status.conditions: the generator is too narrow", k)
			}
		}
	}
	t.Logf("predicted outcomes: %v", predicted)
	if n >= 400 && predicted[errNone] < n/3 {
		t.Errorf("only %d of %d cases predicted a successful Patch: the generator draws too few edits the API server accepts", predicted[errNone], n)
	}
	if setups > n/20 {
		t.Errorf("%d of %d cases failed to set up", setups, n)
	}
	reportDivergences(t, realSeedEnvVar, realCasesEnvVar, seed, results)
}

// realSettings returns the seed and the number of cases, from the environment: by default
// defaultRealCases for each of the families.
func realSettings(t *testing.T, families int) (seed int64, n int) {
	t.Helper()
	return seedAndCases(t, realSeedEnvVar, realCasesEnvVar, defaultRealCases*families)
}

// realCase is one case of a real kind.
type realCase struct {
	k     *realKind
	seed  int64
	key   types.NamespacedName
	typed bool
	gen   *realkinds.Gen
	owned []string

	initial, theirs, ours []realkinds.Edit
	theirWay              string
	theirErr              error

	fc  *faults.Client
	h   *patch.Helper
	obj client.Object
	// s0, s1 and a as the model sees them: in the typed form for a typed Helper.
	s0, s1, a map[string]any
	rawS1     map[string]any
	err       error
	f         map[string]any
	pred      prediction
	realized  string
}

// runRealCase runs the case of seed on an object named after i. It also says which writers
// edited status.conditions: "ours", "theirs", "both" or "".
func runRealCase(ctx context.Context, k *realKind, ns string, i int, seed int64) (caseResult, string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rc := &realCase{k: k, seed: seed, key: types.NamespacedName{Name: fmt.Sprintf("real-%d", i)}}
	if k.Namespaced {
		rc.key.Namespace = ns
	} else {
		rc.key.Name = fmt.Sprintf("%s-real-%d", ns, i)
	}
	rc.gen = &realkinds.Gen{R: rand.New(rand.NewPCG(uint64(seed), 0x7265616c))}
	defer rc.cleanup()
	if err := rc.prepare(ctx); err != nil {
		return caseResult{seed: seed, divergences: []string{"setup: " + firstLine(err.Error())}, desc: rc.describe() + "\nsetup failed: " + err.Error()}, ""
	}
	if err := rc.patch(ctx); err != nil {
		return caseResult{seed: seed, divergences: []string{"setup: " + firstLine(err.Error())}, desc: rc.describe() + "\nsetup failed: " + err.Error()}, ""
	}
	res := caseResult{seed: seed, predicted: rc.pred.Errs[0], divergences: rc.divergences()}
	if len(res.divergences) > 0 {
		res.desc = rc.describe() + "\n" + describeRequests(rc.fc)
	}
	edited := func(edits []realkinds.Edit) bool {
		return slices.ContainsFunc(edits, func(e realkinds.Edit) bool { return strings.HasPrefix(e.Path, "status.conditions") })
	}
	switch ours, theirs := edited(rc.ours), edited(rc.theirs) && rc.theirErr == nil; {
	case ours && theirs:
		return res, "both"
	case ours:
		return res, "ours"
	case theirs:
		return res, "theirs"
	}
	return res, ""
}

// cleanup deletes a cluster-scoped object, which outlives the test's namespace.
func (rc *realCase) cleanup() {
	if rc.k.Namespaced {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rc.k.GVK)
	u.SetName(rc.key.Name)
	_ = env.Client().Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	_ = env.Client().Delete(context.Background(), u)
}

// edits makes up to n edits of obj, drawn from the kind's schema, and returns the result.
func (rc *realCase) edits(obj map[string]any, n int, at []string) (map[string]any, []realkinds.Edit) {
	var done []realkinds.Edit
	for _, path := range at {
		if out, e, ok := rc.gen.EditAt(rc.k.schema, obj, path); ok {
			obj, done = out, append(done, e)
		}
	}
	for range n {
		if out, e, ok := rc.gen.EditObject(rc.k.schema, obj, realkinds.Roots(rc.k.Kind)); ok {
			obj, done = out, append(done, e)
		}
	}
	return obj, done
}

func (rc *realCase) prepare(ctx context.Context) error {
	c, r := env.Client(), rc.gen.R
	rc.typed = rc.k.Builtin() && r.Float64() < 0.5

	// S0: the seed with a few changes, or the seed alone when the API server refuses them.
	seed := realkinds.Object(rc.k.Kind, rc.key.Namespace, rc.key.Name)
	initial, edits := rc.edits(seed.Object, r.IntN(3), nil)
	if _, err := realkinds.CreateObject(ctx, c, rc.k.Kind, &unstructured.Unstructured{Object: initial}); err == nil {
		rc.initial = edits
	} else {
		// The seed alone, under another name: the refused object may exist, held by a finalizer.
		rc.key.Name += "-seed"
		if _, err := realkinds.CreateObject(ctx, c, rc.k.Kind, realkinds.Object(rc.k.Kind, rc.key.Namespace, rc.key.Name)); err != nil {
			return err
		}
	}
	raw, err := rc.getRaw(ctx)
	if err != nil || raw == nil {
		return fmt.Errorf("failed to read S0: %w", err)
	}
	obj := rc.newObject()
	if err := c.Get(ctx, rc.key, obj); err != nil {
		return fmt.Errorf("failed to read S0: %w", err)
	}
	rc.s0 = toJSON(obj)
	if rc.fc, err = faults.Wrap(env.Client(), faults.Plan{}); err != nil {
		return err
	}
	if rc.h, err = patch.NewHelper(obj, rc.fc); err != nil {
		return err
	}

	// The other writer, and our own changes: sometimes at the fields they changed.
	var theirPaths []string
	if r.Float64() < 0.85 {
		var target map[string]any
		target, rc.theirs = rc.edits(raw, 1+r.IntN(3), nil)
		rc.theirWay = "update"
		if r.Float64() < 0.5 {
			rc.theirWay = "merge patch"
		}
		rc.theirErr = rc.otherWriter(ctx, raw, target)
		for _, e := range rc.theirs {
			if r.Float64() < 0.4 {
				theirPaths = append(theirPaths, e.Path)
			}
		}
	}
	if rc.rawS1, err = rc.getRaw(ctx); err != nil || rc.rawS1 == nil {
		return fmt.Errorf("failed to read S1: %w", err)
	}
	rc.s1 = rc.rawS1
	if rc.typed {
		typedS1, err := decode(rc.k, true, rc.rawS1)
		if err != nil {
			return err
		}
		rc.s1 = toJSON(typedS1)
	}

	// Ours: edits of S0 as the Helper read it, that its type can hold.
	for attempt := 0; ; attempt++ {
		var ours map[string]any
		ours, rc.ours = rc.edits(raw, 1+r.IntN(3), theirPaths)
		a, err := decode(rc.k, rc.typed, ours)
		if err == nil {
			obj = a
			break
		}
		if attempt == 5 {
			return fmt.Errorf("no edit of ours fits the Go type: %w", err)
		}
	}
	if rc.typed {
		// The Helper's object is S0 as read, with our changes: what a typed object cannot
		// hold of S0 stays as read.
		a := toJSON(obj)
		obj, err = decode(rc.k, true, graft(rc.s0, rawContent(a)))
		if err != nil {
			return err
		}
	}
	rc.obj = obj
	rc.a = toJSON(obj)
	for _, c := range asList(getPath(rc.a, []string{"status", "conditions"})) {
		if t, ok := asObject(c)["type"].(string); ok && r.Float64() < 0.4 {
			rc.owned = append(rc.owned, t)
		}
	}
	return nil
}

// otherWriter writes target, the other writer's version of raw, by update or merge patch.
func (rc *realCase) otherWriter(ctx context.Context, raw, target map[string]any) error {
	c := env.Client()
	if rc.theirWay == "merge patch" {
		p := mergePatch(raw, target)
		st, hasStatus := p["status"]
		delete(p, "status")
		if len(p) > 0 {
			if err := c.Patch(ctx, rc.newUnstructured(), client.RawPatch(types.MergePatchType, marshal(p))); err != nil {
				return err
			}
		}
		if hasStatus && !rc.k.NoStatus {
			return c.Status().Patch(ctx, rc.newUnstructured(), client.RawPatch(types.MergePatchType, marshal(map[string]any{"status": st})))
		}
		return nil
	}
	u := &unstructured.Unstructured{Object: clone(target).(map[string]any)}
	if err := c.Update(ctx, u); err != nil {
		return err
	}
	if rc.k.NoStatus {
		return nil
	}
	u.Object["status"] = clone(target["status"])
	if u.Object["status"] == nil {
		delete(u.Object, "status")
	}
	return c.Status().Update(ctx, u)
}

func (rc *realCase) newObject() client.Object {
	if rc.typed {
		return rc.k.New()
	}
	return rc.newUnstructured()
}

func (rc *realCase) newUnstructured() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rc.k.GVK)
	u.SetNamespace(rc.key.Namespace)
	u.SetName(rc.key.Name)
	return u
}

func (rc *realCase) getRaw(ctx context.Context) (map[string]any, error) {
	u := rc.newUnstructured()
	if err := env.Client().Get(ctx, rc.key, u); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return toJSON(u.Object), nil
}

// decode returns obj as an object of k: typed, or unstructured.
func decode(k *realKind, typed bool, obj map[string]any) (client.Object, error) {
	if !typed {
		return toUnstructured(obj)
	}
	o := k.New()
	dec := json.NewDecoder(strings.NewReader(string(marshal(obj))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(o); err != nil {
		return nil, fmt.Errorf("failed to decode a %s: %w", k.GVK.Kind, err)
	}
	return o, nil
}

// patch asks the model, then the API server, what F should be, calls Patch and reads F. The
// prediction is made exact by dry runs against S1 before the Patch: after it the object is
// another.
func (rc *realCase) patch(ctx context.Context) error {
	mc := modelCase{S0: rc.s0, A: rc.a, S1: rc.s1, StatusSubresource: !rc.k.NoStatus, Owned: rc.owned}
	rc.pred = predict(mc)
	if err := rc.realize(ctx); err != nil {
		return err
	}
	var opts []patch.Option
	if len(rc.owned) > 0 {
		var owned patch.OwnedConditions
		for _, t := range rc.owned {
			owned = append(owned, conditions.Type(t))
		}
		opts = append(opts, owned)
	}
	rc.fc.Reset()
	rc.err = rc.h.Patch(ctx, rc.obj, opts...)
	f, err := rc.getRaw(ctx)
	if err != nil {
		return fmt.Errorf("failed to read F: %w", err)
	}
	if f != nil {
		rc.f = content(f)
	}
	return nil
}

// realize turns the model's prediction into the API server's: each part the prediction changes
// (metadata and spec; the status) is sent as a dry run of the predicted object, which the API
// server defaults, normalises and validates as it did the Patch's requests. A part it refuses is
// predicted refused: nothing of it written, and the error of its class.
func (rc *realCase) realize(ctx context.Context) error {
	if rc.pred.F == nil {
		return nil // gone
	}
	c := env.Client()
	raw := content(rc.rawS1)
	withoutStatus := func(m map[string]any) map[string]any {
		out := clone(m).(map[string]any)
		delete(out, "status")
		return out
	}
	// A part is written unless the model finds a conflict in it (for a kind without a status
	// subresource, one request carries both parts); it changes what the model sees, or an empty
	// object the model does not see.
	var mainConflict, statusConflict bool
	for _, c := range rc.pred.Conflicts {
		if strings.HasPrefix(c, "status.") {
			statusConflict = true
		} else {
			mainConflict = true
		}
	}
	if rc.k.NoStatus || mainConflict {
		mainConflict, statusConflict = mainConflict || statusConflict, mainConflict || statusConflict
	}
	predicted, rawS1 := rc.predicted(), rawContent(rc.rawS1)
	mainChanged := !mainConflict && (!equal(withoutStatus(rc.pred.F), withoutStatus(content(rc.s1))) ||
		!equal(withoutStatus(predicted), withoutStatus(rawS1)))
	statusChanged := !statusConflict && (!equal(lookup(rc.pred.F, "status"), lookup(content(rc.s1), "status")) ||
		!equal(lookup(predicted, "status"), lookup(rawS1, "status")))
	if rc.k.NoStatus {
		mainChanged, statusChanged = mainChanged || statusChanged, false
	}
	f := clone(raw).(map[string]any)
	rc.realized = "nothing to write"
	if mainChanged {
		main := &unstructured.Unstructured{Object: graft(rc.rawS1, predicted)}
		if err := c.Update(ctx, main, client.DryRunAll); err != nil {
			if !isRefusal(err) {
				return fmt.Errorf("failed to dry-run the predicted object: %w", err)
			}
			rc.realized = "the object refused: " + firstLine(err.Error())
			rc.pred = prediction{F: raw, Errs: []string{errorClass(err)}}
			return nil
		}
		f = content(toJSON(main.Object))
		if !rc.k.NoStatus {
			put(f, "status", lookup(raw, "status"))
		}
		rc.realized = "a dry run"
	}
	if statusChanged {
		st := &unstructured.Unstructured{Object: graft(rc.rawS1, predicted)}
		err := c.Status().Update(ctx, st, client.DryRunAll)
		if err != nil && isRefusal(err) && mainChanged {
			// The status is validated against the stored spec, which is S1's in this dry run but
			// the predicted one when the Helper sends it, after the main request (a Service's
			// load balancer ingress needs spec.type LoadBalancer): validated again on a scratch
			// object that has the predicted spec.
			st, err = rc.statusOnScratch(ctx, predicted, err)
		}
		if err != nil {
			if !isRefusal(err) {
				return fmt.Errorf("failed to dry-run the predicted status: %w", err)
			}
			rc.realized += "; the status refused: " + firstLine(err.Error())
			rc.pred = prediction{F: f, Errs: []string{errorClass(err)}}
			return nil
		}
		put(f, "status", lookup(content(toJSON(st.Object)), "status"))
		rc.realized = "a dry run"
	}
	rc.pred.F = f
	return nil
}

// statusOnScratch dry-runs the predicted status on a scratch copy of the object that holds the
// predicted metadata and spec and S1's status, created for the purpose and deleted after: what
// the status request meets once the main request is written. It returns the object the dry run answered,
// or refused, the refusal against S1 when the scratch object cannot be made.
func (rc *realCase) statusOnScratch(ctx context.Context, predicted map[string]any, refused error) (*unstructured.Unstructured, error) {
	c := env.Client()
	obj := graft(rc.rawS1, predicted)
	meta := asObject(obj["metadata"])
	scratch := map[string]any{"name": rc.key.Name + "-scratch"}
	if ns, ok := meta["namespace"]; ok {
		scratch["namespace"] = ns
	}
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := meta[k]; ok {
			scratch[k] = v
		}
	}
	body := clone(obj).(map[string]any)
	body["metadata"] = scratch
	status := body["status"]
	delete(body, "status")
	// What the API server allocates to each object cannot be copied: a Service's cluster IPs and
	// node ports.
	if spec, ok := body["spec"].(map[string]any); ok && body["kind"] == "Service" && body["apiVersion"] == "v1" {
		for _, k := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort"} {
			delete(spec, k)
		}
		for _, p := range asList(spec["ports"]) {
			delete(asObject(p), "nodePort")
		}
	}
	u := &unstructured.Unstructured{Object: body}
	if err := c.Create(ctx, u); err != nil {
		return nil, fmt.Errorf("%w (and no scratch object with the predicted spec to validate the status on: %s)", refused, err.Error())
	}
	defer func() { _ = c.Delete(context.WithoutCancel(ctx), u) }()
	// S1's status first, as the object has it when the Helper's status request arrives: a
	// status's validation may compare it with the old one (a Deployment's collisionCount cannot be
	// decremented).
	if s1, ok := rc.rawS1["status"]; ok {
		u.Object["status"] = clone(s1)
		if err := c.Status().Update(ctx, u); err != nil {
			return nil, fmt.Errorf("%w (and S1's status cannot be written to a scratch object with the predicted spec: %s)", refused, err.Error())
		}
	}
	u.Object["status"] = status
	if err := c.Status().Update(ctx, u, client.DryRunAll); err != nil {
		return nil, err
	}
	return u, nil
}

// predicted returns the model's F as an object to send. The model's normalisation drops empty
// objects, which the API server does not treat as missing: it defaults the fields of an object
// that is there (and a default of the object itself applies only when it is not), and may
// refuse an empty one (minProperties). So an empty object comes back where the Helper leaves one:
// where this reconcile set one that S0 did not have, or emptied one that S1 has too, and where
// the other writer's is kept. An empty list is a missing one for the Helper as for a typed object
// (Patch removes a list emptied), so it never comes back.
func (rc *realCase) predicted() map[string]any {
	return denormalize(rc.pred.F, rawContent(rc.a), rawContent(rc.rawS1), rawContent(rc.s0)).(map[string]any)
}

// denormalize returns pred, a normalised value merged from a, s1 and s0, with the empty objects
// of a or s1 it leaves out put back as predicted says.
func denormalize(pred, a, s1, s0 any) any {
	if l, ok := pred.([]any); ok {
		// A list is written whole: the one it came from, as that side holds it. Ours when this
		// reconcile changed it as encoded, since S1's may differ from it only by an empty object
		// the normalised prediction does not show; theirs otherwise.
		sides := []any{s1, a}
		if !sameEncoded(a, s0) {
			sides = []any{a, s1}
		}
		for _, from := range sides {
			if fl, ok := from.([]any); ok && equal(normalize(fl), l) {
				return clone(fl)
			}
		}
		return pred
	}
	p, ok := pred.(map[string]any)
	if !ok {
		return pred
	}
	am, s1m, s0m := asObject(a), asObject(s1), asObject(s0)
	out := map[string]any{}
	for k, v := range p {
		out[k] = denormalize(v, lookup(am, k), lookup(s1m, k), lookup(s0m, k))
	}
	for _, k := range sortedKeys(am, s1m) {
		if _, ok := p[k]; ok {
			continue
		}
		av, sv, s0v := lookup(am, k), lookup(s1m, k), lookup(s0m, k)
		switch {
		case !isAbsent(sv) && isAbsent(orAbsent(normalize(sv))) && (!isObject(sv) || !isAbsent(av) || isAbsent(s0v)):
			// S1 holds an empty value, which the Helper's diff does not touch: it stays (an
			// empty list, the same as a missing one for the Helper) or is merged into (an empty
			// object). Unless this reconcile removed the object: what the other writer left of
			// it (nothing) is then removed with it.
			if isObject(sv) {
				out[k] = denormalize(map[string]any{}, av, sv, s0v)
			} else {
				out[k] = clone(sv)
			}
		case !equal(av, s0v) && isObject(av) && (isObject(sv) || isAbsent(s0v)):
			// An object this reconcile emptied, which S1 has too, or created empty.
			out[k] = denormalize(map[string]any{}, av, sv, s0v)
		}
	}
	return out
}

// isRefusal reports whether err is the API server refusing an object: invalid, forbidden, or
// a bad request.
func isRefusal(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)
}

func (rc *realCase) divergences() []string {
	var out []string
	if got := errorClass(rc.err); !slices.Contains(rc.pred.Errs, got) {
		d := "error: want " + strings.Join(rc.pred.Errs, " or ")
		if rc.err != nil {
			got += " (" + firstLine(rc.err.Error()) + ")"
		}
		out = append(out, d+", got "+got)
	}
	want, got := withoutAllocated(forComparison(rc.pred.F)), withoutAllocated(forComparison(rc.f))
	s1, a, s0 := forComparison(content(rc.rawS1)), forComparison(content(rc.a)), forComparison(content(rc.s0))
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
			return "another"
		}
		out = append(out, fmt.Sprintf("%s: F at %s: want %s, got %s", rc.k.GVK.Kind, f, from(getPath(want, path)), from(getPath(got, path))))
	}
	return out
}

// withoutAllocated returns c without the values the API server allocates at random, which a
// dry run allocates anew: a Service's node ports.
func withoutAllocated(c map[string]any) map[string]any {
	if c == nil {
		return nil
	}
	spec := asObject(c["spec"])
	delete(spec, "healthCheckNodePort")
	for _, p := range asList(spec["ports"]) {
		delete(asObject(p), "nodePort")
	}
	return c
}

func (rc *realCase) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %s=%d %s=1: %s (%s), typed %t\n", realSeedEnvVar, rc.seed, realCasesEnvVar, rc.k.GVK.Kind, rc.k.Family, rc.typed)
	fmt.Fprintf(&b, "  initial edits: %v\n  their edits (%s): %v, error %v\n  our edits: %v, owned %v\n",
		rc.initial, rc.theirWay, rc.theirs, rc.theirErr, rc.ours, rc.owned)
	if rc.s0 != nil {
		fmt.Fprintf(&b, "  S1-S0: %s\n  A-S0:  %s\n", compactJSON(mergePatch(content(rc.s0), content(rc.s1))), compactJSON(mergePatch(content(rc.s0), content(rc.a))))
		fmt.Fprintf(&b, "  model: error %s, conflicts %v; realized by %s\n", strings.Join(rc.pred.Errs, "|"), rc.pred.Conflicts, rc.realized)
		fmt.Fprintf(&b, "  got:   error %v\n", rc.err)
		fmt.Fprintf(&b, "  F (-want +got):\n%s", cmp.Diff(forComparison(rc.pred.F), forComparison(rc.f)))
	}
	return b.String()
}

func compactJSON(v any) string {
	s := strings.TrimSpace(string(marshal(v)))
	if len(s) > 1500 {
		s = s[:1500] + "..."
	}
	return s
}
