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

package reconciletest

import (
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/internal/pause"
	"github.com/tenon-dev/tenon/internal/testkit"
	"github.com/tenon-dev/tenon/testing/faults"
)

// TB is the interface that *testing.T, *testing.B, *testing.F and Ginkgo v2's GinkgoT() satisfy
// (GinkgoTB() is not needed). It is the same type as
// [github.com/tenon-dev/tenon/testing/faults.TB] and
// [github.com/tenon-dev/tenon/testing/testenv.TB], so one t passes to all three packages: a
// helper that takes a reconciletest.TB can pass its t on to the other two.
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
// The harness uses Helper, Context, Logf and Fatalf.
type TB = testkit.TB

// Defaults of [Harness].
const (
	// DefaultMaxSteps bounds the reconciles of [Harness.ReconcileUntilStable] and
	// [Harness.AssertIdempotent].
	DefaultMaxSteps = 10
	// DefaultWaitTimeout bounds each wait for the cache.
	DefaultWaitTimeout = 30 * time.Second
	// DefaultMaxWait is the longest RequeueAfter the harness waits out.
	DefaultMaxWait = 10 * time.Second
)

// Harness drives a reconcile.Reconciler directly, one reconcile at a time, and sees every
// request it makes through a [faults.Client]. Set Reconciler and Client; the other fields have
// working defaults.
//
// A Harness remembers the steps it ran and is not safe for concurrent use. It attributes every
// call made through Client during a reconcile to that reconcile, so nothing else should use
// Client meanwhile.
type Harness struct {
	// Reconciler is the reconciler under test. Required.
	Reconciler reconcile.Reconciler

	// Client is the client Reconciler reads and writes through, wrapped by the faults package:
	// faults.Record(c) to count its requests, faults.Wrap(c, plan) to inject faults as well.
	// Required.
	Client *faults.Client

	// Cache is where Reconciler's reads come from, when they do not come straight from the API
	// server: a manager's cache, or an informer cache behind Client. After each reconcile, the
	// harness waits until Cache returns every object the reconcile wrote at the written
	// resourceVersion or a later one (or gone, for a delete), so the next reconcile does not act
	// on a stale read, as a controller would after the watch event. Only kinds the reconciler
	// has read through Client are waited for, so the harness never makes the cache start an
	// informer the reconciler does not use. Nil (the fake client, or a client without a cache):
	// nothing to wait for.
	Cache client.Reader

	// Reader reads objects before the idempotency check, for the diffs of its failure message.
	// Defaults to the client Client wraps.
	Reader client.Reader

	// MaxSteps bounds the reconciles of ReconcileUntilStable and AssertIdempotent. Defaults to
	// [DefaultMaxSteps]; raise it for fault plans that fail many calls.
	MaxSteps int

	// WaitTimeout bounds each wait for Cache. Defaults to [DefaultWaitTimeout].
	WaitTimeout time.Duration

	// MaxWait is the longest RequeueAfter that ReconcileUntilStable and AssertIdempotent wait
	// out, in real time, before they reconcile again, as the controller would: a reconciler
	// that waits for something asynchronous (an external resource being provisioned, a Job to
	// finish) returns a short RequeueAfter and is reconciled again after it, so a test can drive
	// it to Ready. A longer RequeueAfter is a poll at steady state (requeue.Poll): the harness
	// does not wait for it, and the reconcile that returned it can be stable. Defaults to
	// [DefaultMaxWait]. Negative: never wait, every requeue counts as a poll. A reconciler that
	// polls more often than MaxWait at steady state needs a MaxWait below its interval.
	MaxWait time.Duration

	// Clock is the clock Reconciler reads the time from, when the test gives it one that it
	// moves by hand, such as k8s.io/utils/clock/testing's FakeClock. Before the reconcile that
	// must write nothing, AssertIdempotent moves it forward to the next whole minute, but by
	// less than the RequeueAfter of the finished reconcile, when it returned one (the reconciler
	// may act once its requeue is due). Nil: the reconciler reads the real clock, which
	// AssertIdempotent lets pass into the next second in any case.
	Clock Clock

	steps []Step
	read  map[schema.GroupKind]client.Object // a prototype of the Go type each kind was read with
}

// Clock is a clock that a test moves forward by hand, as [Harness.Clock]. The FakeClock of
// k8s.io/utils/clock/testing satisfies it.
type Clock interface {
	// Now returns the clock's current time.
	Now() time.Time
	// Step moves the clock forward by d.
	Step(d time.Duration)
}

var _ Clock = (*clocktesting.FakeClock)(nil)

