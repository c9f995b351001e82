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

package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
)

func TestAssertIdempotentPassesForACorrectReconciler(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c}

	h.AssertIdempotent(t, req)

	steps := h.Steps()
	g.Expect(steps).To(HaveLen(2), "one reconcile to become stable, one to check")
	g.Expect(steps[0].Writes()).To(HaveLen(2), "the first reconcile creates the config map and patches the status")
	g.Expect(steps[1].Writes()).To(BeEmpty())
	var w testtypes.Widget
	g.Expect(c.Get(t.Context(), req.NamespacedName, &w)).To(Succeed())
	g.Expect(&w).To(matchers.BeReady())
}

func TestAssertIdempotentCatchesAReconcilerThatRewritesTheStatus(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &statusRewriter{widgetReconciler{Client: c}}, Client: c}

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(HaveLen(1))
	g.Expect(tb.failures[0]).To(HavePrefix("reconciletest: default/w is not idempotent: the reconcile after a finished one sent 1 write(s):\n" +
		"  update Widget default/w status: ok\n" +
		"    the object did not change: the request was sent although the object was already as desired\n" +
		"All calls of that reconcile:\n" +
		"  step 2: done\n" +
		"    get Widget default/w: ok\n"))
}

func TestAssertIdempotentCatchesAReconcilerThatBumpsAnAnnotation(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &annotationBumper{widgetReconciler{Client: c}}, Client: c}

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(HaveLen(1))
	msg := plainSpaces(tb.failures[0])
	g.Expect(msg).To(HavePrefix("reconciletest: default/w is not idempotent: the reconcile after a finished one sent 1 write(s):\n" +
		"  patch Widget default/w: ok\n" +
		`    patch: {"metadata":{"annotations":{"test.tenon.dev/reconciles":"2"}}}` + "\n" +
		"    object diff (-before +after):\n"))
	g.Expect(msg).To(MatchRegexp(`\n\s+-\s+"annotations": .*"test.tenon.dev/reconciles": string\("1"\)}.*\n\s+\+\s+"annotations": .*"test.tenon.dev/reconciles": string\("2"\)}`))
}

func TestAssertIdempotentMovesTheReconcilersClockForward(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 10, 0, 10, 0, time.UTC))
	h := &reconciletest.Harness{
		Reconciler: &clockStamper{widgetReconciler: widgetReconciler{Client: c}, now: clock.Now, format: "15:04"},
		Client:     c,
		Clock:      clock,
	}

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(HaveLen(1), "the status says when it was synced, to the minute, by the reconciler's clock")
	msg := plainSpaces(tb.failures[0])
	g.Expect(msg).To(HavePrefix("reconciletest: default/w is not idempotent: the reconcile after a finished one sent 1 write(s):\n" +
		"  patch Widget default/w status: ok\n" +
		`    patch: {"status":{"phase":"synced at 10:01"}}` + "\n"))
	g.Expect(msg).To(ContainSubstring(", with Harness.Clock moved forward by 50s. A value computed from the time"))
	g.Expect(clock.Now()).To(Equal(time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)), "moved to the next whole minute")
}

func TestAssertIdempotentMovesTheClockLessThanTheRequeue(t *testing.T) {
	tests := []struct {
		name      string
		every     time.Duration
		wantMoved time.Duration
	}{
		{name: "a requeue after the next minute leaves the move to the next minute", every: time.Hour, wantMoved: 50 * time.Second},
		{name: "a requeue before the next minute halves the move", every: 30 * time.Second, wantMoved: 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, req := newFake(t, faults.Plan{})
			start := time.Date(2026, 1, 1, 10, 0, 10, 0, time.UTC)
			clock := clocktesting.NewFakeClock(start)
			h := &reconciletest.Harness{
				Reconciler: &checker{widgetReconciler: widgetReconciler{Client: c}, clock: clock, every: tt.every},
				Client:     c,
				Clock:      clock,
			}

			h.AssertIdempotent(t, req)

			g.Expect(clock.Now().Sub(start)).To(Equal(tt.wantMoved))
		})
	}
}

