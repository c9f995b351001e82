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

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/internal/pause"
	"github.com/tenon-dev/tenon/internal/testkit"
)

// withWatch is embedded under an unexported name, so that Client's methods are promoted without
// exposing the wrapped client as a field.
type withWatch = client.WithWatch

// Client is a client that records every call it makes and injects the faults of a [Plan]. It
// wraps another client, which may be controller-runtime's fake client, a client of a real or
// envtest API server, or a manager's client, through controller-runtime's interceptor, so it has
// the wrapped client's behaviour in everything else.
//
// A Client is safe for concurrent use. Its records grow with every call until [Client.Reset].
type Client struct {
	withWatch

	inner client.Client
	plan  Plan
	seed  int64

	mu    sync.Mutex
	seq   int
	calls []Call
	rules []ruleState
}

var _ client.WithWatch = (*Client)(nil)

type ruleState struct {
	count int
	fired int
	armed map[objectID]int // for After: calls counted per object since the arming call
}

type objectID struct {
	gk  schema.GroupKind
	key types.NamespacedName
}

// Wrap returns a Client that makes its calls through c, records them, and injects the faults
// of plan. c is typically a client.WithWatch; a client without Watch gets a Watch that fails.
//
// It returns an error, and no Client, when the plan is invalid (the error lists every rule
// that cannot work as written: an unknown verb or fault, both Fault and Err, no effect, a
// LostResponse without an error, negative counts or durations, a probability outside [0, 1]) or
// its seed comes from a TENON_FAULTS_SEED that is not an integer. The plan is copied: changing
// it afterwards has no effect.
func Wrap(c client.Client, plan Plan) (*Client, error) {
	if err := plan.validate(); err != nil {
		return nil, err
	}
	seed, err := seedFor(plan.Seed)
	if err != nil {
		return nil, err
	}
	plan.Rules = slices.Clone(plan.Rules)
	fc := &Client{inner: c, plan: plan, seed: seed, rules: make([]ruleState, len(plan.Rules))}
	for i := range fc.rules {
		if plan.Rules[i].After != "" {
			fc.rules[i].armed = map[objectID]int{}
		}
	}
	inner, ok := c.(client.WithWatch)
	if !ok {
		inner = noWatch{c}
	}
	fc.withWatch = interceptor.NewClient(inner, fc.funcs())
	return fc, nil
}

// Record returns a Client that makes its calls through c and records them, without injecting
// anything: for counting the requests of the code under test.
func Record(c client.Client) *Client {
	fc, _ := Wrap(c, Plan{Seed: 1}) // an empty plan with a fixed seed cannot fail
	return fc
}

// TB is the interface that *testing.T, *testing.B, *testing.F and Ginkgo v2's GinkgoT() satisfy
// (GinkgoTB() is not needed). It is the same type as
// [github.com/tenon-dev/tenon/testing/reconciletest.TB] and
// [github.com/tenon-dev/tenon/testing/testenv.TB], so one t passes to all three packages: a
// helper that takes a faults.TB can pass its t on to the other two.
//
// It requires these methods of testing.TB, which a TB of your own must implement:
//
//	Helper()
//	Name() string
//	Context() context.Context
//	Cleanup(func())
//	Failed() bool
//	Logf(format string, args ...any)
//	Errorf(format string, args ...any)
//	Fatalf(format string, args ...any)
//
// [New] uses Helper, Cleanup, Failed, Logf and Fatalf: from a Ginkgo spec, call
// faults.New(GinkgoT(), c, plan), and a failed spec logs the seed as a failed test does.
type TB = testkit.TB

// New is [Wrap] for tests: it fails t at once when the plan is invalid, and when t fails it logs
// the plan's seed and how to replay the run with it.
func New(t TB, c client.Client, plan Plan) *Client {
	t.Helper()
	fc, err := Wrap(c, plan)
	if err != nil {
		t.Fatalf("faults: %v", err)
		return nil
	}
	t.Cleanup(func() {
		if t.Failed() && plan.Seed == 0 {
			t.Logf("faults: the fault plan used seed %d; replay this run with %s=%d", fc.seed, SeedEnvVar, fc.seed)
		}
	})
	return fc
}

// Seed returns the seed of the plan's random choices: Plan.Seed, or the one picked for it.
func (c *Client) Seed() int64 { return c.seed }

// Plan returns a copy of the client's fault plan, with the seed it uses.
func (c *Client) Plan() Plan {
	return Plan{Seed: c.seed, Rules: slices.Clone(c.plan.Rules)}
}

