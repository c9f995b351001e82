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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

// ReasonRetrying is the reason [Report] gives Reconciling after an error that will be retried.
const ReasonRetrying conditions.Reason = "RetryingAfterError"

// ReasonFieldManagerConflict is the reason [Report] gives Stalled and Ready after a server-side
// apply that another field manager's fields refused ([ClassFieldConflict]).
const ReasonFieldManagerConflict conditions.Reason = "FieldManagerConflict"

// Report records the outcome of a reconcile, the error it returns (nil for success), in obj's
// status the way kstatus-based tools and `kubectl wait` read it. patch.Helper.Finish calls it
// before it writes the status; without Finish, call it last, in the deferred function that
// writes the status (before the patch helper's Patch):
//
//	defer func() {
//		err = errors.Join(requeue.Report(cluster, err), helper.Patch(ctx, cluster, owned))
//	}()
//
// It returns err, joined with the reason it could not record the outcome, if any (an object
// without status.observedGeneration), so that it can wrap the return value. A condition it sets
// with an invalid reason (one given to [Terminal] is made valid; Ready's own is copied as it is)
// is stored, and the patch package's Helper.Patch refuses to write it, naming it.
//
// Report owns the Reconciling and Stalled conditions and status.observedGeneration; set Ready
// (and the conditions it summarises) yourself, and return:
//
//   - success: Stalled is removed; Reconciling is True, with Ready's reason and message, while
//     Ready is not True (the object is getting there: waiting for a rollout that will send an
//     event needs no requeue and is still in progress), and removed when Ready is True or there
//     is no Ready; status.observedGeneration is set to metadata.generation: this generation has
//     been reconciled;
//   - a terminal error ([Terminal], or a request the API server rejects as invalid): Stalled and
//     Ready False, with the reason given to Terminal (the API's reason for an invalid request)
//     and the error as message; Reconciling is removed and status.observedGeneration set: the
//     controller has done all it can for this generation, and kstatus reports Failed;
//   - a server-side apply refused over fields another field manager owns
//     ([ClassFieldConflict]): Stalled and Ready False with reason [ReasonFieldManagerConflict]
//     and the error, which names the fields and their manager, as message; Reconciling is
//     removed and status.observedGeneration set, as for a terminal error: kstatus reports
//     Failed until a person gives the fields up or the controller takes them with
//     ForceConflicts. [WithBackoff] still retries it with backoff, and the first reconcile
//     that succeeds removes Stalled;
//   - [Retry]: Reconciling True with reason [conditions.ReasonProgressing] and Retry's message;
//   - a conflict, throttling, or a write refused by a leader election fence ([ClassFenced]):
//     nothing changes; it is retried and says nothing about the object;
//   - any other error: Reconciling True with reason [ReasonRetrying] and the error as message;
//     Ready is left alone, so a transient failure does not flip it.
//
// obj must have status.observedGeneration: a Status.ObservedGeneration field, an
// [conditions.ObservedGenerationSetter], or an unstructured object or the adapter of
// conditions.FromUnstructured.
func Report(obj conditions.Setter, err error) error {
	if recordErr := record(obj, err); recordErr != nil {
		return errors.Join(err, fmt.Errorf("failed to report the outcome of the reconcile in the status: %w", recordErr))
	}
	return err
}

func record(obj conditions.Setter, err error) error {
	switch Classify(err) {
	case ClassConflict, ClassAlreadyExists, ClassGone, ClassThrottled, ClassFenced:
		return nil
	case ClassRetry:
		var retry *retryError
		errors.As(err, &retry)
		conditions.MarkReconciling(obj, conditions.ReasonProgressing, retry.message)
		return nil
	case ClassTerminal, ClassInvalid:
		return stall(obj, stalledReason(err), strings.TrimPrefix(err.Error(), "terminal error: "))
	case ClassFieldConflict:
		return stall(obj, ReasonFieldManagerConflict, err.Error())
	case ClassNone:
		conditions.Delete(obj, conditions.Stalled)
		if ready := conditions.Get(obj, conditions.Ready); ready != nil && ready.Status != metav1.ConditionTrue {
			conditions.MarkReconciling(obj, conditions.Reason(ready.Reason), ready.Message)
		} else {
			conditions.Delete(obj, conditions.Reconciling)
		}
		return setObservedGeneration(obj)
	}
	conditions.MarkReconciling(obj, ReasonRetrying, err.Error())
	return nil
}

// stall marks obj Stalled and not Ready with reason and message, and records that its
// generation was observed. MarkStalled removes Reconciling.
func stall(obj conditions.Setter, reason conditions.Reason, message string) error {
	conditions.MarkStalled(obj, reason, message)
	conditions.MarkFalse(obj, conditions.Ready, reason, message)
	return setObservedGeneration(obj)
}

// stalledReason returns the reason of a terminal error: the one given to Terminal, or the API's
// reason for a request it rejected.
func stalledReason(err error) conditions.Reason {
	if reason, ok := TerminalReason(err); ok {
		return reason
	}
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return conditions.ReasonFrom(string(reason))
	}
	return conditions.ReasonFailed
}

func setObservedGeneration(obj conditions.Setter) error {
	o, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Errorf("%T has no metadata.generation to observe", obj)
	}
	_, err := conditions.SetObservedGeneration(o)
	return err
}