// Steps returns every step the harness has run.
func (h *Harness) Steps() []Step {
	return slices.Clone(h.steps)
}

// Reconcile runs one reconcile of req and returns what it did. It fails t only when the harness
// cannot do its job (no Reconciler or Client, a cache that does not catch up); the reconcile's
// own error is in the step, for assertions such as
//
//	g.Expect(h.Reconcile(t, req)).To(matchers.BeRequeuedAfter(time.Minute))
//
// Reconcile never waits for a requeue: the next call reconciles at once.
func (h *Harness) Reconcile(t TB, req reconcile.Request) Step {
	t.Helper()
	if h.Reconciler == nil || h.Client == nil {
		t.Fatalf("reconciletest: set Harness.Reconciler and Harness.Client (a *faults.Client wrapping the reconciler's client)")
		return Step{}
	}
	ctx := t.Context()
	mark := lastSeq(h.Client)
	step := Step{Number: len(h.steps) + 1, Request: req, maxWait: h.maxWait(), start: time.Now()}
	step.Result, step.Err = h.call(ctx, req)
	step.end = time.Now()
	step.Calls = h.Client.Calls(faults.SelectorFunc(func(c faults.Call) bool { return c.Seq > mark }))
	h.steps = append(h.steps, step)
	h.learnReads(step)
	if err := h.waitForCache(ctx, step); err != nil {
		t.Fatalf("reconciletest: after %s:\n%v", step, err)
	}
	return step
}

// call runs the reconciler, turning a panic into an error as controller-runtime does.
func (h *Harness) call(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v [recovered]\n%s", r, debug.Stack())
		}
	}()
	return h.Reconciler.Reconcile(ctx, req)
}

// maxWait is MaxWait with its default; negative for no waits.
func (h *Harness) maxWait() time.Duration {
	if h.MaxWait == 0 {
		return DefaultMaxWait
	}
	return h.MaxWait
}

// ReconcileUntilStable reconciles req until a reconcile is stable (see [Step.Stable]: no error,
// no write request, no requeue the harness waits for), and returns how many reconciles that
// took. Between two reconciles it waits out a RequeueAfter of at most MaxWait, as the
// controller would; after an error, a write, or a longer RequeueAfter it reconciles again at
// once, as the retry or the watch event of a write would.
//
// Under a fault plan, the stable reconcile proves that the reconciler recovered from every
// fault; ReconcileUntilStable then logs how many reconciles that took, how many faults were
// injected, and the plan's seed. It fails t, listing every step with its calls, when a
// reconcile returns a terminal error or MaxSteps reconciles are not enough.
func (h *Harness) ReconcileUntilStable(t TB, req reconcile.Request) int {
	t.Helper()
	first := len(h.steps)
	n, ok := h.until(t, req, "become stable", Step.Stable)
	if !ok || len(h.Client.Plan().Rules) == 0 {
		return n
	}
	injected := 0
	for _, s := range h.steps[first:] {
		for _, c := range s.Calls {
			if c.Outcome == faults.Injected {
				injected++
			}
		}
	}
	t.Logf("reconciletest: %s became stable in %d reconciles; %d faults injected%s", req, n, injected, h.seedNote())
	return n
}

// seedNote is " (fault plan seed N)" for a client with a fault plan, so a failure can be
// replayed, and empty for a client that only records.
func (h *Harness) seedNote() string {
	plan := h.Client.Plan()
	if len(plan.Rules) == 0 {
		return ""
	}
	return fmt.Sprintf(" (fault plan seed %d)", plan.Seed)
}

// until reconciles req until done reports true for a step, waiting out the requeues the harness
// waits for between reconciles, and reports whether it got there.
func (h *Harness) until(t TB, req reconcile.Request, goal string, done func(Step) bool) (int, bool) {
	t.Helper()
	limit := h.MaxSteps
	if limit <= 0 {
		limit = DefaultMaxSteps
	}
	first := len(h.steps)
	for n := 1; n <= limit; n++ {
		step := h.Reconcile(t, req)
		if done(step) {
			return n, true
		}
		if step.Terminal() {
			t.Fatalf("reconciletest: %s did not %s: reconcile %d returned a terminal error, which controller-runtime does not retry%s:\n%s",
				req, goal, n, h.seedNote(), stepLog(h.steps[first:]))
			return n, false
		}
		if d, waits := step.wait(); waits && n < limit {
			if err := pause.For(t.Context(), d); err != nil {
				t.Fatalf("reconciletest: %s did not %s: the test ended while the harness waited %v for the requeue of reconcile %d:\n%s",
					req, goal, d, n, stepLog(h.steps[first:]))
				return n, false
			}
		}
	}
	t.Fatalf("reconciletest: %s did not %s in %d reconciles%s:\n%s",
		req, goal, limit, h.seedNote(), stepLog(h.steps[first:]))
	return limit, false
}