// Unwrap returns the wrapped client. Calls made through it are neither recorded nor faulted.
func (c *Client) Unwrap() client.Client { return c.inner }

// Calls returns the recorded calls that every selector selects, in the order they started.
// Without selectors it returns every recorded call.
func (c *Client) Calls(selectors ...Selector) []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Call
	for _, call := range c.calls {
		if selectsAll(call, selectors) {
			out = append(out, call)
		}
	}
	slices.SortFunc(out, func(a, b Call) int { return a.Seq - b.Seq })
	return out
}

// Count returns the number of recorded calls that every selector selects, as in
// Count(faults.Patch, faults.Status) for status patches, or Count(faults.Writes) for writes.
func (c *Client) Count(selectors ...Selector) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if selectsAll(call, selectors) {
			n++
		}
	}
	return n
}

// Writes returns the recorded calls with one of the [Writes] verbs, whatever their outcome: an
// attempted write counts, even when it failed.
func (c *Client) Writes() []Call {
	return c.Calls(Writes)
}

// Reset forgets the recorded calls. The rules keep counting, so Nth still means the Nth call
// since the Client was made, and Seq keeps increasing.
func (c *Client) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}

// do runs one call: it applies the rules, waits out their latency, then either returns the
// injected error or forwards the call, and records the outcome. succeeded fills in what a
// successful call returned.
func (c *Client) do(ctx context.Context, call Call, forward func() error, succeeded func(*Call)) error {
	rule := c.begin(&call)
	var injected error
	lost := false
	if rule >= 0 {
		r := &c.plan.Rules[rule]
		injected = c.faultError(r, rule, call)
		lost = r.LostResponse
	}
	if call.Latency > 0 {
		if err := pause.For(ctx, call.Latency); err != nil {
			call.Outcome, call.Err, call.Rule = Failed, fmt.Errorf("failed to %s: %w", call.describe(), err), -1
			c.finish(call, false)
			return call.Err
		}
	}
	if injected != nil && !lost {
		call.Outcome, call.Err = Injected, injected
		c.finish(call, false)
		return injected
	}
	err := forward()
	call.Forwarded = true
	if err == nil && succeeded != nil {
		succeeded(&call)
	}
	switch {
	case injected != nil:
		call.Outcome, call.Err = Injected, injected
	case err != nil:
		call.Outcome, call.Err, call.Rule = Failed, err, -1
	default:
		call.Outcome, call.Rule = OK, -1
	}
	c.finish(call, err == nil)
	if injected != nil {
		return injected
	}
	return err
}

// begin numbers the call, counts it for every rule that selects it, and returns the rule whose
// error it gets, or -1; call.Latency is set to the latency of the rules that fire.
func (c *Client) begin(call *Call) (rule int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	call.Seq = c.seq
	rule = -1
	id := objectID{gk: call.GVK.GroupKind(), key: call.Key}
	for i := range c.plan.Rules {
		if !c.fires(i, id, call) {
			continue
		}
		r := &c.plan.Rules[i]
		call.Latency += r.Latency
		if rule < 0 && (r.Fault != "" || r.Err != nil) {
			rule = i
		}
	}
	call.Rule = rule
	return rule
}

// fires counts call for rule i, when the rule selects it (per object id, for a rule armed by
// After), and reports whether the rule fires on it: its Nth, Every, Times and Probability allow
// it. c.mu is held.
func (c *Client) fires(i int, id objectID, call *Call) bool {
	r, s := &c.plan.Rules[i], &c.rules[i]
	if !r.Selects(*call) {
		return false
	}
	var n int
	if r.After != "" {
		count, armed := s.armed[id]
		if !armed {
			return false
		}
		n = count + 1
		s.armed[id] = n
	} else {
		s.count++
		n = s.count
	}
	if (r.Nth > 0 && n != r.Nth) || (r.Every > 0 && n%r.Every != 0) || (r.Times > 0 && s.fired >= r.Times) {
		return false
	}
	if r.Probability > 0 && draw(c.seed, i, n) >= r.Probability {
		return false
	}
	s.fired++
	return true
}

// finish records the call and, when it succeeded on the API server, arms the rules that wait
// for a call with its verb.
func (c *Client) finish(call Call, succeeded bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	if !succeeded || call.Key.Name == "" {
		return
	}
	for i := range c.plan.Rules {
		r := &c.plan.Rules[i]
		if r.After != call.Verb {
			continue
		}
		target := r.Match
		target.Verbs, target.Subresource = nil, ""
		if target.Selects(call) {
			c.rules[i].armed[objectID{gk: call.GVK.GroupKind(), key: call.Key}] = 0
		}
	}
}

