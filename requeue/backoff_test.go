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

package requeue_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/requeue"
)

// scripted is a reconciler that returns the outcomes of its script in turn.
type scripted struct {
	steps []func(ctx context.Context) (ctrl.Result, error)
	calls int
}

func (s *scripted) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	step := s.steps[s.calls%len(s.steps)]
	s.calls++
	return step(ctx)
}

var (
	retry = func(context.Context) (ctrl.Result, error) { return requeue.Retry("waiting for the database") }
	done  = func(context.Context) (ctrl.Result, error) { return requeue.Done() }
)

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func TestWithBackoffGrowsRetryDelaysPerObjectAndResetsWhenDone(t *testing.T) {
	g := NewWithT(t)
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){retry, retry, retry, retry, done}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{
		Name:         "growth",
		RetryLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, time.Second),
	})
	ctx := context.Background()
	a, b := request("a"), request("b")

	var delays []time.Duration
	for range 4 {
		res, err := r.Reconcile(ctx, a)
		g.Expect(err).NotTo(HaveOccurred())
		delays = append(delays, res.RequeueAfter)
	}
	g.Expect(delays).To(Equal([]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}))

	// Another object has a backoff of its own.
	inner.calls = 0
	res, _ := r.Reconcile(ctx, b)
	g.Expect(res.RequeueAfter).To(Equal(10 * time.Millisecond))

	// a finishes: its backoff is forgotten, the next retry starts over.
	inner.calls = 4
	res, err := r.Reconcile(ctx, a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.IsZero()).To(BeTrue())
	res, _ = r.Reconcile(ctx, a)
	g.Expect(res.RequeueAfter).To(Equal(10*time.Millisecond), "reset after a reconcile that did not retry")

	g.Expect(counter(t, "tenon_reconcile_requeues_total", map[string]string{"controller": "growth", "reason": "retry"})).To(BeEquivalentTo(6))
}

func TestWithBackoffMakesFencedWritesQuietRequeuesWithTheRetryBackoff(t *testing.T) {
	g := NewWithT(t)
	fenced := func(context.Context) (ctrl.Result, error) {
		return ctrl.Result{}, fmt.Errorf("failed to patch Cluster demo/a: %w", &url.Error{Op: "Patch", URL: "https://api/x", Err: &fencing.RefusedError{Lease: "ns/lease"}})
	}
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){fenced, fenced, fenced, done, fenced}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{
		Name:         "fenced",
		RetryLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, time.Second),
	})
	ctx := context.Background()

	var delays []time.Duration
	for range 3 {
		res, err := r.Reconcile(ctx, request("a"))
		g.Expect(err).NotTo(HaveOccurred(), "a fenced write is not an error")
		delays = append(delays, res.RequeueAfter)
	}
	g.Expect(delays).To(Equal([]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}))
	_, _ = r.Reconcile(ctx, request("a")) // done: the backoff is forgotten
	res, err := r.Reconcile(ctx, request("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(10 * time.Millisecond))

	g.Expect(counter(t, "tenon_reconcile_requeues_total", map[string]string{"controller": "fenced", "reason": "fenced"})).To(BeEquivalentTo(4))
}

func TestWithBackoffMakesReturnedConflictsQuiet(t *testing.T) {
	g := NewWithT(t)
	conflict := func(context.Context) (ctrl.Result, error) {
		return ctrl.Result{}, apierrors.NewConflict(widgets, "w", errors.New("the object has been modified"))
	}
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){conflict, conflict, conflict, done, conflict}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{
		Name:            "quiet",
		ConflictLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Second),
	})
	ctx := context.Background()

	var delays []time.Duration
	for range 3 {
		res, err := r.Reconcile(ctx, request("a"))
		g.Expect(err).NotTo(HaveOccurred(), "a conflict is not an error")
		delays = append(delays, res.RequeueAfter)
	}
	// Exponential with up to 100% jitter: [100,200), [200,400), [400,800) ms.
	for i, d := range delays {
		base := 100 * time.Millisecond << i
		g.Expect(d).To(BeNumerically(">=", base))
		g.Expect(d).To(BeNumerically("<", 2*base))
	}
	_, _ = r.Reconcile(ctx, request("a")) // done: forgotten
	res, _ := r.Reconcile(ctx, request("a"))
	g.Expect(res.RequeueAfter).To(BeNumerically("<", 200*time.Millisecond))

	g.Expect(counter(t, "tenon_reconcile_quiet_conflicts_total", map[string]string{"controller": "quiet", "class": "conflict"})).To(BeEquivalentTo(4))
}

