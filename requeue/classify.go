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
	"net"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/tenon-dev/tenon/conditions"
)

// Class is what kind of failure an error is, which decides how [WithBackoff] and [Report] treat
// it; see [Classify].
type Class int

// The classes of errors, with what [WithBackoff] does with each.
const (
	// ClassNone is a nil error: the reconcile is [Done].
	ClassNone Class = iota

	// ClassConflict is a 409 Conflict: the object changed since it was read (optimistic
	// concurrency), or another writer changed what this reconcile changed too (see
	// patch.ConflictError). Normal under concurrency: a quiet requeue, no error. A server-side
	// apply refused over fields another field manager owns is a 409 Conflict too, but not this
	// class: see [ClassFieldConflict].
	ClassConflict

	// ClassAlreadyExists is a 409 AlreadyExists, usually from a create based on a stale cache:
	// the next reconcile sees the object. A quiet requeue, no error.
	ClassAlreadyExists

	// ClassGone is a 410 Gone or expired resourceVersion: the state read is too old. A quiet
	// requeue, no error.
	ClassGone

	// ClassThrottled is a 429 TooManyRequests, or a server timeout that asks the client to wait:
	// requeue after the delay the server suggests (Retry-After), no error.
	ClassThrottled

	// ClassNotFound is a 404: something the reconcile needs does not exist (yet). Returned as an
	// error: the controller retries with backoff and logs it. Where NotFound means done (the
	// reconciled object itself is gone), ignore it with client.IgnoreNotFound before.
	ClassNotFound

	// ClassTransient is a failure expected to go away: timeouts, 5xx responses, an unavailable
	// server, a dropped connection. Returned as an error: retried with backoff and logged.
	ClassTransient

	// ClassAuth is a 401 Unauthorized or 403 Forbidden: the controller lacks credentials or
	// RBAC. Returned as an error, retried with backoff (permissions can be granted without a
	// restart), and logged, since a person has to act.
	ClassAuth

	// ClassInvalid is a request the API server rejects as malformed or invalid (400, 405, 406,
	// 413, 415, 422), or one refused before it was sent because a condition it would write is
	// invalid (an error wrapping conditions.ErrInvalid, as tenon's patch.Helper and
	// patch.Applier return): sending it again fails again until the object or the code changes.
	// A terminal error: not retried, logged once.
	ClassInvalid

	// ClassTerminal is an error already marked terminal (see [Terminal]). Passed through.
	ClassTerminal

	// ClassOther is any other error. Returned as an error: retried with backoff and logged.
	ClassOther

	// ClassRetry is the error of [Retry]: not done yet. A quiet requeue with a per-object
	// backoff, no error.
	ClassRetry

	// ClassFenced is a write that this replica refused to send because it cannot be sure it
	// still holds its leader election lease (tenon's fencing.RefusedError, or any error with a
	// Fenced() bool method that returns true). A quiet requeue with a per-object backoff, no
	// error: either the next renewal reopens the fence, or another replica leads now and
	// controller-runtime stops this one once it sees the lease lost. Not a conflict: the
	// object did not change, and nothing was sent.
	ClassFenced

	// ClassFieldConflict is a server-side apply the API server refused because another field
	// manager owns fields it sets, with other values: "Apply failed with 1 conflict: conflict
	// with "kubectl" using v1: .spec.replicas", a 409 Conflict whose status details have a cause
	// of type FieldManagerConflict. It is not a race: the other manager keeps the fields until a
	// person (or that manager) gives them up, or this controller applies with ForceConflicts,
	// so no retry resolves it by itself. Returned as an error, retried with backoff (the other
	// manager may let go) and logged; [Report] marks the object Stalled and not Ready with
	// [ReasonFieldManagerConflict] and the fields in the message. The 409 of an apply refused
	// for its resourceVersion precondition (a race lost, such as tenon's patch.Applier checks
	// for owned children) has no such cause and stays a [ClassConflict].
	ClassFieldConflict
)

var classNames = [...]string{"none", "conflict", "already_exists", "gone", "throttled", "not_found", "transient", "auth", "invalid", "terminal", "other", "retry", "fenced", "field_conflict"}