// AssertIdempotent reconciles req until a reconcile finishes (returns no error and no requeue
// the harness waits for: it is done, or polls), then once more, later, and fails t when that
// last reconcile fails or sends any write request: a reconcile of an object that is already in
// its desired state must change nothing, whenever it runs. A reconciler that writes nothing and
// polls passes. Requeues of at most MaxWait are waited out, as by
// [Harness.ReconcileUntilStable]. The failure message lists each write and, for objects the
// reconciler had read or written before, a diff of what the write changed.
//
// A write computed from the time (a status that says "synced at 10:04:05", a timestamp
// refreshed on every pass) looks idempotent to two reconciles in the same second, and writes
// again on every reconcile after it. So the last reconcile runs in a later second of the real
// clock than the end of the finished one: AssertIdempotent waits for the next second, less
// than one second, as the API server's clock, which stamps managedFields and the times of
// metav1.Now, moves on too. A reconciler that reads the time from a clock the test controls
// sees it moved forward as well: see [Harness.Clock].
//
// Run it without a fault plan, or with one that cannot fail the last reconcile; use
// [Harness.ReconcileUntilStable] to reconcile under faults.
func (h *Harness) AssertIdempotent(t TB, req reconcile.Request) {
	t.Helper()
	if _, ok := h.until(t, req, "finish", Step.finished); !ok {
		return
	}
	stepped, err := h.moveOn(t.Context(), h.steps[len(h.steps)-1])
	if err != nil {
		t.Fatalf("reconciletest: %s: the test ended while the harness waited for the next second before the last reconcile", req)
		return
	}
	before := h.snapshot(t.Context())
	step := h.Reconcile(t, req)
	if step.Err != nil {
		t.Fatalf("reconciletest: %s is not idempotent: the reconcile after a finished one failed%s:\n  %s", req, h.seedNote(), step)
		return
	}
	writes := step.Writes()
	if len(writes) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reconciletest: %s is not idempotent: the reconcile after a finished one sent %d write(s)%s:", req, len(writes), h.seedNote())
	for _, w := range writes {
		b.WriteString("\n  " + w.String())
		b.WriteString(indent(describeWrite(w, before), "    "))
	}
	fmt.Fprintf(&b, "\nAll calls of that reconcile:\n  %s", step)
	finished := h.steps[len(h.steps)-2]
	fmt.Fprintf(&b, "\nThat reconcile started at %s, in a later second than the end of the finished reconcile %d (%s)",
		step.start.Format(clockFormat), finished.Number, finished.end.Format(clockFormat))
	if stepped > 0 {
		fmt.Fprintf(&b, ", with Harness.Clock moved forward by %v", stepped)
	}
	b.WriteString(". A value computed from the time and written on every reconcile (a timestamp, \"synced at ...\") " +
		"makes a reconciler write forever: write a time only with the change it dates, as a condition's lastTransitionTime.")
	t.Fatalf("%s", b.String())
}

// clockFormat shows times to the millisecond in failure messages.
const clockFormat = "15:04:05.000"

// moveOn waits until the real clock is in a later second than the end of the finished step,
// and moves Clock forward to its next whole minute, by less than the finished step's
// RequeueAfter. It returns how far it moved Clock.
func (h *Harness) moveOn(ctx context.Context, finished Step) (time.Duration, error) {
	if err := pause.For(ctx, time.Until(finished.end.Truncate(time.Second).Add(time.Second))); err != nil {
		return 0, err
	}
	if h.Clock == nil {
		return 0, nil
	}
	now := h.Clock.Now()
	d := now.Truncate(time.Minute).Add(time.Minute).Sub(now)
	if poll := finished.Result.RequeueAfter; poll > 0 && d >= poll {
		d = poll / 2
	}
	if d > 0 {
		h.Clock.Step(d)
	}
	return d, nil
}

// lastSeq returns the Seq of c's latest call, or 0.
func lastSeq(c *faults.Client) int {
	calls := c.Calls()
	if len(calls) == 0 {
		return 0
	}
	return calls[len(calls)-1].Seq
}

// learnReads remembers the kinds the reconciler reads, and the Go type it reads them with.
func (h *Harness) learnReads(step Step) {
	if h.read == nil {
		h.read = map[schema.GroupKind]client.Object{}
	}
	for _, c := range step.Calls {
		if (c.Verb != faults.Get && c.Verb != faults.List) || c.Subresource != "" {
			continue
		}
		gk := c.GVK.GroupKind()
		if c.Object != nil {
			h.read[gk] = c.Object
		} else if _, known := h.read[gk]; !known {
			h.read[gk] = nil // read by a list: the type comes from the scheme
		}
	}
}

