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
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// Class is what kind of failure an error is, which decides how a reconciler should react to it;
// see [Classify] and [OnError].
type Class int

// The classes of errors, with the action [OnError] takes for each.
const (
	// ClassNone is a nil error: the reconcile is [Done].
	ClassNone Class = iota

	// ClassConflict is a 409 Conflict: the object changed since it was read (optimistic
	// concurrency), or another writer changed a condition this reconcile changed too (see
	// conditions.ConflictError). Normal under concurrency: a quiet requeue, no error.
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
	// 413, 415, 422): sending it again fails again until the object changes. A terminal error:
	// not retried, logged once.
	ClassInvalid

	// ClassTerminal is an error already marked terminal (see [Terminal]). Passed through.
	ClassTerminal

	// ClassOther is any other error. Returned as an error: retried with backoff and logged.
	ClassOther
)

var classNames = [...]string{"none", "conflict", "already_exists", "gone", "throttled", "not_found", "transient", "auth", "invalid", "terminal", "other"}

// String returns the class's name as used in metric labels, such as "conflict".
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "unknown"
	}
	return classNames[c]
}

// Classify returns the class of err. It looks through wrapped errors (fmt.Errorf with %w,
// errors.Join), so callers can add context freely.
func Classify(err error) Class {
	var conflict *conditions.ConflictError
	switch {
	case err == nil:
		return ClassNone
	case IsTerminal(err):
		return ClassTerminal
	case apierrors.IsConflict(err), errors.As(err, &conflict):
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
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err):
		return ClassInvalid
	case apierrors.IsTimeout(err), apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsUnexpectedServerError(err), errors.Is(err, context.DeadlineExceeded), isConnectionError(err):
		return ClassTransient
	}
	return ClassOther
}

// OnError returns the result a reconciler should return for err, by its [Class]:
//
//   - nil: [Done];
//   - conflict, already exists, gone: a quiet requeue after a short jittered delay, with no
//     error, so controller-runtime neither logs it nor counts it as a reconcile error; it is
//     counted in tenon_reconcile_quiet_conflicts_total instead. Under [WithBackoff] the delay
//     grows per object while conflicts repeat, and after [BackoffOptions.MaxQuietConflicts] in
//     a row the error is returned after all (wrapped, so it keeps its class), so that a conflict
//     that never goes away is logged and counted. Without WithBackoff, OnError keeps no state
//     and every conflict is quiet;
//   - throttled: a quiet requeue after the server's Retry-After (1 second when it gives none);
//   - invalid: a terminal error (see [Terminal]);
//   - terminal: returned as is;
//   - not found, transient, auth and other errors: returned as is, for controller-runtime to
//     retry with its rate limiter and log.
func OnError(ctx context.Context, err error) (ctrl.Result, error) {
	class := Classify(err)
	s := stateFrom(ctx)
	switch class {
	case ClassNone:
		return Done()
	case ClassConflict, ClassAlreadyExists, ClassGone:
		if s == nil {
			recordQuietConflict(s, class)
			return After(Jitter(ConflictDelay, 1))
		}
		delay, quiet, inARow := s.conflict()
		if !quiet {
			return ctrl.Result{}, fmt.Errorf("failed to reconcile without a conflict after %d quiet requeues: %w", inARow, err)
		}
		recordQuietConflict(s, class)
		return ctrl.Result{RequeueAfter: delay}, nil
	case ClassThrottled:
		recordRequeue(s, class.String())
		delay := time.Second
		if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
			delay = time.Duration(seconds) * time.Second
		}
		return After(delay)
	case ClassInvalid:
		return Terminal(err)
	}
	return ctrl.Result{}, err
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
