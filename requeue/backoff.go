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
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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

	// ConflictLimiter computes the delays of quiet requeues after conflicts. Defaults to an
	// exponential limiter from 100ms doubling to 10s, per object; each delay gets up to 100%
	// jitter so that writers that collided do not collide again.
	ConflictLimiter workqueue.TypedRateLimiter[reconcile.Request]

	// MaxQuietConflicts is how many quiet requeues for conflicts (409 Conflict or
	// AlreadyExists, 410 Gone) one object may take in a row. The next conflict is returned as
	// an error after all, wrapping the original so its class stays: controller-runtime logs it,
	// counts it in controller_runtime_reconcile_errors_total and retries it with its rate
	// limiter, and so does every further conflict until a reconcile of the object ends without
	// one. Without the limit, a conflict that never goes away (an AlreadyExists for an object the
	// cache never shows, a webhook that always answers 409) loops quietly for ever. Defaults to
	// 10, about a minute with the default ConflictLimiter; a negative value means no limit.
	MaxQuietConflicts int

	// Registerer receives tenon's reconcile metrics (tenon_reconcile_quiet_conflicts_total,
	// tenon_reconcile_terminal_errors_total, tenon_reconcile_requeues_total) when WithBackoff
	// is called; controllers that share a registry share the metrics, told apart by their
	// controller label. Defaults to controller-runtime's metrics.Registry, which the manager
	// serves.
	Registerer prometheus.Registerer
}

// WithBackoff wraps r so that requeues without the deprecated Result.Requeue still back off per
// object, and conflicts are quiet. It looks at what r returns, and keeps its state per request:
//
//   - [Retry]: a requeue whose delay grows exponentially for the object while it keeps
//     retrying, from [BackoffOptions.RetryLimiter], without an error; the backoff is forgotten,
//     and the object's entry released, once a reconcile of the object ends otherwise (a
//     plain error keeps it, since controller-runtime retries that). controller-runtime forgets
//     its own backoff whenever RequeueAfter is used, which is why Retry needs this wrapper.
//   - A conflict (409 Conflict or AlreadyExists, 410 Gone): a quiet requeue with its own
//     per-object backoff, counted in tenon_reconcile_quiet_conflicts_total instead of
//     controller_runtime_reconcile_errors_total, up to [BackoffOptions.MaxQuietConflicts] in a
//     row.
//   - Throttling (429, or a timeout that asks the client to wait): a quiet requeue after the
//     server's Retry-After (1 second when it gives none).
//   - A write refused by a leader election fence (see [ClassFenced]): a quiet requeue with
//     the backoff of [Retry], never relabelled as a conflict.
//   - A request the API server rejects as invalid (see [ClassInvalid]): a terminal error, since
//     sending it again fails again.
//   - A server-side apply refused over fields another field manager owns (see
//     [ClassFieldConflict]): returned as it is, never quiet and never counted as a conflict,
//     although it is a 409: no retry resolves it by itself, a person has to decide who owns the
//     fields. controller-runtime logs it and retries it with its rate limiter, which picks up
//     the decision once it is made.
//   - Any other error is returned as it is, for controller-runtime to retry with its rate
//     limiter and log; terminal errors are counted in tenon_reconcile_terminal_errors_total.
//   - The Result.Priority the reconciler returned is kept, with an error too (controller-runtime
//     honours it for errors).
//
// Requeues are counted by reason in tenon_reconcile_requeues_total. Register the wrapper as the
// controller's reconciler:
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Cluster{}).Named("cluster").
//		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: "cluster"}))
//
// When the metrics cannot be registered with the Registerer (it holds other collectors of the
// same names), the wrapper works without serving them and logs why at its first reconcile.
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
	if opts.Registerer == nil {
		opts.Registerer = metrics.Registry
	}
	m, err := registerMetrics(opts.Registerer)
	return &backoff{inner: r, opts: opts, metrics: m, metricsErr: err}
}

type backoff struct {
	inner      reconcile.Reconciler
	opts       BackoffOptions
	metrics    *reconcileMetrics
	metricsErr error
	logOnce    sync.Once
}

var _ reconcile.Reconciler = (*backoff)(nil)

// Reconcile implements reconcile.Reconciler.
func (b *backoff) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if b.metricsErr != nil {
		b.logOnce.Do(func() {
			log.FromContext(ctx).Error(b.metricsErr, "Failed to register tenon's reconcile metrics; they are not served", "controller", b.opts.Name)
		})
	}
	res, err := b.inner.Reconcile(ctx, req)
	class := Classify(err)
	b.forget(req, class)
	name := b.opts.Name
	switch class {
	case ClassNone:
		if res.RequeueAfter > 0 {
			b.metrics.requeues.WithLabelValues(name, "after").Inc()
		}
		return res, nil
	case ClassRetry, ClassFenced:
		b.metrics.requeues.WithLabelValues(name, class.String()).Inc()
		return ctrl.Result{RequeueAfter: b.opts.RetryLimiter.When(req), Priority: res.Priority}, nil
	case ClassConflict, ClassAlreadyExists, ClassGone:
		return b.conflicted(req, res, err, class)
	case ClassThrottled:
		b.metrics.requeues.WithLabelValues(name, class.String()).Inc()
		return ctrl.Result{RequeueAfter: throttledFor(err), Priority: res.Priority}, nil
	case ClassInvalid:
		b.metrics.terminalErrors.WithLabelValues(name).Inc()
		return ctrl.Result{Priority: res.Priority}, reconcile.TerminalError(err)
	case ClassTerminal:
		b.metrics.terminalErrors.WithLabelValues(name).Inc()
	}
	return ctrl.Result{Priority: res.Priority}, err
}

// forget resets the limiters whose run of requeues a reconcile of class ends: the conflict
// limiter unless it conflicted again, the retry limiter when it is done, requeued, conflicted or
// failed for good (not when it is retrying).
func (b *backoff) forget(req reconcile.Request, class Class) {
	switch class {
	case ClassConflict, ClassAlreadyExists, ClassGone:
	default:
		b.opts.ConflictLimiter.Forget(req)
	}
	switch class {
	case ClassRetry, ClassFenced, ClassOther, ClassTransient, ClassAuth, ClassNotFound, ClassFieldConflict:
	default:
		b.opts.RetryLimiter.Forget(req)
	}
}

// conflicted returns the result of a reconcile that lost a race (err, of class): a quiet
// requeue after the conflict limiter's delay, or err once MaxQuietConflicts requeues in a row
// did not get past it.
func (b *backoff) conflicted(req reconcile.Request, res ctrl.Result, err error, class Class) (ctrl.Result, error) {
	inARow := b.opts.ConflictLimiter.NumRequeues(req)
	if b.opts.MaxQuietConflicts >= 0 && inARow >= b.opts.MaxQuietConflicts {
		return ctrl.Result{Priority: res.Priority}, fmt.Errorf("failed to reconcile without a conflict after %d quiet requeues: %w", inARow, err)
	}
	b.metrics.quietConflicts.WithLabelValues(b.opts.Name, class.String()).Inc()
	b.metrics.requeues.WithLabelValues(b.opts.Name, class.String()).Inc()
	return ctrl.Result{RequeueAfter: wait.Jitter(b.opts.ConflictLimiter.When(req), 1), Priority: res.Priority}, nil
}

// throttledFor returns how long to wait after err, a throttling error: the delay the server
// suggests, a second when it suggests none.
func throttledFor(err error) time.Duration {
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		return time.Duration(seconds) * time.Second
	}
	return time.Second
}