func TestAssertIdempotentFailsWhenTheCheckingReconcileFails(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{Seed: 9, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Get}, Kind: "ConfigMap"}, Nth: 2, Fault: faults.ServiceUnavailable},
	}})
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c}

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(ConsistOf(HavePrefix("reconciletest: default/w is not idempotent: the reconcile after a finished one failed (fault plan seed 9):\n" +
		"  step 2: error: failed to read the config map: the server is currently unable to handle the request (injected by fault plan rule 0)\n")))
}

func TestReconcileUntilStableReturnsTheNumberOfReconciles(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	r := &scripted{
		results: []ctrl.Result{{RequeueAfter: time.Millisecond}, {}, {}},
		errs:    []error{nil, errors.New("not yet"), nil},
	}
	h := &reconciletest.Harness{Reconciler: r, Client: c}

	g.Expect(h.ReconcileUntilStable(t, req)).To(Equal(3), "a short requeue and an error are not stable")
}

func TestAReconcileThatPollsAndWritesNothingIsStable(t *testing.T) {
	tests := []struct {
		name    string
		maxWait time.Duration
		result  ctrl.Result
		stable  bool
	}{
		{"a poll longer than the default MaxWait", 0, ctrl.Result{RequeueAfter: 5 * time.Minute}, true},
		{"a requeue shorter than MaxWait", time.Hour, ctrl.Result{RequeueAfter: 5 * time.Minute}, false},
		{"a requeue as long as MaxWait", 5 * time.Minute, ctrl.Result{RequeueAfter: 5 * time.Minute}, false},
		{"a requeue with a negative MaxWait", -1, ctrl.Result{RequeueAfter: time.Millisecond}, true},
		{"the deprecated rate-limited requeue", 0, ctrl.Result{Requeue: true}, false}, //nolint:staticcheck // reconcilers still return it
		{"done", 0, ctrl.Result{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, req := newFake(t, faults.Plan{})
			h := &reconciletest.Harness{Reconciler: &scripted{results: []ctrl.Result{tt.result}}, Client: c, MaxWait: tt.maxWait}

			g.Expect(h.Reconcile(t, req).Stable()).To(Equal(tt.stable))
		})
	}
}

func TestAStepWithAWriteOrAnErrorIsNotStable(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &poller{widgetReconciler{Client: c}}, Client: c}

	wrote := h.Reconcile(t, req)

	g.Expect(wrote).To(matchers.BeRequeuedAfter(5 * time.Minute))
	g.Expect(wrote.Writes()).NotTo(BeEmpty())
	g.Expect(wrote.Stable()).To(BeFalse())
	failed := reconciletest.Step{Err: errors.New("boom")}
	g.Expect(failed.Stable()).To(BeFalse())
}

func TestAssertIdempotentPassesForAReconcilerThatPolls(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &poller{widgetReconciler{Client: c}}, Client: c}

	h.AssertIdempotent(t, req)

	steps := h.Steps()
	g.Expect(steps).To(HaveLen(2), "the reconcile that wrote, and the one that checks")
	g.Expect(steps[1]).To(matchers.BeRequeuedAfter(5 * time.Minute))
	g.Expect(steps[1].Stable()).To(BeTrue())
	g.Expect(h.ReconcileUntilStable(t, req)).To(Equal(1))
}