// String returns the class's name as used in metric labels, such as "conflict".
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "unknown"
	}
	return classNames[c]
}

// Classify returns the class of err. It looks through wrapped errors (fmt.Errorf with %w), so
// callers can add context freely. Of errors joined with errors.Join (as [Results.Merge] does),
// the first that is not quiet (a conflict, already exists, gone, throttled, fenced or a
// [Retry]) decides: a conflict must not hide a 403, or a field conflict, it was joined with.
func Classify(err error) Class {
	if r := (*retryableError)(nil); errors.As(err, &r) {
		return classifyRetryable(r)
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return classifyJoined(joined.Unwrap())
	}
	var retry *retryError
	switch {
	case err == nil:
		return ClassNone
	case isTerminal(err): // before Retry: controller-runtime does not retry what is terminal
		return ClassTerminal
	case errors.As(err, &retry):
		return ClassRetry
	case isFenced(err):
		return ClassFenced
	case isFieldConflict(err):
		return ClassFieldConflict
	}
	return classifyStatus(err)
}

// classifyRetryable returns the class of r, errors that are retried although some may be
// terminal: of joined errors, those that are not terminal decide, since they are retried.
func classifyRetryable(r *retryableError) Class {
	var retried []error
	if joined, ok := r.err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !isTerminal(e) {
				retried = append(retried, e)
			}
		}
	}
	if c := Classify(errors.Join(retried...)); c != ClassNone {
		return c
	}
	return ClassOther
}

// classifyJoined returns the class of errors joined: the first that is not quiet decides, else
// the first.
func classifyJoined(errs []error) Class {
	first := ClassNone
	for _, e := range errs {
		c := Classify(e)
		if c != ClassNone && !c.quiet() {
			return c
		}
		if first == ClassNone {
			first = c
		}
	}
	return first
}

// classifyStatus returns the class of err by the API server's status it carries, or by what
// failed before a request reached one.
func classifyStatus(err error) Class {
	switch {
	case apierrors.IsConflict(err):
		return ClassConflict
	case apierrors.IsAlreadyExists(err):
		return ClassAlreadyExists
	case apierrors.IsGone(err), apierrors.IsResourceExpired(err):
		return ClassGone
	case apierrors.IsTooManyRequests(err):
		return ClassThrottled
	case apierrors.IsServerTimeout(err):
		if _, ok := apierrors.SuggestsClientDelay(err); ok {
			return ClassThrottled
		}
		return ClassTransient
	case apierrors.IsNotFound(err):
		return ClassNotFound
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return ClassAuth
	case apierrors.IsInvalid(err), errors.Is(err, conditions.ErrInvalid), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err):
		return ClassInvalid
	case apierrors.IsTimeout(err), apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsUnexpectedServerError(err), errors.Is(err, context.DeadlineExceeded), isConnectionError(err):
		return ClassTransient
	}
	return ClassOther
}

// quiet reports whether an error of the class is a requeue rather than a failure.
func (c Class) quiet() bool {
	switch c {
	case ClassConflict, ClassAlreadyExists, ClassGone, ClassThrottled, ClassRetry, ClassFenced:
		return true
	}
	return false
}

// fenced is implemented by errors of writes refused because the replica may no longer hold its
// leader election lease, such as tenon's fencing.RefusedError. It is an interface, not that
// type, so that requeue does not depend on the fencing package.
type fenced interface {
	Fenced() bool
}

// isFenced reports whether err, or an error it wraps, is a fenced write.
func isFenced(err error) bool {
	var f fenced
	return errors.As(err, &f) && f.Fenced()
}

// isFieldConflict reports whether err is server-side apply's refusal to change fields another
// field manager owns: a 409 Conflict with a cause of type FieldManagerConflict. The 409 of a
// resourceVersion precondition, the optimistic concurrency of an update or an apply, has no
// such cause.
func isFieldConflict(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsConflict(err) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
		return c.Type == metav1.CauseTypeFieldManagerConflict
	})
}

// isConnectionError reports whether err is a refused, reset or cut connection, or a network
// timeout: the transport failed, not the request.
func isConnectionError(err error) bool {
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}
