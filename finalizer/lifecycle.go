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

package finalizer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

// Reasons of the Deleting and Stalled conditions and of the Events a [Lifecycle] records.
const (
	// ReasonCleanupInProgress: a step reported that its cleanup is under way.
	ReasonCleanupInProgress conditions.Reason = "CleanupInProgress"
	// ReasonCleanupFailed: a step returned an error; it is retried with backoff.
	ReasonCleanupFailed conditions.Reason = "CleanupFailed"
	// ReasonCleanupTimedOut: cleanup did not finish within Lifecycle.Timeout; the object is
	// Stalled and retried only every Lifecycle.StalledRetryInterval.
	ReasonCleanupTimedOut conditions.Reason = "CleanupTimedOut"
	// ReasonFinalized: every step is done and the finalizer was removed (an Event).
	ReasonFinalized conditions.Reason = "Finalized"
	// ReasonReleased: a person released the finalizer with [ReleaseAnnotation] before the steps
	// were done (a Warning Event).
	ReasonReleased conditions.Reason = "FinalizerReleased"
	// ReasonReleaseIgnored: the [ReleaseAnnotation] was set before the deletion began, so it
	// releases nothing (a Warning Event, recorded once).
	ReasonReleaseIgnored conditions.Reason = "FinalizerReleaseIgnored"
	// ReasonRetained: Lifecycle.Retain said to keep the external resources; the steps were skipped
	// (an Event).
	ReasonRetained conditions.Reason = "ResourcesRetained"
)

// ReleaseAnnotation is the escape hatch for a person: on an object being deleted whose
// finalizer is stuck because the external system it cleans up is gone for good, set this
// annotation to the value [ReleaseValue] gives, the finalizer's name and the object's
// deletionTimestamp,
//
//	kubectl annotate clusters.apps.example.com/demo \
//	  finalizer.tenon.dev/release=apps.example.com/cleanup@2026-12-02T15:04:05Z
//
// and a [Lifecycle] with AllowRelease skips its remaining steps and removes the finalizer. It
// records a Warning Event and a log line that name who set the annotation (the field manager
// that managedFields record, such as kubectl-annotate, or, when the object was read from a cache
// that strips managedFields, a pointer to the audit log) and the steps not known to have
// finished, so what may have been left behind is on record.
//
// Because the value names this deletion, an annotation set before the deletion began (copied
// from a template, kept in Git) can never hold it. The plain finalizer name is accepted too, but
// only when the Lifecycle saw the deletion without it first, so it was set during the deletion;
// one that was already there when the Lifecycle first saw the deletion releases nothing, and a
// Warning Event says so once and gives the value to set. Neither form depends on clocks or on
// managedFields, and one controller's value never releases another's finalizer.
const ReleaseAnnotation = "finalizer.tenon.dev/release"

// Progress is what a cleanup [Step] reports: [Finished], or [Waiting] for something. The zero
// Progress is a step in progress that asked for no delay: it runs again at the object's next
// event, and after StalledRetryInterval at the latest.
type Progress struct {
	done    bool
	after   time.Duration
	message string
}

// Finished reports that a step's cleanup is complete.
func Finished() Progress { return Progress{done: true} }

// Waiting reports that a step's cleanup is under way and should be checked again after about
// after (at least one second); message says what it waits for, for the Deleting condition. It is
// not an error: nothing is logged or counted as a failure.
func Waiting(after time.Duration, message string) Progress {
	return Progress{after: max(after, time.Second), message: message}
}

// Step is one cleanup action of a [Lifecycle], such as deleting a DNS record.
type Step[T client.Object] struct {
	// Name identifies the step in conditions, Events and logs, such as "dns-record".
	Name string

	// Run performs or checks the cleanup. It runs again on every reconcile of the deleted object
	// until every step is done, including after it reported done, so it must be idempotent and
	// cheap once done: check whether the external resource still exists before deleting it, and
	// report [Finished] when it does not.
	Run func(ctx context.Context, obj T) (Progress, error)

	// External marks a step that cleans up something outside the cluster (a cloud resource, a
	// DNS record): [Lifecycle].Retain skips external steps and only those. Steps that clean up
	// Kubernetes objects (tracked children the garbage collector cannot reach) run whatever
	// Retain says, so a policy that keeps the external resource does not leak them.
	External bool
}

