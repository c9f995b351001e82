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
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Defaults for the results this package builds.
const (
	// PollJitter is the jitter factor of [Poll]: a poll interval d becomes a delay drawn
	// uniformly from [d, d×1.1).
	PollJitter = 0.1

	// RetryDelay is the delay of [Retry] for a reconciler that is not wrapped by [WithBackoff],
	// before jitter.
	RetryDelay = 5 * time.Second

	// ConflictDelay is the delay of a quiet requeue after a conflict for a reconciler that is
	// not wrapped by [WithBackoff], before jitter (factor 1: from 200ms to 400ms).
	ConflictDelay = 200 * time.Millisecond
)

// Done ends the reconcile: nothing left to do until the next change.
func Done() (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// After requeues the object after exactly d, for a wait whose end is known (a certificate that
// expires at a given time, a retry-after from an external API). d <= 0 is [Done].
func After(d time.Duration) (ctrl.Result, error) {
	if d <= 0 {
		return Done()
	}
	return ctrl.Result{RequeueAfter: d}, nil
}

// Poll requeues the object after about interval, to check an external system that sends no
// events. The delay is drawn uniformly from [interval, interval×(1+[PollJitter])), so that the
// objects of a controller started together do not poll together, and never sooner than asked.
// interval <= 0 is [Done].
func Poll(interval time.Duration) (ctrl.Result, error) {
	return After(Jitter(interval, PollJitter))
}

// Jitter returns a duration drawn uniformly from [d, d×(1+factor)). factor <= 0 means 1.
func Jitter(d time.Duration, factor float64) time.Duration {
	if d <= 0 {
		return d
	}
	return wait.Jitter(d, factor)
}

// Terminal ends the reconcile with an error that is not retried: controller-runtime logs it once,
// counts it in controller_runtime_terminal_reconcile_errors_total (and, like any error, in
// controller_runtime_reconcile_errors_total) and waits for the next change of the object. Use it for failures that retrying cannot fix, such as an invalid spec, and say
// why in a Stalled condition (see [Report]). A nil err is [Done].
func Terminal(err error) (ctrl.Result, error) {
	if err == nil {
		return Done()
	}
	if IsTerminal(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, reconcile.TerminalError(err)
}

// IsTerminal reports whether err is, or wraps, a terminal error (see [Terminal]).
func IsTerminal(err error) bool {
	return err != nil && errors.Is(err, reconcile.TerminalError(nil))
}

// Retry requeues the object because it is not done yet and nothing will send an event when it
// could be: a dependency that is not ready, a resource still being created. Under [WithBackoff],
// the delay grows exponentially per object while it keeps retrying and resets once a reconcile
// of it finishes; without it, the delay is [RetryDelay] with 10% jitter. Retry never returns an
// error, so it is neither logged nor counted as a reconcile error.
func Retry(ctx context.Context) (ctrl.Result, error) {
	if s := stateFrom(ctx); s != nil {
		return ctrl.Result{RequeueAfter: s.retry()}, nil
	}
	return After(Jitter(RetryDelay, PollJitter))
}