func TestTheHarnessWaitsOutAShortRequeueToReachReady(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &provisioner{Client: c, takes: 300 * time.Millisecond}, Client: c}
	start := time.Now()

	n := h.ReconcileUntilStable(t, req)

	g.Expect(time.Since(start)).To(BeNumerically(">=", 300*time.Millisecond), "the harness waited for the requeue")
	g.Expect(n).To(Equal(3))
	steps := h.Steps()
	g.Expect(steps[0]).To(matchers.BeRequeuedAfter(BeNumerically("~", 300*time.Millisecond, 50*time.Millisecond)))
	g.Expect(steps[0].Writes()).To(HaveLen(1), "the status says the widget is being provisioned")
	g.Expect(steps[1]).To(matchers.BeRequeuedAfter(5 * time.Minute))
	g.Expect(steps[1].Writes()).To(HaveLen(1), "the status says the widget is Ready")
	g.Expect(steps[2].Stable()).To(BeTrue())
	var w testtypes.Widget
	g.Expect(c.Get(t.Context(), req.NamespacedName, &w)).To(Succeed())
	g.Expect(&w).To(matchers.BeReady())
}

func TestAssertIdempotentWaitsOutAShortRequeueToo(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &provisioner{Client: c, takes: 100 * time.Millisecond}, Client: c}

	h.AssertIdempotent(t, req)

	g.Expect(h.Steps()).To(HaveLen(3), "provisioning, Ready, and the check")
}

func TestAShortRequeueIsNotWaitedForAfterTheTestEnded(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	h := &reconciletest.Harness{Reconciler: &scripted{results: []ctrl.Result{{RequeueAfter: 5 * time.Second}}}, Client: c}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	tb := runWith(ctx, t, func(tb reconciletest.TB) { h.ReconcileUntilStable(tb, req) })

	g.Expect(tb.failures).To(Equal([]string{"reconciletest: default/w did not become stable: the test ended while the harness waited 5s for the requeue of reconcile 1:\n" +
		"  step 1: requeue after 5s (no calls)"}))
}

func TestReconcileUntilStableFailsWithEveryStepAfterMaxSteps(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	r := &scripted{results: []ctrl.Result{{RequeueAfter: time.Millisecond}, {RequeueAfter: 2 * time.Millisecond}, {RequeueAfter: 3 * time.Millisecond}}}
	h := &reconciletest.Harness{Reconciler: r, Client: c, MaxSteps: 3}

	tb := run(t, func(tb reconciletest.TB) { h.ReconcileUntilStable(tb, req) })

	g.Expect(tb.failures).To(Equal([]string{"reconciletest: default/w did not become stable in 3 reconciles:\n" +
		"  step 1: requeue after 1ms (no calls)\n" +
		"  step 2: requeue after 2ms (no calls)\n" +
		"  step 3: requeue after 3ms (no calls)"}))
}

func TestReconcileUntilStableStopsAtATerminalError(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{Seed: 7, Rules: []faults.Rule{{Match: faults.Match{Kind: "Secret"}, Fault: faults.NotFound}}})
	r := &scripted{errs: []error{errors.New("transient"), reconcile.TerminalError(errors.New("spec.size is invalid"))}}
	h := &reconciletest.Harness{Reconciler: r, Client: c}

	tb := run(t, func(tb reconciletest.TB) { h.ReconcileUntilStable(tb, req) })

	g.Expect(tb.failures).To(Equal([]string{"reconciletest: default/w did not become stable: reconcile 2 returned a terminal error, " +
		"which controller-runtime does not retry (fault plan seed 7):\n" +
		"  step 1: error: transient (no calls)\n" +
		"  step 2: terminal error: terminal error: spec.size is invalid (no calls)"}))
}

func TestAPanicIsTurnedIntoAnError(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{})
	var unset reconcile.Reconciler
	h := &reconciletest.Harness{Reconciler: reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
		return unset.Reconcile(ctx, req) // a nil interface: panics
	}), Client: c}

	step := h.Reconcile(t, req)

	g.Expect(step).To(matchers.HaveFailed())
	g.Expect(step.Err).To(MatchError(HavePrefix("panic: runtime error: invalid memory address or nil pointer dereference [recovered]")))
}

