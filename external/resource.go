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

package external

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/requeue"
)

// Reasons of the condition a [Resource] sets, and of Stalled for its terminal errors.
const (
	// ReasonAvailable: the resource exists, is ready and matches the spec (the condition is
	// True).
	ReasonAvailable conditions.Reason = "Available"
	// ReasonCreating: a create was sent; its operation runs, or the resource is not ready yet.
	ReasonCreating conditions.Reason = "Creating"
	// ReasonUpdating: an update was sent; its operation runs, or the resource is not ready yet.
	ReasonUpdating conditions.Reason = "Updating"
	// ReasonNotReady: the resource exists and the provider reports it not ready.
	ReasonNotReady conditions.Reason = "NotReady"
	// ReasonProviderError: a call to the provider failed; it is retried with backoff. The
	// condition keeps its status (it is set Unknown only when there is none yet), so a provider
	// that is briefly unavailable does not flip it.
	ReasonProviderError conditions.Reason = "ProviderError"
	// ReasonObserveFailed: Observe returned a terminal error, such as credentials the provider
	// refuses.
	ReasonObserveFailed conditions.Reason = "ObserveFailed"
	// ReasonCreateFailed: Create failed with a terminal error (the object is Stalled), or its
	// operation failed (Stalled when terminal, retried otherwise).
	ReasonCreateFailed conditions.Reason = "CreateFailed"
	// ReasonUpdateFailed: Update failed with a terminal error (the object is Stalled), or its
	// operation failed (Stalled when terminal, retried otherwise).
	ReasonUpdateFailed conditions.Reason = "UpdateFailed"
	// ReasonNameTaken: Observe reported that the name belongs to someone else ([ErrNameTaken]).
	ReasonNameTaken conditions.Reason = "NameTaken"
	// ReasonCreateOutcomeUnknown: a create was sent, its outcome is unknown (its response was
	// lost, or the controller stopped during the call), Observe does not find the resource and
	// the provider's creates are not idempotent: creating again might make a second resource.
	// A person decides (see [AnnotationPrefix]).
	ReasonCreateOutcomeUnknown conditions.Reason = "CreateOutcomeUnknown"
)

// ErrNameTaken is the error, wrapped, that [Provider.Observe] returns when a resource of the name
// exists and is not the object's (another owner's tag): Ensure stalls the object with
// [ReasonNameTaken] and never adopts, changes or deletes it, and the deletion step finishes
// without deleting it.
var ErrNameTaken = errors.New("the name is taken by a resource that is not this object's")

// Defaults of [Resource]'s intervals.
const (
	// DefaultPollInterval is Resource.PollInterval's default.
	DefaultPollInterval = 10 * time.Second
	// DefaultDriftInterval is Resource.DriftInterval's default.
	DefaultDriftInterval = 10 * time.Minute
)

// maxStale bounds how many times one call reads the object again after its guarded write was
// refused; then it returns a conflict, a quiet requeue.
const maxStale = 3