// objectKey names one object across kinds.
type objectKey struct {
	gk  schema.GroupKind
	key types.NamespacedName
}

// waitForCache waits until Cache has caught up with the last write of each object the step
// wrote.
func (h *Harness) waitForCache(ctx context.Context, step Step) error {
	if h.Cache == nil {
		return nil
	}
	timeout := h.WaitTimeout
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	for _, c := range h.lastWrites(step) {
		want, cond := h.cached(c)
		if cond == nil {
			continue // a failed write changed nothing
		}
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, timeout, true, cond); err != nil {
			return fmt.Errorf("failed to see %s %s %s in the cache: %w", c.GVK.Kind, c.Key, want, err)
		}
	}
	return nil
}

// lastWrites returns the last write the step sent to the API server for each object of a kind
// the reconciler reads, in the order of the objects' first writes.
func (h *Harness) lastWrites(step Step) []faults.Call {
	last := map[objectKey]int{}
	var writes []faults.Call
	for _, c := range step.Calls {
		if !c.IsWrite() || c.Key.Name == "" || !c.Forwarded {
			continue
		}
		k := objectKey{gk: c.GVK.GroupKind(), key: c.Key}
		if _, read := h.read[k.gk]; !read {
			continue
		}
		if i, seen := last[k]; seen {
			writes[i] = c
			continue
		}
		last[k] = len(writes)
		writes = append(writes, c)
	}
	return writes
}

// cached returns the condition under which Cache shows write c, and what it waits for; no
// condition for a write that changed nothing.
func (h *Harness) cached(c faults.Call) (want string, cond wait.ConditionWithContextFunc) {
	switch {
	case c.Verb == faults.Delete && c.Outcome == faults.OK:
		return "gone or being deleted", func(ctx context.Context) (bool, error) {
			obj := h.prototype(c.GVK)
			err := h.Cache.Get(ctx, c.Key, obj)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return err == nil && obj.GetDeletionTimestamp() != nil, client.IgnoreNotFound(err)
		}
	case c.ResourceVersion != "":
		return "at resourceVersion " + c.ResourceVersion + " or later", func(ctx context.Context) (bool, error) {
			obj := h.prototype(c.GVK)
			err := h.Cache.Get(ctx, c.Key, obj)
			if err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return atLeast(obj.GetResourceVersion(), c.ResourceVersion), nil
		}
	}
	return "", nil
}

// prototype returns an empty object to read gvk into, of the Go type the reconciler reads it
// with: the type of its gets, else the scheme's type, else unstructured.
func (h *Harness) prototype(gvk schema.GroupVersionKind) client.Object {
	if p := h.read[gvk.GroupKind()]; p != nil {
		if fresh, err := objects.Empty(p); err == nil {
			return fresh
		}
	}
	if obj, err := h.Client.Scheme().New(gvk); err == nil {
		if o, ok := obj.(client.Object); ok {
			return o
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// atLeast reports whether resourceVersion got is the same as or newer than want. Versions are
// etcd revisions on every etcd-backed API server and on the fake client; anything else is
// compared for equality.
func atLeast(got, want string) bool {
	g, errG := strconv.ParseUint(got, 10, 64)
	w, errW := strconv.ParseUint(want, 10, 64)
	if errG != nil || errW != nil {
		return got == want
	}
	return g >= w
}

// snapshot reads every object the reconciler has read or written so far, as it is now.
func (h *Harness) snapshot(ctx context.Context) map[objectKey]map[string]any {
	reader := h.Reader
	if reader == nil {
		reader = h.Client.Unwrap()
	}
	known := map[objectKey]schema.GroupVersionKind{}
	for _, s := range h.steps {
		for _, c := range s.Calls {
			if c.Key.Name != "" && c.Subresource == "" && (c.Verb == faults.Get || c.IsWrite()) {
				known[objectKey{gk: c.GVK.GroupKind(), key: c.Key}] = c.GVK
			}
		}
	}
	out := make(map[objectKey]map[string]any, len(known))
	for _, k := range slices.SortedFunc(maps.Keys(known), compareKeys) {
		obj := h.prototype(known[k])
		if err := reader.Get(ctx, k.key, obj); err == nil {
			out[k] = normalized(obj)
		}
	}
	return out
}

func compareKeys(a, b objectKey) int {
	return strings.Compare(a.gk.String()+"/"+a.key.String(), b.gk.String()+"/"+b.key.String())
}
