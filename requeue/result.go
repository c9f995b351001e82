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
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
)

// pollJitter is the jitter factor of Poll: a poll interval d becomes a delay drawn uniformly from
// [d, d×1.1).
const pollJitter = 0.1

// Done ends the reconcile: nothing left to do until the next watched event.
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

// Poll requeues the object after about interval, to look again at an external system that sends
// no events. The delay is drawn uniformly from [interval, interval×1.1), so that the objects of a
// controller started together do not poll together, and is never sooner than asked. interval <=
// 0 is [Done]. A poll is not "in progress": a reconcile that polls and writes nothing is in a
// steady state.
func Poll(interval time.Duration) (ctrl.Result, error) {
	if interval <= 0 {
		return Done()
	}
	return After(wait.Jitter(interval, pollJitter))
}

// Terminal ends the reconcile with an error that is not retried: controller-runtime logs it once,
// counts it in controller_runtime_terminal_reconcile_errors_total (and, like any error, in
// controller_runtime_reconcile_errors_total) and does not requeue. The object is reconciled again
// only when an event the controller watches is mapped to it: a change of the object, and equally
// a change of a child it owns or of anything else it watches, or a resync. So the reconcile that
// follows is not proof that the object changed. Use it for failures that retrying cannot fix,
// such as an invalid spec. A nil err is [Done].
//
// reason is the reason of the Stalled and Ready conditions [Report] sets for it, such as
// "InvalidSpec". Empty means the reason err already carries (from an inner Terminal or
// [TerminalError]), else the one [Report] gives any terminal error: the API's reason for a
// request it rejected, or [conditions.ReasonFailed]. A reason the API server would refuse
// ("invalid spec", say) is made valid as [conditions.ReasonFrom] makes one ("InvalidSpec"). An
// err that is already terminal is not wrapped twice.
func Terminal(reason conditions.Reason, err error) (ctrl.Result, error) {
	if err == nil {
		return Done()
	}
	if !validReason(reason) && !hasWord(string(reason)) {
		reason = "" // nothing to make a reason of, such as "!!!": none was given
	}
	switch {
	case reason == "":
		reason, _ = TerminalReason(err)
	case !validReason(reason):
		reason = conditions.ReasonFrom(string(reason))
	}
	if !isTerminal(err) {
		err = reconcile.TerminalError(err)
	}
	return ctrl.Result{}, &stalledError{reason: reason, err: err}
}

// TerminalError is the error of [Terminal] alone, for code that returns an error to a caller that
// makes the result: a helper of the reconciler, or an external.Provider whose terminal failure
// names its own reason (external.Resource then stalls the object with that reason rather than
// its own). A nil err is nil.
func TerminalError(reason conditions.Reason, err error) error {
	_, err = Terminal(reason, err)
	return err
}

// TerminalReason returns the reason given to [Terminal] or [TerminalError] for err or an error it
// wraps (the outermost one), and false when none was: a plain reconcile.TerminalError, a
// Terminal with an empty reason, or an error that is not terminal.
func TerminalReason(err error) (conditions.Reason, bool) {
	var stalled *stalledError
	if errors.As(err, &stalled) && stalled.reason != "" {
		return stalled.reason, true
	}
	return "", false
}

// hasWord reports whether conditions.ReasonFrom makes a reason of s from its own letters or
// digits (before its first colon), rather than returning conditions.ReasonFailed for nothing.
func hasWord(s string) bool {
	s, _, _ = strings.Cut(s, ":")
	return strings.ContainsFunc(s, func(c rune) bool {
		return c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c))
	})
}

// validReason reports whether the API server accepts r as a condition's reason.
func validReason(r conditions.Reason) bool {
	c := metav1.Condition{Type: string(conditions.Stalled), Status: metav1.ConditionTrue, Reason: string(r),
		LastTransitionTime: metav1.Unix(1, 0)}
	return conditions.Validate(c) == nil
}

// stalledError carries the reason given to Terminal.
type stalledError struct {
	reason conditions.Reason
	err    error
}

func (e *stalledError) Error() string { return e.err.Error() }
func (e *stalledError) Unwrap() error { return e.err }

// Retry requeues the object because it is not done yet and nothing will send an event when it
// could be: a dependency that is not ready, a resource still being created. message says what it
// waits for; [Report] shows it in a Reconciling condition.
//
// Retry returns an error. [WithBackoff] turns it into a requeue whose delay grows exponentially
// for the object while it keeps retrying (1s, 2s, 4s, … up to 5 minutes by default) and resets
// once a reconcile of it ends otherwise; it is not logged and not counted as a reconcile error.
// Without WithBackoff, controller-runtime retries it with its own per-object backoff, and logs
// it and counts it as an error.
func Retry(message string) (ctrl.Result, error) {
	return ctrl.Result{}, &retryError{message: message}
}

// retryError is the error of Retry.
type retryError struct {
	message string
}

func (e *retryError) Error() string { return fmt.Sprintf("not done yet, retrying: %s", e.message) }

func isTerminal(err error) bool {
	return err != nil && errors.Is(err, reconcile.TerminalError(nil))
}