// Lifecycle runs a controller's finalizer: it adds the finalizer while the object lives and,
// once the object is deleted, runs ordered cleanup steps and removes the finalizer only when
// every step is done. The zero value of each optional field is a sensible default.
//
// A Lifecycle keeps a little state per object being deleted (when its failing step may run
// next), so use one Lifecycle per controller, by pointer, for the life of the controller. It is
// safe for concurrent use.
type Lifecycle[T client.Object] struct {
	// Finalizer is the finalizer's name: domain-qualified, such as "apps.example.com/cleanup",
	// so that it cannot collide with another controller's. Required.
	Finalizer string

	// Client writes the finalizer and the object's status. Required.
	Client client.Client

	// Steps are run in order, or in reverse order when Reverse is set; a step runs only when
	// the steps before it are done.
	Steps []Step[T]

	// Reverse runs the steps last to first, to tear down in the reverse order of creation.
	Reverse bool

	// Recorder, when set, receives an Event for every failed step, for a deadline that passed,
	// and when the finalizer is removed or released.
	Recorder events.EventRecorder

	// Timeout is the longest cleanup may take, counted from the deletionTimestamp (which the API
	// server keeps to the second, so the deadline can pass up to a second early). After it the
	// object is marked Stalled with reason CleanupTimedOut; a failing step is then retried only
	// every StalledRetryInterval, without returning errors, rather than failing noisily forever,
	// while a step in progress keeps its own pace. Zero means no deadline.
	Timeout time.Duration

	// StalledRetryInterval is how often cleanup is retried after Timeout, the longest a failing
	// step waits between two runs before it, and the longest a step in progress without a delay
	// waits for an event. Defaults to 10 minutes.
	StalledRetryInterval time.Duration

	// AllowRelease enables [ReleaseAnnotation]. Off by default: turn it on when people must be
	// able to unblock deletion after an external system disappeared.
	AllowRelease bool

	// Clock tells the time, for Timeout and for when a step may run again. Default: the real
	// clock. A test sets a fake one (k8s.io/utils/clock/testing) to step through waits and
	// deadlines without waiting.
	Clock clock.PassiveClock

	// Retain, when set and true for the object being deleted, skips the steps marked External:
	// the external resources are kept on purpose (a deletion policy such as
	// spec.deletionPolicy: Retain). The other steps run as always, and the finalizer is removed
	// once they are done. An Event records which steps were skipped.
	Retain func(obj T) bool

	mu      sync.Mutex
	cleanup map[types.UID]*cleanupState
}

// cleanupState is what a Lifecycle remembers of one object being deleted.
type cleanupState struct {
	// step is the first step not done at the last run, and failures the number of times in a
	// row it failed.
	step     string
	failures int
	// next is when the step that is not done may run again: a failing step's retry, or the
	// time a step in progress asked to be checked again after.
	next time.Time
	// timedOut and ignoredRelease record the Events already recorded, so that each is recorded
	// once.
	timedOut, ignoredRelease bool
	// mismatchedRelease is the last release value that named another deletion, recorded in an
	// Event.
	mismatchedRelease string
	// seen is set once the Lifecycle saw the object being deleted, and releaseAtFirstSight is
	// the value of its release annotation then.
	seen                bool
	releaseAtFirstSight string
	// lastRun is when the Lifecycle last ran for the object.
	lastRun time.Time
}