func TestWithBackoffPassesOtherErrorsThroughAndCountsTerminalOnes(t *testing.T) {
	g := NewWithT(t)
	boom := errors.New("boom")
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){
		func(context.Context) (ctrl.Result, error) { return ctrl.Result{}, boom },
		func(context.Context) (ctrl.Result, error) {
			return requeue.Terminal("InvalidSpec", errors.New("bad spec"))
		},
		func(context.Context) (ctrl.Result, error) { return requeue.After(time.Minute) },
	}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "passthrough"})
	ctx := context.Background()

	_, err := r.Reconcile(ctx, request("a"))
	g.Expect(err).To(MatchError(boom))
	_, err = r.Reconcile(ctx, request("a"))
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue())
	res, err := r.Reconcile(ctx, request("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Minute))

	g.Expect(counter(t, "tenon_reconcile_terminal_errors_total", map[string]string{"controller": "passthrough"})).To(BeEquivalentTo(1))
	g.Expect(counter(t, "tenon_reconcile_requeues_total", map[string]string{"controller": "passthrough", "reason": "after"})).To(BeEquivalentTo(1))
}

func TestWithBackoffRegistersItsMetricsWithTheGivenRegisterer(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){retry}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "own-registry", Registerer: reg})
	_ = requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "second", Registerer: reg}) // shares them

	_, err := r.Reconcile(context.Background(), request("a"))

	g.Expect(err).NotTo(HaveOccurred())
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	g.Expect(names).To(ContainElement("tenon_reconcile_requeues_total"))
}

func TestWithBackoffKeepsAConflictJoinedWithAnotherErrorLoud(t *testing.T) {
	g := NewWithT(t)
	conflict := apierrors.NewConflict(widgets, "w", errors.New("modified"))
	forbidden := apierrors.NewForbidden(widgets, "w", errors.New("RBAC"))
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){
		func(context.Context) (ctrl.Result, error) { return ctrl.Result{}, errors.Join(conflict, forbidden) },
	}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "joined"})

	res, err := r.Reconcile(context.Background(), request("a"))

	g.Expect(err).To(HaveOccurred(), "not a quiet requeue")
	g.Expect(errors.Is(err, forbidden)).To(BeTrue(), "got %v", err)
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassAuth))
	g.Expect(res.RequeueAfter).To(BeZero())
}

// counter returns the value of the counter with exactly the given labels from
// controller-runtime's registry; a counter that was never recorded fails the test, rather than
// read as 0.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no counter %s with labels %v", name, labels)
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	if len(m.GetLabel()) != len(labels) {
		return false
	}
	for _, l := range m.GetLabel() {
		if labels[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

func TestWithBackoffForgetsTheRetryBackoffAfterATerminalError(t *testing.T) {
	g := NewWithT(t)
	terminal := func(context.Context) (ctrl.Result, error) {
		return requeue.Terminal("InvalidSpec", errors.New("spec.size must be small"))
	}
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){retry, retry, retry, terminal, retry}}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Minute)
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "terminal-forgets", RetryLimiter: limiter})
	ctx := context.Background()
	a := request("a")

	for range 3 {
		_, err := r.Reconcile(ctx, a)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(limiter.NumRequeues(a)).To(Equal(3))

	// The spec is invalid: a terminal error, not retried. The object's entry is released, so an
	// object deleted now leaves nothing behind.
	_, err := r.Reconcile(ctx, a)
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue())
	g.Expect(limiter.NumRequeues(a)).To(BeZero(), "a terminal error ends the retries")

	// The user fixes the spec; the next wait starts from the first step again.
	res, err := r.Reconcile(ctx, a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(100 * time.Millisecond))
}

func TestWithBackoffKeepsTheRetryBackoffAcrossAPlainError(t *testing.T) {
	g := NewWithT(t)
	boom := func(context.Context) (ctrl.Result, error) { return ctrl.Result{}, errors.New("boom") }
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){retry, retry, boom, retry}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{
		Name:         "plain-keeps",
		RetryLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Minute),
	})
	ctx := context.Background()

	for range 3 {
		_, _ = r.Reconcile(ctx, request("a"))
	}
	res, err := r.Reconcile(ctx, request("a"))

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(400*time.Millisecond), "a plain error is retried by controller-runtime: still retrying")
}

func TestWithBackoffKeepsThePriorityOfAResultWithAnError(t *testing.T) {
	conflict := apierrors.NewConflict(widgets, "w", errors.New("the object has been modified"))
	tests := []struct {
		name    string
		err     error
		opts    requeue.BackoffOptions
		wantErr bool
	}{
		{name: "a plain error, which controller-runtime requeues with the priority", err: errors.New("boom"), wantErr: true},
		{name: "a terminal error", err: reconcile.TerminalError(errors.New("bad spec")), wantErr: true},
		{name: "a conflict made quiet", err: conflict},
		{name: "a retry", err: func() error { _, err := requeue.Retry("waiting"); return err }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){
				func(context.Context) (ctrl.Result, error) { return ctrl.Result{Priority: ptr.To(7)}, tt.err },
			}}
			tt.opts.Name = "priority"
			r := requeue.WithBackoff(inner, tt.opts)

			res, err := r.Reconcile(context.Background(), request("a"))

			g.Expect(err != nil).To(Equal(tt.wantErr), "error %v", err)
			g.Expect(res.Priority).To(HaveValue(Equal(7)))
		})
	}
}