func TestAHarnessWithoutAClientFailsClearly(t *testing.T) {
	g := NewWithT(t)
	h := &reconciletest.Harness{Reconciler: &scripted{}}

	tb := run(t, func(tb reconciletest.TB) { h.Reconcile(tb, reconcile.Request{}) })

	g.Expect(tb.failures).To(ConsistOf("reconciletest: set Harness.Reconciler and Harness.Client (a *faults.Client wrapping the reconciler's client)"))
}

// stableUnderFaults reconciles a Widget under a plan with a conflict on the first status patch
// and a 30% chance of a 500 on every write, and returns how many reconciles it took.
func stableUnderFaults(t *testing.T, seed int64) (int, *faults.Client) {
	t.Helper()
	c, req := newFake(t, faults.Plan{Seed: seed, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Subresource: "status"}, Nth: 1, Fault: faults.Conflict},
		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.3, Fault: faults.InternalError},
	}})
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c, MaxSteps: 20}
	steps := h.ReconcileUntilStable(t, req)

	var w testtypes.Widget
	NewWithT(t).Expect(c.Get(t.Context(), req.NamespacedName, &w)).To(Succeed())
	NewWithT(t).Expect(&w).To(matchers.BeReady())
	return steps, c
}

func TestReconcileUntilStableUnderAFaultPlanReportsTheReconcilesItTook(t *testing.T) {
	g := NewWithT(t)
	steps, c := stableUnderFaults(t, 3)

	g.Expect(steps).To(BeNumerically(">", 2), "the conflict and the 500s cost extra reconciles")
	g.Expect(c.Count(faults.Injected)).To(BeNumerically(">=", 2))
	replayed, _ := stableUnderFaults(t, 3)
	g.Expect(replayed).To(Equal(steps), "the same seed replays the same run")
}

func TestReconcileUntilStableFailsWhenTheFaultsNeverStop(t *testing.T) {
	g := NewWithT(t)
	c, req := newFake(t, faults.Plan{Seed: 11, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Create}}, Fault: faults.Forbidden},
	}})
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c, MaxSteps: 2}

	tb := run(t, func(tb reconciletest.TB) { h.ReconcileUntilStable(tb, req) })

	g.Expect(tb.failures).To(ConsistOf(And(
		HavePrefix("reconciletest: default/w did not become stable in 2 reconciles (fault plan seed 11):\n  step 1: error: failed to create the config map: "),
		ContainSubstring("\n  step 2: error: "),
		ContainSubstring("create ConfigMap default/w-config: injected (rule 0)"),
	)))
}

func TestStepMatchers(t *testing.T) {
	done := reconciletest.Step{Number: 1, Request: reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "w"}}}
	requeued := done
	requeued.Result.RequeueAfter = time.Minute
	failed := done
	failed.Err = errors.New("boom")
	terminal := done
	terminal.Err = reconcile.TerminalError(errors.New("invalid"))

	tests := []struct {
		name    string
		matcher interface {
			Match(any) (bool, error)
			FailureMessage(any) string
		}
		actual  reconciletest.Step
		match   bool
		message string
	}{
		{"BeDone on a finished reconcile", matchers.BeDone(), done, true, ""},
		{"BeDone on a requeue", matchers.BeDone(), requeued, false,
			"Expected the reconcile of ns/w to be done\nbut it returned requeue after 1m0s\n  step 1: requeue after 1m0s (no calls)"},
		{"Requeue on a requeue", matchers.BeRequeued(), requeued, true, ""},
		{"Requeue on an error", matchers.BeRequeued(), failed, false,
			"Expected the reconcile of ns/w to requeue\nbut it returned error: boom\n  step 1: error: boom (no calls)"},
		{"RequeueAfter the same duration", matchers.BeRequeuedAfter(time.Minute), requeued, true, ""},
		{"RequeueAfter another duration", matchers.BeRequeuedAfter(time.Hour), requeued, false,
			"Expected the reconcile of ns/w to requeue after 1h0m0s\nbut it returned requeue after 1m0s\n  step 1: requeue after 1m0s (no calls)"},
		{"RequeueAfter with a matcher", matchers.BeRequeuedAfter(BeNumerically("~", time.Minute, 6*time.Second)), requeued, true, ""},
		{"RequeueAfter on a finished reconcile", matchers.BeRequeuedAfter(BeNumerically(">", 0)), done, false,
			"Expected the reconcile of ns/w to requeue after a delay that matches\nbut it returned done\n  step 1: done (no calls)"},
		{"BeTerminal on a terminal error", matchers.BeTerminal(), terminal, true, ""},
		{"BeTerminal on a plain error", matchers.BeTerminal(), failed, false,
			"Expected the reconcile of ns/w to fail with a terminal error\nbut it returned error: boom\n  step 1: error: boom (no calls)"},
		{"HaveFailed on a plain error", matchers.HaveFailed(), failed, true, ""},
		{"HaveFailed on a terminal error", matchers.HaveFailed(), terminal, false,
			"Expected the reconcile of ns/w to fail with an error that is retried\nbut it returned terminal error: terminal error: invalid\n  step 1: terminal error: terminal error: invalid (no calls)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, err := tt.matcher.Match(tt.actual)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ok).To(Equal(tt.match))
			if tt.message != "" {
				g.Expect(tt.matcher.FailureMessage(tt.actual)).To(Equal(tt.message))
			}
		})
	}
	_, err := matchers.BeDone().Match("done")
	NewWithT(t).Expect(err).To(MatchError("expected a reconciletest.Step, got string"))
}