// Reconcile runs the finalizer logic for obj and tells the caller whether to go on with its
// normal reconcile:
//
//	if proceed, res, err := r.lifecycle.Reconcile(ctx, cluster); !proceed {
//		return res, err
//	}
//
// When obj is not being deleted, Reconcile ensures the finalizer (writing only when it is
// missing) and returns proceed true. Call it before creating anything the finalizer must clean
// up, so that nothing is created without a finalizer to remove it. When obj turns out to be
// deleted, or gone altogether, meanwhile, proceed is false: there is nothing to create.
//
// When obj is being deleted and has the finalizer, Reconcile returns proceed false and:
//
//   - runs the steps in order; the first that is not done ends this reconcile: in progress
//     requeues after its delay without an error; an error is returned (conflicts quietly, see
//     requeue.WithBackoff) and recorded in an Event;
//   - retries a failing step after 1s, 2s, 4s, … up to StalledRetryInterval, whatever events
//     arrive in between: a reconcile before that time runs no step, writes nothing and requeues
//     for the time left, so a step whose error changes every time cannot make a hot loop of
//     status writes and watch events, whatever predicates the controller uses;
//   - keeps a Deleting condition (when T is a conditions.Setter) that names the step, the
//     reason and the message, so `kubectl get` shows why deletion waits;
//   - after Timeout, marks the object Stalled (one Event when it does) and retries a failing
//     step only every StalledRetryInterval;
//   - removes the finalizer once every step is done (the object then disappears unless other
//     finalizers hold it), or when Retain or [ReleaseAnnotation] say so; the Event that says so
//     is recorded once the finalizer is removed.
//
// When obj is being deleted without the finalizer, there is nothing to do: proceed false and
// an empty result.
func (l *Lifecycle[T]) Reconcile(ctx context.Context, obj T) (proceed bool, result ctrl.Result, err error) {
	if err := validate(l.Finalizer); err != nil {
		return false, ctrl.Result{}, fmt.Errorf("failed to run finalizer lifecycle: %w", err)
	}
	if obj.GetDeletionTimestamp() == nil {
		if _, err := Ensure(ctx, l.Client, obj, l.Finalizer); err != nil {
			if apierrors.IsNotFound(err) {
				return false, ctrl.Result{}, nil // gone: nothing to add a finalizer to, nothing to create
			}
			return false, ctrl.Result{}, err
		}
		if obj.GetDeletionTimestamp() != nil {
			// Deleted while we tried to add the finalizer: nothing of ours to clean up yet.
			return false, ctrl.Result{}, nil
		}
		return true, ctrl.Result{}, nil
	}
	if !has(obj, l.Finalizer) {
		l.forget(obj)
		return false, ctrl.Result{}, nil
	}
	result, err = l.finalize(ctx, obj)
	return false, result, err
}