// draw returns the random number in [0, 1) for the nth call that rule counts: a hash of the
// seed, the rule and n only, so that calls on other rules, concurrent or not, cannot change it.
func draw(seed int64, rule, n int) float64 {
	h := mix(uint64(seed) ^ mix(uint64(rule)<<32|uint64(n)))
	return float64(h>>11) / (1 << 53)
}

// mix is the finalizer of SplitMix64: a bijection whose output bits each depend on every input
// bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func seedFor(seed int64) (int64, error) {
	if seed != 0 {
		return seed, nil
	}
	if v := os.Getenv(SeedEnvVar); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s == 0 {
			return 0, fmt.Errorf("failed to read the fault plan seed: %s=%q is not a non-zero integer", SeedEnvVar, v)
		}
		return s, nil
	}
	for seed == 0 {
		seed = rand.Int64() //nolint:gosec // test randomness, not security
	}
	return seed, nil
}

// describe names what the call acts on, for errors: "get Widget default/w".
func (c Call) describe() string {
	s := string(c.Verb) + " " + c.GVK.Kind
	switch {
	case c.Key.Name != "":
		s += " " + c.Key.String()
	case c.Key.Namespace != "":
		s += " in " + c.Key.Namespace
	}
	if c.Subresource != "" {
		s += " " + c.Subresource
	}
	return s
}

// newCall starts the record of a call on obj, an object or a list.
func (c *Client) newCall(verb Verb, obj runtime.Object, key types.NamespacedName, subresource string) Call {
	call := Call{Verb: verb, Key: key, Subresource: subresource, Rule: -1}
	gvk, err := c.inner.GroupVersionKindFor(obj)
	if err != nil {
		// Not in the scheme: the wrapped client will fail the call; name the Go type meanwhile.
		gvk = schema.GroupVersionKind{Kind: reflect.TypeOf(obj).Elem().Name()}
	}
	if meta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	call.GVK = gvk
	return call
}

func copyOf(obj client.Object) client.Object {
	cp, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return nil
	}
	return cp
}

// patchVerb returns the verb of a call that sends patch: [Apply] for a patch of the apply type
// (server-side apply of a typed object, as tenon's patch.Applier sends it), [Patch] otherwise.
func patchVerb(patch client.Patch) Verb {
	if patch.Type() == types.ApplyPatchType {
		return Apply
	}
	return Patch
}

func patchData(patch client.Patch, obj client.Object) []byte {
	data, err := patch.Data(obj)
	if err != nil {
		return nil
	}
	return data
}

// applyMeta reads the kind, namespace and name of an apply configuration, typed or unstructured,
// from its JSON form.
func applyMeta(ac runtime.ApplyConfiguration) (*unstructured.Unstructured, []byte) {
	data, err := json.Marshal(ac)
	if err != nil {
		return &unstructured.Unstructured{Object: map[string]any{}}, nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	_ = json.Unmarshal(data, &u.Object)
	return u, data
}

func (c *Client) funcs() interceptor.Funcs {
	f := c.objectFuncs()
	c.subResourceFuncs(&f)
	return f
}

// objectFuncs intercepts the calls on objects.
func (c *Client) objectFuncs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, wc client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			call := c.newCall(Get, obj, key, "")
			return c.do(ctx, call, func() error { return wc.Get(ctx, key, obj, opts...) }, func(call *Call) {
				call.ResourceVersion, call.Object = obj.GetResourceVersion(), copyOf(obj)
			})
		},
		List: func(ctx context.Context, wc client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			call := c.newCall(List, list, types.NamespacedName{Namespace: lo.Namespace}, "")
			return c.do(ctx, call, func() error { return wc.List(ctx, list, opts...) }, func(call *Call) {
				call.ResourceVersion = list.GetResourceVersion()
			})
		},
		Watch: func(ctx context.Context, wc client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			call := c.newCall(Watch, list, types.NamespacedName{Namespace: lo.Namespace}, "")
			var w watch.Interface
			err := c.do(ctx, call, func() (err error) { w, err = wc.Watch(ctx, list, opts...); return err }, nil)
			if err != nil {
				if w != nil {
					w.Stop() // the response was "lost"
				}
				return nil, err
			}
			return w, nil
		},
		Create: func(ctx context.Context, wc client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			call := c.newCall(Create, obj, client.ObjectKeyFromObject(obj), "")
			return c.do(ctx, call, func() error { return wc.Create(ctx, obj, opts...) }, written(obj))
		},
		Update: func(ctx context.Context, wc client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			call := c.newCall(Update, obj, client.ObjectKeyFromObject(obj), "")
			return c.do(ctx, call, func() error { return wc.Update(ctx, obj, opts...) }, written(obj))
		},
		Patch: func(ctx context.Context, wc client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			call := c.newCall(patchVerb(patch), obj, client.ObjectKeyFromObject(obj), "")
			call.Patch = patchData(patch, obj)
			return c.do(ctx, call, func() error { return wc.Patch(ctx, obj, patch, opts...) }, written(obj))
		},
		Apply: func(ctx context.Context, wc client.WithWatch, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			call := c.applyCall(ac, "")
			return c.do(ctx, call, func() error { return wc.Apply(ctx, ac, opts...) }, applied(ac))
		},
		Delete: func(ctx context.Context, wc client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			call := c.newCall(Delete, obj, client.ObjectKeyFromObject(obj), "")
			return c.do(ctx, call, func() error { return wc.Delete(ctx, obj, opts...) }, nil)
		},
		DeleteAllOf: func(ctx context.Context, wc client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			do := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
			call := c.newCall(DeleteAllOf, obj, types.NamespacedName{Namespace: do.Namespace}, "")
			return c.do(ctx, call, func() error { return wc.DeleteAllOf(ctx, obj, opts...) }, nil)
		},
	}
}