// Resource keeps one external resource of each object of type T: created once, changed to match
// the object's spec, polled while the provider works, and deleted by a finalizer step. Use it
// inside an ordinary Reconcile, after [finalizer.Lifecycle.Reconcile] and the patch helper's
// snapshot:
//
//	res, err := r.database.Ensure(ctx, db)
//
// and add [Resource.Step] to the Lifecycle's steps. See the package documentation for the
// crash windows it closes and those it cannot.
//
// The zero value of each optional field is a sensible default. A Resource holds no state of its
// own: everything it must remember is in the object. It is safe for concurrent use.
type Resource[T client.Object] struct {
	// Name names the resource in the annotation that keeps its state (see [AnnotationPrefix]),
	// in messages and as the finalizer step, such as "database". Required: a DNS label (lower
	// case letters, digits and '-', at most 63).
	Name string

	// Provider talks to the provider. Required. When it returns operations, it must also
	// implement [Operations].
	Provider Provider[T]

	// Client writes the annotation, in guarded JSON Patch requests of their own (not with the
	// caller's patch helper: a marker must be stored before the call it announces). Required.
	Client client.Client

	// APIReader reads the object from the API server when a guarded write was refused (the copy
	// a decision was based on is stale), and when the copy of an object being deleted has no
	// state. Use the manager's API reader. Defaults to Client, which may need a few more
	// attempts while its cache lags.
	APIReader client.Reader

	// Condition is the condition type Ensure sets, such as "DatabaseReady"; T must then be a
	// conditions.Setter. Empty: no condition.
	Condition conditions.Type

	// ExternalName returns the provider's name for obj's resource. It is called until a create
	// is decided, and its result is then kept in the annotation: a random part (a suffix that
	// makes a name unique) is drawn once, and a later change of the function does not lose
	// the resources created before. Defaults to the object's uid.
	ExternalName func(obj T) string

	// IdempotentCreate reports that sending Create again for the same name and key cannot
	// create a second resource: the provider refuses a second resource of the same name, or
	// honours the key as an idempotency token for longer than the object may wait between two
	// attempts. Then a create whose outcome is unknown, and which Observe does not find, is
	// sent again with the same key. Otherwise (the default) it is never sent again: the object
	// is Stalled with [ReasonCreateOutcomeUnknown] until a person says nothing was created.
	IdempotentCreate bool

	// PollInterval is how often an operation, or a resource that is not ready, is polled: about
	// that often, with jitter (see requeue.Poll). Defaults to DefaultPollInterval.
	PollInterval time.Duration

	// DriftInterval is how often a resource that is ready and up to date is observed again, to
	// find changes made behind the controller's back. Defaults to DefaultDriftInterval; negative
	// means never (drift is then found only when something else reconciles the object).
	DriftInterval time.Duration

	// Fence, when set, is checked before each call that may change something at the provider
	// (Create, Update, Delete); a refusal is returned as the error (requeue.ClassFenced: a quiet
	// requeue). Pass the *fencing.Lock of the manager's leader election.
	Fence Fence
}