// finalize runs the steps of an object being deleted that still has the finalizer.
func (l *Lifecycle[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	state := l.state(obj)
	l.firstSight(obj, state)
	if l.AllowRelease {
		if done, res, err := l.releaseIfRequested(ctx, obj, state); done {
			return res, err
		}
	}
	steps, retained := l.stepsToRun(obj)
	if wait := l.wait(state); wait > 0 && !slices.Contains(retained, state.step) {
		// A failing step waits for its retry, and a step in progress for the time it asked for,
		// whatever woke this reconcile (another controller's write, a child's event); one that
		// Retain now skips does not hold the others up.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	h, err := patch.NewHelper(obj, l.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, step := range steps {
		progress, stepErr := step.Run(ctx, obj)
		if stepErr == nil && progress.done {
			continue
		}
		return l.notDone(ctx, obj, h, state, step.Name, progress, stepErr)
	}
	if len(retained) > 0 {
		return l.release(ctx, obj, corev1.EventTypeNormal, ReasonRetained, "Retained",
			fmt.Sprintf("external resources retained by policy; cleanup steps skipped: %s; finalizer %s removed", strings.Join(retained, ", "), l.Finalizer))
	}
	return l.release(ctx, obj, corev1.EventTypeNormal, ReasonFinalized, "Finalized",
		fmt.Sprintf("cleanup complete (%s); finalizer %s removed", strings.Join(l.stepNames(), ", "), l.Finalizer))
}

// releaseIfRequested removes the finalizer when the release annotation asks for it and reports
// that it did (done); it records an Event once when the annotation is there but may predate the
// deletion.
func (l *Lifecycle[T]) releaseIfRequested(ctx context.Context, obj T, state *cleanupState) (done bool, _ ctrl.Result, _ error) {
	switch l.releaseRequested(obj, state) {
	case releaseGranted:
		pending := strings.Join(l.pendingSteps(obj, state), ", ")
		last := l.lastProgress(obj)
		by := releaseSetter(obj)
		log.FromContext(ctx).Info("Finalizer released by annotation: cleanup steps may not have completed and external resources may be left behind",
			"finalizer", l.Finalizer, "annotation", ReleaseAnnotation, "releasedBy", by, "pendingSteps", pending, "lastProgress", last)
		res, err := l.release(ctx, obj, corev1.EventTypeWarning, ReasonReleased, "Released",
			fmt.Sprintf("finalizer released by the %s annotation (%s) before cleanup completed; steps %s may have left resources behind (last progress: %s)",
				ReleaseAnnotation, by, pending, last))
		return true, res, err
	case releaseUnclear:
		if l.once(&state.ignoredRelease) {
			l.event(obj, corev1.EventTypeWarning, ReasonReleaseIgnored, "Release",
				"the %s annotation is ignored: it was there when this controller first saw the deletion, so it may predate it; "+
					"to release the finalizer, set it to %s", ReleaseAnnotation, ReleaseValue(obj, l.Finalizer))
		}
	case releaseMismatch:
		value := obj.GetAnnotations()[ReleaseAnnotation]
		if l.onceFor(&state.mismatchedRelease, value) {
			l.event(obj, corev1.EventTypeWarning, ReasonReleaseIgnored, "Release",
				"the %s annotation %q is ignored: it does not name this deletion (deletionTimestamp %s); "+
					"to release the finalizer, set it to %s", ReleaseAnnotation, value,
				obj.GetDeletionTimestamp().UTC().Format(time.RFC3339), ReleaseValue(obj, l.Finalizer))
		}
	}
	return false, ctrl.Result{}, nil
}

// notDone records that step is not done (failed with stepErr, or in progress) in obj's
// conditions, an Event for a failure, and when it may run next, and returns what Reconcile
// returns for it.
func (l *Lifecycle[T]) notDone(ctx context.Context, obj T, h *patch.Helper, state *cleanupState, step string, progress Progress, stepErr error) (ctrl.Result, error) {
	message := fmt.Sprintf("step %s: %s", step, progress.message)
	if stepErr != nil {
		message = fmt.Sprintf("step %s failed: %v", step, stepErr)
		if requeue.Classify(stepErr) != requeue.ClassConflict {
			l.event(obj, corev1.EventTypeWarning, ReasonCleanupFailed, "Cleanup", "%s", message)
		}
	}
	timedOut := l.timedOut(obj)
	if err := l.recordProgress(ctx, obj, h, message, timedOut); err != nil {
		// The status is informational; the step's outcome decides what happens next.
		log.FromContext(ctx).V(1).Info("Failed to record cleanup progress", "finalizer", l.Finalizer, "error", err.Error())
	}
	after := progress.after
	switch {
	case timedOut && stepErr != nil:
		// A failing step is retried slowly, without errors; a step still in progress keeps its
		// own pace, since it is moving.
		after = l.stalledRetryInterval()
	case stepErr != nil:
		after = 0
	}
	l.progressed(state, step, stepErr != nil, timedOut, after)
	if after == 0 && stepErr == nil {
		// In progress without a delay (the zero Progress): it runs again at the next event, and
		// at the stalled retry interval at the latest, so that the Lifecycle never goes silent
		// on an object it holds, nor forgets what it saw of it.
		after = l.stalledRetryInterval()
	}
	if timedOut {
		if l.once(&state.timedOut) {
			l.event(obj, corev1.EventTypeWarning, ReasonCleanupTimedOut, "Cleanup",
				"cleanup did not finish within %s of deletion; retrying every %s: %s", l.Timeout, after, message)
		}
		return ctrl.Result{RequeueAfter: after}, nil
	}
	return ctrl.Result{RequeueAfter: after}, stepErr
}

// stepsToRun returns the steps to run for obj, in the order they run, and the names of the steps
// Retain skips.
func (l *Lifecycle[T]) stepsToRun(obj T) (steps []Step[T], retained []string) {
	steps = slices.Clone(l.Steps)
	if l.Reverse {
		slices.Reverse(steps)
	}
	if l.Retain == nil || !l.Retain(obj) {
		return steps, nil
	}
	steps = slices.DeleteFunc(steps, func(s Step[T]) bool {
		if s.External {
			retained = append(retained, s.Name)
		}
		return s.External
	})
	return steps, retained
}

// release removes the finalizer and, once it is removed, records the Event that says why.
func (l *Lifecycle[T]) release(ctx context.Context, obj T, eventType string, reason conditions.Reason, action, note string) (ctrl.Result, error) {
	if err := l.retire(ctx, obj); err != nil {
		// The status is informational: the finalizer goes all the same.
		log.FromContext(ctx).V(1).Info("Failed to remove the cleanup progress", "finalizer", l.Finalizer, "error", err.Error())
	}
	if _, err := Remove(ctx, l.Client, obj, l.Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	l.event(obj, eventType, reason, action, "%s", note)
	l.forget(obj)
	return ctrl.Result{}, nil
}

// progressed records the outcome of a step that is not done: a failure pushes its next run back,
// exponentially from one second up to the stalled retry interval; progress clears the backoff and
// sets its next run after, the delay the step asked for.
func (l *Lifecycle[T]) progressed(state *cleanupState, step string, failed, timedOut bool, after time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if state.step != step || !failed {
		state.failures = 0
	}
	state.step = step
	state.next = time.Time{}
	if !failed {
		if after > 0 {
			state.next = l.now().Add(after)
		}
		return
	}
	state.failures++
	limit := l.stalledRetryInterval()
	delay := limit
	if !timedOut && state.failures < 31 {
		delay = min(time.Second<<(state.failures-1), limit)
	}
	state.next = l.now().Add(delay)
}

// state returns what the Lifecycle remembers of obj, and forgets objects it has not heard of for
// long: deleted without it noticing, or whose controller moved on.
func (l *Lifecycle[T]) state(obj T) *cleanupState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cleanup == nil {
		l.cleanup = map[types.UID]*cleanupState{}
	}
	now := l.now()
	stale := now.Add(-2 * l.stalledRetryInterval())
	for uid, s := range l.cleanup {
		// Not run for long, and not waiting for a later run: a state without a next run (a step
		// in progress that asked for no delay) is forgotten too once its object is gone.
		if s.lastRun.Before(stale) && s.next.Before(stale) {
			delete(l.cleanup, uid)
		}
	}
	s, ok := l.cleanup[obj.GetUID()]
	if !ok {
		s = &cleanupState{}
		l.cleanup[obj.GetUID()] = s
	}
	s.lastRun = now
	return s
}

// wait returns how long the failing step of state waits before it may run again.
func (l *Lifecycle[T]) wait(state *cleanupState) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return state.next.Sub(l.now())
}

