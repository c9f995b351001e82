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
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Results combines the outcomes of the steps of one reconcile into the single result to return.
// The zero value is ready to use:
//
//	var results requeue.Results
//	results.Add(r.reconcileConfig(ctx, cluster))
//	results.Add(r.reconcileDNS(ctx, cluster))
//	return results.Merge()
//
// Results is not safe for concurrent use.
type Results struct {
	result ctrl.Result
	errs   []error
}

// Add records the outcome of one step. It takes a step's two return values directly.
func (r *Results) Add(res ctrl.Result, err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
	if res.RequeueAfter > 0 && (r.result.RequeueAfter == 0 || res.RequeueAfter < r.result.RequeueAfter) {
		r.result.RequeueAfter = res.RequeueAfter
	}
	if res.Priority != nil && (r.result.Priority == nil || *res.Priority > *r.result.Priority) {
		p := *res.Priority
		r.result.Priority = &p
	}
}

// Merge returns the combined outcome:
//
//   - without errors: the lowest non-zero RequeueAfter of all steps (the step that needs to run
//     soonest decides), or [Done]; the highest Priority of all steps;
//   - with errors: no delay (controller-runtime ignores a result returned with an error, and
//     retries with its rate limiter instead) and the errors joined. The joined error is terminal
//     only when every error is terminal: a terminal error must not stop the retry of a step that
//     failed transiently, so terminal errors are unwrapped when mixed with others.
//
// A terminal error therefore drops the delay another step asked for. If a step must keep
// polling while another is stuck, report the stuck step in a condition (see [Report]) and
// return the poll result instead of the terminal error.
func (r *Results) Merge() (ctrl.Result, error) {
	switch {
	case len(r.errs) == 0:
		return r.result, nil
	case len(r.errs) == 1:
		return ctrl.Result{Priority: r.result.Priority}, r.errs[0]
	}
	joined := errors.Join(r.errs...)
	for _, err := range r.errs {
		if !isTerminal(err) {
			// errors.Is finds a terminal error anywhere in a join; hide it so the whole is retried.
			return ctrl.Result{Priority: r.result.Priority}, &retryableError{err: joined}
		}
	}
	return ctrl.Result{Priority: r.result.Priority}, joined
}

// retryableError wraps errors of which some are terminal and some are not. It answers errors.Is
// and errors.As for the errors it wraps, except that it is not terminal itself, so that
// controller-runtime retries it.
type retryableError struct {
	err error
}

func (e *retryableError) Error() string { return e.err.Error() }

// Is reports whether any wrapped error matches target, unless target is the terminal error.
func (e *retryableError) Is(target error) bool {
	return !isTerminal(target) && errors.Is(e.err, target)
}

// As finds the first wrapped error that matches target.
func (e *retryableError) As(target any) bool {
	return errors.As(e.err, target)
}
