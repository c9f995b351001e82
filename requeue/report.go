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
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// ReasonRetrying is the reason [Report] gives Reconciling after an error that will be retried.
const ReasonRetrying conditions.Reason = "RetryingAfterError"

// Report records the outcome of a reconcile in obj's kstatus conditions, so that tools and users
// see what the result and error say, and reports whether it changed them. Call it just before
// returning, with the values returned, and write the status afterwards (the patch package's
// helper does it in one deferred call):
//
//   - a terminal error (or an invalid request, see [Classify]) marks the object Stalled and Ready
//     False, with a reason derived from the error and the error as message, and sets
//     status.observedGeneration: the controller has done all it can for this generation;
//   - a conflict, or throttling, changes nothing: it is retried at once and says nothing about
//     the object;
//   - any other error marks the object Reconciling with reason [ReasonRetrying] and the error as
//     message; Ready is left alone, so a transient failure does not flip it;
//   - success removes Stalled and the Reconciling that Report set after an earlier error, and
//     sets status.observedGeneration. A Reconciling the reconciler set itself is left alone:
//     only the reconciler knows whether work is still under way (waiting for a rollout that will
//     send an event returns [Done] and is still progress), so it marks Reconciling while working
//     and clears it with conditions.MarkReconciled when done.
//
// Report owns Stalled: a reconciler that wants to report Stalled returns a terminal error (see
// [Terminal]) rather than setting it and returning success. status.observedGeneration is set
// for every object conditions.SetObservedGeneration supports, the adapter of
// conditions.FromUnstructured included; an object it does not support (one without the field) is
// left without it, which kstatus reads as "no generation to compare".
func Report(obj conditions.Setter, _ ctrl.Result, err error) (changed bool) {
	mark := func(c bool, _ error) { changed = changed || c }
	switch Classify(err) {
	case ClassConflict, ClassAlreadyExists, ClassGone, ClassThrottled:
		return false
	case ClassTerminal, ClassInvalid:
		message := strings.TrimPrefix(err.Error(), "terminal error: ")
		reason := conditions.ReasonFrom(message)
		mark(conditions.MarkStalled(obj, reason, message))
		mark(conditions.MarkFalse(obj, conditions.Ready, reason, message))
		setObservedGeneration(obj, &changed)
	case ClassNone:
		changed = conditions.Delete(obj, conditions.Stalled)
		if c := conditions.Get(obj, conditions.Reconciling); c != nil && c.Reason == string(ReasonRetrying) {
			changed = conditions.Delete(obj, conditions.Reconciling) || changed
		}
		setObservedGeneration(obj, &changed)
	default:
		mark(conditions.MarkReconciling(obj, ReasonRetrying, err.Error()))
	}
	return changed
}

func setObservedGeneration(obj conditions.Setter, changed *bool) {
	if o, ok := obj.(metav1.Object); ok {
		if c, err := conditions.SetObservedGeneration(o); err == nil && c {
			*changed = true
		}
	}
}