// Ensure makes obj's external resource exist and match obj's spec, level-triggered: it observes
// the resource first, then does the one thing its state calls for, and returns what to do next
// for [requeue.Results]:
//
//   - an operation is pending: poll it (about PollInterval, with jitter); when it has finished,
//     record that, and go on;
//   - the resource does not exist: create it, unless a create whose outcome is unknown may
//     have made it (see IdempotentCreate); one that existed before and is gone was deleted
//     behind the controller's back, and is created again, with a new key;
//   - it exists and is not ready: poll it;
//   - it is ready and not up to date: update it (drift is corrected);
//   - it is ready and up to date: the condition is True with [ReasonAvailable], and the
//     result polls after DriftInterval. Nothing is written: a steady state sends no write.
//
// Crash safety: before Create, Ensure stores in the annotation that a create is under way,
// with a guarded write that the API server refuses when the object is being deleted or its
// state changed since the copy obj was read (a cache that lags): then Ensure reads the object
// again with APIReader and decides again. A stale copy therefore never makes a second create,
// nor one after the deletion began. The operations Create, Update and Delete return are stored
// too, so that a restart polls them.
//
// Errors: a terminal error from the provider returns requeue.Terminal with the reason of the
// call ([ReasonObserveFailed], [ReasonCreateFailed], [ReasonUpdateFailed]), or the provider's
// own reason when it gave one with requeue.TerminalError, so requeue.Report
// marks the object Stalled; the condition is False with it. Other errors are returned as they
// are, for requeue.WithBackoff, and leave the condition's status alone ([ReasonProviderError]).
//
// Ensure does nothing for an object being deleted (the finalizer step's work) or one that is
// gone. It changes obj only in its status (the condition, and what Observe records): write it
// with the patch helper as usual. Its own annotation writes go to a copy.
func (r *Resource[T]) Ensure(ctx context.Context, obj T) (ctrl.Result, error) {
	if err := r.validate(obj); err != nil {
		return ctrl.Result{}, err
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	rec, err := r.recordOf(obj)
	if err != nil {
		return r.terminal(obj, ReasonObserveFailed, err)
	}
	for range maxStale {
		res, err := r.ensure(ctx, obj, rec)
		switch {
		case errors.Is(err, errGone):
			return ctrl.Result{}, nil
		case !errors.Is(err, errStale):
			return res, err
		}
		rec, err = r.latest(ctx, obj)
		switch {
		case errors.Is(err, errGone):
			return ctrl.Result{}, nil
		case err != nil:
			return ctrl.Result{}, err
		case rec.deleting:
			return ctrl.Result{}, nil
		}
	}
	return ctrl.Result{}, r.conflict(obj)
}

// ensure is one pass of Ensure, from the state rec. It returns errStale when a guarded write
// found rec stale.
func (r *Resource[T]) ensure(ctx context.Context, obj T, rec record) (ctrl.Result, error) {
	if rec.state.Operation != "" {
		// The operation first: Observe, after it finished, must show what it did.
		next, res, wait, err := r.operation(ctx, obj, rec)
		if wait {
			return res, err
		}
		rec = next
	}
	name := rec.state.Name
	if name == "" {
		name = r.externalName(obj)
	}
	obs, err := r.Provider.Observe(ctx, obj, name)
	if err != nil {
		return r.failed(obj, ReasonObserveFailed, fmt.Errorf("failed to observe %s %s: %w", r.Name, name, err))
	}

	if !obs.Exists {
		return r.absent(ctx, obj, rec, name)
	}
	if rec.state.Phase != phaseCreated {
		// A create was seen to succeed, or an existing resource is adopted.
		next := state{Name: name, Phase: phaseCreated, Attempt: max(rec.state.Attempt, 1)}
		if rec, err = r.write(ctx, obj, rec, next, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch {
	case !obs.Ready:
		return r.progress(obj, ReasonNotReady, fmt.Sprintf("%s %s is not ready", r.Name, name), obs.Message)
	case !obs.UpToDate:
		return r.update(ctx, obj, rec, name)
	}
	r.mark(obj, true, ReasonAvailable, orDefault(obs.Message, fmt.Sprintf("%s %s is available", r.Name, name)))
	if d := r.driftInterval(); d > 0 {
		return requeue.Poll(d)
	}
	return requeue.Done()
}

// update updates the resource name, which Observe found ready but not up to date, and records the
// update's operation, if it returns one.
func (r *Resource[T]) update(ctx context.Context, obj T, rec record, name string) (ctrl.Result, error) {
	if err := r.check(); err != nil {
		return ctrl.Result{}, err
	}
	op, err := r.Provider.Update(ctx, obj, name)
	if err != nil {
		return r.failed(obj, ReasonUpdateFailed, fmt.Errorf("failed to update %s %s: %w", r.Name, name, err))
	}
	message, err := r.recordOperation(ctx, obj, rec, op, kindUpdate, fmt.Sprintf("updating %s %s", r.Name, name))
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.progress(obj, ReasonUpdating, message, "")
}

// pollOperation asks the provider, which must implement Operations, whether operation op has
// finished, and with what error.
func (r *Resource[T]) pollOperation(ctx context.Context, obj T, op Operation) (done bool, opErr, err error) {
	ops, ok := r.Provider.(Operations[T])
	if !ok {
		return false, nil, fmt.Errorf("%T returned operation %s but does not implement external.Operations to poll it", r.Provider, op)
	}
	done, opErr = ops.OperationDone(ctx, obj, op)
	return done, opErr, nil
}

// recordOperation records op, of the given kind, in the state rec holds, when the provider
// returned one, and returns message with the operation named. A state someone else wrote since
// (errStale) is not an error: the next pass reads theirs.
func (r *Resource[T]) recordOperation(ctx context.Context, obj T, rec record, op Operation, kind, message string) (string, error) {
	if op == "" {
		return message, nil
	}
	next := rec.state
	next.Operation, next.OperationKind = op, kind
	if _, err := r.write(ctx, obj, rec, next, false); err != nil && !errors.Is(err, errStale) {
		return "", err
	}
	return message + ": operation " + string(op), nil
}

// operation polls the pending operation of rec. When it has finished, it records that and
// returns the new record with wait false; otherwise the result to return, with wait true.
func (r *Resource[T]) operation(ctx context.Context, obj T, rec record) (next record, res ctrl.Result, wait bool, err error) {
	st := rec.state
	done, opErr, err := r.pollOperation(ctx, obj, st.Operation)
	if err != nil {
		return rec, ctrl.Result{}, true, err
	}
	if !done {
		if opErr != nil {
			res, err := r.providerError(obj, fmt.Errorf("failed to poll operation %s of %s %s: %w", st.Operation, r.Name, st.Name, opErr))
			return rec, res, true, err
		}
		reason, verb := ReasonCreating, "creating"
		if st.OperationKind == kindUpdate {
			reason, verb = ReasonUpdating, "updating"
		}
		res, err := r.progress(obj, reason, fmt.Sprintf("%s %s %s: operation %s", verb, r.Name, st.Name, st.Operation), "")
		return rec, res, true, err
	}
	next, err = r.write(ctx, obj, rec, st.settled(opErr), false)
	if err != nil || opErr == nil {
		return next, ctrl.Result{}, err != nil, err
	}
	reason := ReasonUpdateFailed
	if st.OperationKind == kindCreate {
		reason = ReasonCreateFailed
	}
	err = fmt.Errorf("operation %s of %s %s failed: %w", st.Operation, r.Name, st.Name, opErr)
	if errors.Is(err, reconcile.TerminalError(nil)) {
		res, err = r.terminal(obj, providerReason(err, reason), &providerError{err: err})
		return next, res, true, err
	}
	// Unlike a call that failed, an operation that failed says something: the change was not
	// made. The condition says so, and the error is retried.
	r.mark(obj, false, reason, err.Error())
	return next, ctrl.Result{}, true, err
}

// absent handles a resource that Observe did not find: create it, or not.
func (r *Resource[T]) absent(ctx context.Context, obj T, rec record, name string) (ctrl.Result, error) {
	st := rec.state
	next := state{Name: name, Phase: phaseCreating, Attempt: st.Attempt + 1, Key: newKey()}
	switch {
	case !rec.present:
		next.Attempt = 1
	case st.Phase == phaseCreating:
		// The outcome of the last create is unknown, and Observe does not find it.
		if !r.IdempotentCreate {
			err := fmt.Errorf("the create of %s %s was sent but its outcome is unknown, and the provider does not find it; "+
				"creating it again might make a second one: remove annotation %s of %s once sure that nothing was created",
				r.Name, name, r.annotation(), describe(obj))
			return r.terminal(obj, ReasonCreateOutcomeUnknown, err)
		}
		next.Attempt, next.Key = st.Attempt, st.Key // the same attempt, the same key
	case st.Phase == phaseCreated:
		log.FromContext(ctx).Info("External resource deleted behind the controller's back; creating it again", "resource", r.Name, "name", name)
	}

	// The create is decided: stored, while the object is not being deleted, before it is sent.
	if err := r.check(); err != nil {
		return ctrl.Result{}, err
	}
	rec, err := r.write(ctx, obj, rec, next, true)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.check(); err != nil {
		return ctrl.Result{}, err
	}
	op, err := r.Provider.Create(ctx, obj, name, next.Key)
	if err != nil {
		return r.createFailed(ctx, obj, rec, next, fmt.Errorf("failed to create %s %s: %w", r.Name, name, err))
	}
	after := next
	if op != "" {
		after.Operation, after.OperationKind = op, kindCreate
	} else {
		after.Phase = phaseCreated
	}
	if _, err := r.write(ctx, obj, rec, after, false); err != nil && !errors.Is(err, errStale) {
		// errStale: someone else wrote the state since; the next pass reads theirs.
		return ctrl.Result{}, err
	}
	message := fmt.Sprintf("creating %s %s", r.Name, name)
	if op != "" {
		message += ": operation " + string(op)
	}
	return r.progress(obj, ReasonCreating, message, "")
}

// createFailed returns err, the error of the create decided in next and recorded in rec. A
// terminal error means the provider refused it and nothing was created: that is recorded first, so
// that the next attempt gets a new key.
func (r *Resource[T]) createFailed(ctx context.Context, obj T, rec record, next state, err error) (ctrl.Result, error) {
	if errors.Is(err, reconcile.TerminalError(nil)) {
		failed := next
		failed.Phase = phaseFailed
		if _, writeErr := r.write(ctx, obj, rec, failed, false); writeErr != nil && !errors.Is(writeErr, errStale) && !errors.Is(writeErr, errGone) {
			return ctrl.Result{}, errors.Join(err, writeErr)
		}
	}
	return r.failed(obj, ReasonCreateFailed, err)
}

// conflict is the error of a call that found the object changed maxStale times in a row: a
// conflict, which requeue.WithBackoff requeues quietly.
func (r *Resource[T]) conflict(obj T) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName(),
		fmt.Errorf("the state of %s changed %d times while it was reconciled", r.Name, maxStale))
}

// progress marks the condition False with reason and message (detail, when set, replaces the
// message) and polls.
func (r *Resource[T]) progress(obj T, reason conditions.Reason, message, detail string) (ctrl.Result, error) {
	r.mark(obj, false, reason, orDefault(detail, message))
	return requeue.Poll(r.pollInterval())
}

// failed returns err: terminal with reason, and the condition False, when it is terminal;
// otherwise as it is, with the condition left alone.
func (r *Resource[T]) failed(obj T, reason conditions.Reason, err error) (ctrl.Result, error) {
	if errors.Is(err, ErrNameTaken) {
		return r.terminal(obj, ReasonNameTaken, &providerError{err: err})
	}
	if errors.Is(err, reconcile.TerminalError(nil)) {
		return r.terminal(obj, providerReason(err, reason), &providerError{err: err})
	}
	return r.providerError(obj, err)
}

// providerReason is the reason of a terminal error from the provider: the one it gave with
// requeue.TerminalError, or def, the reason of the call that failed.
func providerReason(err error, def conditions.Reason) conditions.Reason {
	if reason, ok := requeue.TerminalReason(err); ok {
		return reason
	}
	return def
}

// terminal marks the condition False with reason and returns the terminal error.
func (r *Resource[T]) terminal(obj T, reason conditions.Reason, err error) (ctrl.Result, error) {
	r.mark(obj, false, reason, err.Error())
	return requeue.Terminal(reason, err)
}

// providerError returns err, retried, and sets the condition Unknown only when there is none.
func (r *Resource[T]) providerError(obj T, err error) (ctrl.Result, error) {
	if s, ok := any(obj).(conditions.Setter); ok && r.Condition != "" && conditions.Get(s, r.Condition) == nil {
		conditions.MarkUnknown(s, r.Condition, ReasonProviderError, err.Error())
	}
	return ctrl.Result{}, err
}

// mark sets the condition, when there is one.
func (r *Resource[T]) mark(obj T, ok bool, reason conditions.Reason, message string) {
	if r.Condition == "" {
		return
	}
	s := any(obj).(conditions.Setter) // validate checked it
	if ok {
		conditions.MarkTrue(s, r.Condition, reason, message)
	} else {
		conditions.MarkFalse(s, r.Condition, reason, message)
	}
}

// check asks the fence, when there is one.
func (r *Resource[T]) check() error {
	if r.Fence == nil {
		return nil
	}
	if err := r.Fence.Check(); err != nil {
		return fmt.Errorf("failed to call the provider for %s: %w", r.Name, err)
	}
	return nil
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// validate reports a Resource that cannot work, naming what is wrong.
func (r *Resource[T]) validate(obj T) error {
	var problems []string
	if len(r.Name) > 63 || !dnsLabel.MatchString(r.Name) {
		problems = append(problems, fmt.Sprintf("Name %q is not a DNS label", r.Name))
	}
	if r.Provider == nil {
		problems = append(problems, "Provider is nil")
	}
	if r.Client == nil {
		problems = append(problems, "Client is nil")
	}
	if _, ok := any(obj).(conditions.Setter); r.Condition != "" && !ok {
		problems = append(problems, fmt.Sprintf("Condition is set but %T is not a conditions.Setter", obj))
	}
	if obj.GetUID() == "" {
		problems = append(problems, fmt.Sprintf("%s has no uid: read it from the API server", describe(obj)))
	}
	if len(problems) > 0 {
		return fmt.Errorf("failed to reconcile external resource %q: %s", r.Name, strings.Join(problems, "; "))
	}
	return nil
}

func (r *Resource[T]) externalName(obj T) string {
	if r.ExternalName != nil {
		return r.ExternalName(obj)
	}
	return string(obj.GetUID())
}

func (r *Resource[T]) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return DefaultPollInterval
}

func (r *Resource[T]) driftInterval() time.Duration {
	if r.DriftInterval == 0 {
		return DefaultDriftInterval
	}
	return r.DriftInterval
}

// providerError is a terminal error from the provider whose message is the provider's, without
// controller-runtime's "terminal error: " prefix, which the result of requeue.Terminal carries
// once.
type providerError struct{ err error }

func (e *providerError) Error() string {
	return strings.ReplaceAll(e.err.Error(), "terminal error: ", "")
}
func (e *providerError) Unwrap() error { return e.err }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
