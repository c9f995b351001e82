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

package requeue

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// BackoffOptions configures [WithBackoff]. The zero value works.
type BackoffOptions struct {
	// Name is the controller's name, the value of the controller label of tenon's metrics. Use
	// the name controller-runtime knows the controller by (builder's Named, or the lower-cased
	// kind), so the metrics line up with controller_runtime_reconcile_errors_total. Defaults to
	// "unknown".
	Name string

	// RetryLimiter computes the delays of [Retry]. Defaults to an exponential limiter from 1s
	// doubling to 5 minutes, per object.
	RetryLimiter workqueue.TypedRateLimiter[reconcile.Request]

	// ConflictLimiter computes the delays of quiet requeues after conflicts (see [OnError]).
	// Defaults to an exponential limiter from 100ms doubling to 10s, per object, with up to 100%
	// jitter so that writers that collided do not collide again.
	ConflictLimiter workqueue.TypedRateLimiter[reconcile.Request]

	// QuietErrors makes the wrapper apply [OnError] to the errors the reconciler returns: a
	// conflict becomes a quiet requeue even when the reconciler just returns the error. Defaults
	// to true; set it to a pointer to false to pass errors through untouched.
	QuietErrors *bool

	// MaxQuietConflicts is how many quiet requeues for conflicts (409 Conflict or
	// AlreadyExists, 410 Gone; see [OnError]) one object may take in a row. The next conflict is
	// returned as an error after all, wrapping the original so its class stays: controller-runtime
	// logs it, counts it in controller_runtime_reconcile_errors_total and retries it with its
	// rate limiter, and so does every further conflict until a reconcile of the object ends
	// without one. Without the limit, a conflict that never goes away (an AlreadyExists for an
	// object the cache never shows, a webhook that always answers 409) loops quietly for ever.
	// The count is ConflictLimiter's NumRequeues for the object. Defaults to 10, about a minute
	// with the default ConflictLimiter; a negative value means no limit.
	MaxQuietConflicts int
}

// WithBackoff wraps r so that requeues without the deprecated Result.Requeue still back off per
// object, and conflicts stay quiet:
//
//   - [Retry] returns delays that grow exponentially for each object while it keeps retrying,
//     from [BackoffOptions.RetryLimiter]. They are forgotten, and the object's entry in the
//     limiter released, once a reconcile of the object ends without asking to retry: [Done],
//     [After], [Poll], a quiet conflict or a terminal error. A plain error keeps them, since
//     controller-runtime retries it. (controller-runtime forgets its own backoff whenever
//     RequeueAfter is used, which is why Retry needs this wrapper.)
//   - An error the reconciler returns is passed through [OnError]: a conflict becomes a quiet
//     requeue with its own per-object backoff, counted in tenon_reconcile_quiet_conflicts_total
//     instead of controller_runtime_reconcile_errors_total, up to
//     [BackoffOptions.MaxQuietConflicts] in a row. The Result.Priority the reconciler returned
//     with the error is kept (controller-runtime honours it for errors too).
//   - Terminal errors are counted in tenon_reconcile_terminal_errors_total, and requeues by
//     reason in tenon_reconcile_requeues_total.
//
// Register the wrapper as the controller's reconciler:
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Cluster{}).Named("cluster").
//		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: "cluster"}))
func WithBackoff(r reconcile.Reconciler, opts BackoffOptions) reconcile.Reconciler {
	if opts.Name == "" {
		opts.Name = "unknown"
	}
	if opts.RetryLimiter == nil {
		opts.RetryLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 5*time.Minute)
	}
	if opts.ConflictLimiter == nil {
		opts.ConflictLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, 10*time.Second)
	}
	if opts.MaxQuietConflicts == 0 {
		opts.MaxQuietConflicts = 10
	}
	quiet := opts.QuietErrors == nil || *opts.QuietErrors
	return &backoff{inner: r, opts: opts, quiet: quiet}
}

type backoff struct {
	inner reconcile.Reconciler
	opts  BackoffOptions
	quiet bool
}

var _ reconcile.Reconciler = (*backoff)(nil)

// Reconcile implements reconcile.Reconciler.
func (b *backoff) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := &state{opts: &b.opts, req: req}
	ctx = context.WithValue(ctx, stateKey{}, s)

	res, err := b.inner.Reconcile(ctx, req)
	if err != nil && b.quiet {
		priority := res.Priority
		res, err = OnError(ctx, err)
		if res.Priority == nil {
			res.Priority = priority
		}
	}

	s.mu.Lock()
	retried, conflicted, counted := s.retried, s.conflicted, s.counted
	s.mu.Unlock()
	switch {
	case err != nil:
		if IsTerminal(err) {
			terminalErrors.WithLabelValues(b.opts.Name).Inc()
		}
	case res.RequeueAfter > 0 && !counted:
		requeues.WithLabelValues(b.opts.Name, "after").Inc()
	}
	// A reconcile that did not ask to retry has made progress, or, after a terminal error, has
	// nothing left to retry: forget the object's backoff. A plain error is retried.
	if !retried && (err == nil || IsTerminal(err)) {
		b.opts.RetryLimiter.Forget(req)
	}
	if !conflicted {
		b.opts.ConflictLimiter.Forget(req)
	}
	return res, err
}

// stateKey is the context key of the state of one reconcile under WithBackoff.
type stateKey struct{}

// state is what one reconcile under WithBackoff records.
type state struct {
	opts *BackoffOptions
	req  reconcile.Request

	mu         sync.Mutex
	retried    bool
	conflicted bool
	counted    bool // a requeue was already counted under a specific reason
}

func stateFrom(ctx context.Context) *state {
	s, _ := ctx.Value(stateKey{}).(*state)
	return s
}

// retry records a Retry and returns its delay.
func (s *state) retry() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retried, s.counted = true, true
	requeues.WithLabelValues(s.opts.Name, "retry").Inc()
	return s.opts.RetryLimiter.When(s.req)
}

// conflict records a conflict and returns the delay of its quiet requeue, or quiet false when
// the object has had MaxQuietConflicts in a row, with their number.
func (s *state) conflict() (delay time.Duration, quiet bool, inARow int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflicted = true
	inARow = s.opts.ConflictLimiter.NumRequeues(s.req)
	if s.opts.MaxQuietConflicts >= 0 && inARow >= s.opts.MaxQuietConflicts {
		return 0, false, inARow
	}
	s.counted = true
	return Jitter(s.opts.ConflictLimiter.When(s.req), 1), true, inARow
}

func (s *state) name() string {
	if s == nil {
		return ""
	}
	return s.opts.Name
}