// once sets the flag of a state and reports whether it was not set yet.
func (l *Lifecycle[T]) once(flag *bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := !*flag
	*flag = true
	return first
}

// onceFor reports whether value differs from *last, and records it: an Event about a value is
// recorded once for each value.
func (l *Lifecycle[T]) onceFor(last *string, value string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := *last != value
	*last = value
	return first
}

func (l *Lifecycle[T]) forget(obj T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.cleanup, obj.GetUID())
}

// pendingSteps returns the steps not known to be done: from the first not done at this
// Lifecycle's last run, or the one its line of the Deleting condition names, on; all when
// neither says.
func (l *Lifecycle[T]) pendingSteps(obj T, state *cleanupState) []string {
	names := l.stepNames()
	if l.Reverse {
		slices.Reverse(names)
	}
	l.mu.Lock()
	first := state.step
	l.mu.Unlock()
	if first == "" {
		line := l.ownProgress(obj)
		for _, n := range names {
			if strings.HasPrefix(line, "step "+n+":") || strings.HasPrefix(line, "step "+n+" failed:") {
				first = n
			}
		}
	}
	if i := slices.Index(names, first); i >= 0 {
		return names[i:]
	}
	return names
}

// lastProgress returns this Lifecycle's line of obj's Deleting condition, or "none recorded".
func (l *Lifecycle[T]) lastProgress(obj T) string {
	if line := l.ownProgress(obj); line != "" {
		return line
	}
	return "none recorded"
}

// timedOut reports whether cleanup has taken longer than Timeout.
func (l *Lifecycle[T]) timedOut(obj T) bool {
	ts := obj.GetDeletionTimestamp()
	return l.Timeout > 0 && ts != nil && l.now().Sub(ts.Time) > l.Timeout
}

// now returns the time by Clock.
func (l *Lifecycle[T]) now() time.Time {
	if l.Clock == nil {
		return time.Now()
	}
	return l.Clock.Now()
}

func (l *Lifecycle[T]) stalledRetryInterval() time.Duration {
	if l.StalledRetryInterval > 0 {
		return l.StalledRetryInterval
	}
	return 10 * time.Minute
}

func (l *Lifecycle[T]) stepNames() []string {
	names := make([]string, len(l.Steps))
	for i, s := range l.Steps {
		names[i] = s.Name
	}
	return names
}

func (l *Lifecycle[T]) event(obj T, eventType string, reason conditions.Reason, action, note string, args ...any) {
	if l.Recorder != nil {
		l.Recorder.Eventf(obj, nil, eventType, string(reason), action, note, args...)
	}
}