func TestWithBackoffReturnsAConflictThatNeverGoesAway(t *testing.T) {
	g := NewWithT(t)
	exists := func(context.Context) (ctrl.Result, error) {
		return ctrl.Result{}, fmt.Errorf("failed to create config map: %w", apierrors.NewAlreadyExists(widgets, "w-config"))
	}
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){exists}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{
		Name:              "never-goes-away",
		ConflictLimiter:   workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, time.Second),
		MaxQuietConflicts: 3,
	})
	ctx := context.Background()

	for i := range 3 {
		res, err := r.Reconcile(ctx, request("a"))
		g.Expect(err).NotTo(HaveOccurred(), "quiet requeue %d", i+1)
		g.Expect(res.RequeueAfter).To(BeNumerically(">", 0))
	}
	// The fourth in a row, and every one after it until the object reconciles, is an error that
	// controller-runtime logs, counts and retries with its rate limiter.
	for range 2 {
		res, err := r.Reconcile(ctx, request("a"))
		g.Expect(err).To(HaveOccurred())
		g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "the error keeps its class: %v", err)
		g.Expect(err.Error()).To(ContainSubstring("3 quiet requeues"))
		g.Expect(res.RequeueAfter).To(BeZero())
	}
	g.Expect(counter(t, "tenon_reconcile_quiet_conflicts_total", map[string]string{"controller": "never-goes-away", "class": "already_exists"})).To(BeEquivalentTo(3))

	// Another object is not affected; and once the object reconciles, it starts over.
	_, err := r.Reconcile(ctx, request("b"))
	g.Expect(err).NotTo(HaveOccurred())
	inner.steps = []func(context.Context) (ctrl.Result, error){done, exists}
	inner.calls = 0
	_, err = r.Reconcile(ctx, request("a"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = r.Reconcile(ctx, request("a"))
	g.Expect(err).NotTo(HaveOccurred(), "quiet again after a reconcile without conflict")
}

// gathered returns the value of the counter name with labels in reg, 0 when it has no such
// series.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == name && matches(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// A result without a delay is no requeue: only a RequeueAfter is counted as one ("after").
func TestWithBackoffCountsARequeueAfterADelayOnly(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	after := func(context.Context) (ctrl.Result, error) { return requeue.After(time.Minute) }
	inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){done, done, after}}
	r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "after", Registerer: reg})
	labels := map[string]string{"controller": "after", "reason": "after"}

	for range 2 {
		_, err := r.Reconcile(t.Context(), request("a"))
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(gathered(t, reg, "tenon_reconcile_requeues_total", labels)).To(BeZero(), "Done is not a requeue")
	res, err := r.Reconcile(t.Context(), request("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Minute))
	g.Expect(gathered(t, reg, "tenon_reconcile_requeues_total", labels)).To(BeEquivalentTo(1))
}

// Throttling whose Retry-After is 0 (or missing) requeues after a second, never at once.
func TestWithBackoffWaitsASecondWhenThrottlingGivesNoDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"a 429 with Retry-After 0", apierrors.NewTooManyRequests("slow down", 0), time.Second},
		{"a 429 with Retry-After 3", apierrors.NewTooManyRequests("slow down", 3), 3 * time.Second},
		{"a server timeout with Retry-After 0", apierrors.NewServerTimeout(widgets, "create", 0), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){
				func(context.Context) (ctrl.Result, error) { return ctrl.Result{}, tc.err },
			}}
			r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "throttled", Registerer: prometheus.NewRegistry()})
			res, err := r.Reconcile(t.Context(), request("a"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.RequeueAfter).To(Equal(tc.want))
		})
	}
}

// When its metrics cannot be registered, WithBackoff works without them and logs why once, at
// its first reconcile; when they can, it logs nothing.
func TestWithBackoffLogsOnceThatItsMetricsAreNotServed(t *testing.T) {
	for _, clash := range []bool{false, true} {
		t.Run(fmt.Sprintf("another collector of the same name: %t", clash), func(t *testing.T) {
			g := NewWithT(t)
			reg := prometheus.NewRegistry()
			if clash {
				g.Expect(reg.Register(prometheus.NewCounter(prometheus.CounterOpts{Name: "tenon_reconcile_requeues_total", Help: "someone else's"}))).To(Succeed())
			}
			var lines []string
			ctx := logr.NewContext(t.Context(), funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
			inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){retry}}
			r := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "clash", Registerer: reg})

			for range 3 {
				res, err := r.Reconcile(ctx, request("a"))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(res.RequeueAfter).To(BeNumerically(">", 0), "the wrapper works without its metrics")
			}
			if !clash {
				g.Expect(lines).To(BeEmpty())
				return
			}
			g.Expect(lines).To(HaveLen(1))
			g.Expect(lines[0]).To(ContainSubstring("Failed to register tenon's reconcile metrics"))
			g.Expect(lines[0]).To(ContainSubstring(`"controller"="clash"`))
		})
	}
}