// subResourceFuncs intercepts the calls on subresources, in f.
func (c *Client) subResourceFuncs(f *interceptor.Funcs) {
	f.SubResourceGet = func(ctx context.Context, wc client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceGetOption) error {
		call := c.newCall(Get, obj, client.ObjectKeyFromObject(obj), sub)
		return c.do(ctx, call, func() error { return wc.SubResource(sub).Get(ctx, obj, subObj, opts...) }, func(call *Call) {
			call.ResourceVersion, call.Object = subObj.GetResourceVersion(), copyOf(subObj)
		})
	}
	f.SubResourceCreate = func(ctx context.Context, wc client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
		call := c.newCall(Create, obj, client.ObjectKeyFromObject(obj), sub)
		return c.do(ctx, call, func() error { return wc.SubResource(sub).Create(ctx, obj, subObj, opts...) }, func(call *Call) {
			call.Object = copyOf(subObj)
		})
	}
	f.SubResourceUpdate = func(ctx context.Context, wc client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		call := c.newCall(Update, obj, client.ObjectKeyFromObject(obj), sub)
		return c.do(ctx, call, func() error { return wc.SubResource(sub).Update(ctx, obj, opts...) }, written(obj))
	}
	f.SubResourcePatch = func(ctx context.Context, wc client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		call := c.newCall(patchVerb(patch), obj, client.ObjectKeyFromObject(obj), sub)
		call.Patch = patchData(patch, obj)
		return c.do(ctx, call, func() error { return wc.SubResource(sub).Patch(ctx, obj, patch, opts...) }, written(obj))
	}
	f.SubResourceApply = func(ctx context.Context, wc client.Client, sub string, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
		call := c.applyCall(ac, sub)
		return c.do(ctx, call, func() error { return wc.SubResource(sub).Apply(ctx, ac, opts...) }, applied(ac))
	}
}

func (c *Client) applyCall(ac runtime.ApplyConfiguration, sub string) Call {
	u, data := applyMeta(ac)
	call := Call{
		Verb:        Apply,
		GVK:         u.GroupVersionKind(),
		Key:         types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()},
		Subresource: sub,
		Rule:        -1,
		Patch:       data,
	}
	return call
}

// written records what a successful write returned.
func written(obj client.Object) func(*Call) {
	return func(call *Call) {
		call.Key.Name = obj.GetName() // generateName
		call.ResourceVersion, call.Object = obj.GetResourceVersion(), copyOf(obj)
	}
}

// applied records what a successful apply returned.
func applied(ac runtime.ApplyConfiguration) func(*Call) {
	return func(call *Call) {
		u, _ := applyMeta(ac)
		call.ResourceVersion, call.Object = u.GetResourceVersion(), u
	}
}

// noWatch gives a client without Watch the method, failing.
type noWatch struct {
	client.Client
}

// Watch fails: the wrapped client cannot watch.
func (n noWatch) Watch(_ context.Context, list client.ObjectList, _ ...client.ListOption) (watch.Interface, error) {
	return nil, fmt.Errorf("failed to watch %T: the wrapped client %T cannot watch", list, n.Client)
}