// laggingCache serves reads like an informer cache that is behind: it keeps its own copy of
// each object it has served (or its absence), and refreshes it from the API (the fake client)
// only on the first read and on every third read after that.
type laggingCache struct {
	client.Client
	mu      sync.Mutex
	objects map[string]client.Object
	reads   map[string]int
}

func (l *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := fmt.Sprintf("%T %s", obj, key)
	l.reads[k]++
	if l.reads[k] == 1 || l.reads[k]%3 == 0 {
		fresh := obj.DeepCopyObject().(client.Object)
		err := l.Client.Get(ctx, key, fresh, opts...)
		switch {
		case apierrors.IsNotFound(err):
			delete(l.objects, k)
		case err != nil:
			return err
		default:
			l.objects[k] = fresh
		}
	}
	cached, ok := l.objects[k]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(cached.DeepCopyObject()).Elem())
	return nil
}

// readsFrom is a client that reads from a cache and writes to the API.
type readsFrom struct {
	client.WithWatch
	cache client.Reader
}

func (r readsFrom) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.cache.Get(ctx, key, obj, opts...)
}

// behindACache returns a client whose reads come from a lagging cache, that cache, and the
// fake API server behind it.
func behindACache(t *testing.T) (*faults.Client, *laggingCache, client.Reader, reconcile.Request) {
	t.Helper()
	api, req := newFake(t, faults.Plan{})
	inner := api.Unwrap().(client.WithWatch)
	cache := &laggingCache{Client: inner, objects: map[string]client.Object{}, reads: map[string]int{}}
	return faults.Record(readsFrom{WithWatch: inner, cache: cache}), cache, inner, req
}

func TestTheHarnessWaitsForTheCacheToSeeTheReconcilersWrites(t *testing.T) {
	g := NewWithT(t)
	c, cache, api, req := behindACache(t)
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c, Cache: cache, Reader: api}

	h.AssertIdempotent(t, req)

	g.Expect(h.Steps()).To(HaveLen(2))
	g.Expect(c.Count(faults.Writes)).To(Equal(2))
}

func TestWithoutWaitingForTheCacheTheNextReconcileReadsStaleObjects(t *testing.T) {
	g := NewWithT(t)
	c, _, api, req := behindACache(t)
	h := &reconciletest.Harness{Reconciler: &widgetReconciler{Client: c}, Client: c, Reader: api} // no Cache

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(ConsistOf(ContainSubstring(`failed to create the config map: configmaps "w-config" already exists`)),
		"this is the flake the harness's wait prevents")
}
