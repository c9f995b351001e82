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

	"github.com/tenon-dev/tenon/finalizer"
)

// Step returns the finalizer step that deletes obj's external resource, for the Lifecycle that
// holds the object until it is gone:
//
//	Steps: []finalizer.Step[*v1alpha1.Database]{r.database.Step()},
//
// The step is named [Resource.Name] and marked External, so finalizer.Lifecycle.Retain skips it
// for a policy that keeps the external resource, while the steps that clean up Kubernetes
// objects still run. Each run:
//
//   - for an object without the annotation (checked with APIReader first, rather than trust a
//     copy that a cache may have transformed), observes the name [Resource.ExternalName] gives
//     and goes on as below: a resource created before the controller used a Resource, or whose
//     annotation a person removed, is deleted too when Observe reports it as the object's, and
//     an object that never had one costs one Observe;
//   - waits for an operation that is still running: a delete's, until it finishes; a create's or
//     an update's before deleting, since an unfinished create may still make the resource
//     (an operation that never finishes holds the deletion: Lifecycle.Timeout marks the object
//     Stalled);
//   - observes the resource, deletes it when it exists, and reports it Waiting (checked again
//     after PollInterval) until Observe no longer finds it; a failed delete, or a delete
//     operation that failed, is an error, which the Lifecycle retries with backoff;
//   - finishes without deleting when Observe reports the name taken by someone else
//     ([ErrNameTaken]): nothing of the object's is there.
//
// A create whose outcome is unknown (its response was lost) and that Observe does not find
// counts as not made. That holds when the provider's reads see its writes; the one create it
// misses is a request still on its way from a replica that stopped during the call, which the
// Fence narrows to the margin of its lease (see the package documentation).
func (r *Resource[T]) Step() finalizer.Step[T] {
	return finalizer.Step[T]{Name: r.Name, Run: r.cleanup, External: true}
}

// cleanup is the step's Run.
func (r *Resource[T]) cleanup(ctx context.Context, obj T) (finalizer.Progress, error) {
	if err := r.validate(obj); err != nil {
		return finalizer.Progress{}, err
	}
	rec, err := r.recordOf(obj)
	if err != nil {
		return finalizer.Progress{}, err
	}
	if !rec.present {
		rec, err = r.latest(ctx, obj)
		switch {
		case errors.Is(err, errGone):
			return finalizer.Finished(), nil
		case err != nil:
			return finalizer.Progress{}, err
		}
	}
	for range maxStale {
		if !rec.present {
			// No create was decided by a Resource: but the resource may have been created before
			// the controller used one, or its annotation removed by a person (also while this
			// step ran). Observe the name the object would have; Observe judges whether it is
			// the object's.
			rec.state = state{Name: r.externalName(obj), Phase: phaseCreated}
		}
		progress, err := r.cleanupPass(ctx, obj, rec)
		if !errors.Is(err, errStale) {
			return progress, err
		}
		rec, err = r.latest(ctx, obj)
		switch {
		case errors.Is(err, errGone):
			return finalizer.Finished(), nil
		case err != nil:
			return finalizer.Progress{}, err
		}
	}
	return finalizer.Progress{}, r.conflict(obj)
}

// cleanupPass is one pass of cleanup, from the state rec: it settles the operation in flight, if
// any, then deletes the resource unless it is gone.
func (r *Resource[T]) cleanupPass(ctx context.Context, obj T, rec record) (finalizer.Progress, error) {
	if rec.state.Operation != "" {
		var (
			progress finalizer.Progress
			pending  bool
			err      error
		)
		if rec, progress, pending, err = r.settleOperation(ctx, obj, rec); pending || err != nil {
			return progress, err
		}
	}
	return r.deleteRemote(ctx, obj, rec)
}

// settleOperation polls the operation in flight in rec. While it runs, pending is true and progress
// says what cleanup waits for. Once it is done, it is cleared from the recorded state (a create's
// outcome recorded as its phase) and the new record is returned; a failed delete operation is an
// error.
func (r *Resource[T]) settleOperation(ctx context.Context, obj T, rec record) (_ record, progress finalizer.Progress, pending bool, _ error) {
	st := rec.state
	done, opErr, err := r.pollOperation(ctx, obj, st.Operation)
	if err != nil {
		return rec, finalizer.Progress{}, false, err
	}
	switch {
	case !done && opErr != nil:
		return rec, finalizer.Progress{}, false, fmt.Errorf("failed to poll operation %s of %s %s: %w", st.Operation, r.Name, st.Name, opErr)
	case !done && st.OperationKind == kindDelete:
		return rec, finalizer.Waiting(r.pollInterval(), fmt.Sprintf("deleting %s %s: operation %s", r.Name, st.Name, st.Operation)), true, nil
	case !done:
		return rec, finalizer.Waiting(r.pollInterval(), fmt.Sprintf("waiting for operation %s (%s) of %s %s before deleting it",
			st.Operation, st.OperationKind, r.Name, st.Name)), true, nil
	}
	rec, err = r.write(ctx, obj, rec, st.settled(opErr), false)
	if err != nil {
		return rec, finalizer.Progress{}, false, err
	}
	if opErr != nil && st.OperationKind == kindDelete {
		return rec, finalizer.Progress{}, false, fmt.Errorf("operation %s deleting %s %s failed: %w", st.Operation, r.Name, st.Name, opErr)
	}
	return rec, finalizer.Progress{}, false, nil
}

// deleteRemote deletes the resource recorded in rec unless the provider observes it gone (or
// taken by another owner), and records the delete's operation, if it returns one.
func (r *Resource[T]) deleteRemote(ctx context.Context, obj T, rec record) (finalizer.Progress, error) {
	name := rec.state.Name
	obs, err := r.Provider.Observe(ctx, obj, name)
	switch {
	case errors.Is(err, ErrNameTaken):
		return finalizer.Finished(), nil
	case err != nil:
		return finalizer.Progress{}, fmt.Errorf("failed to observe %s %s: %w", r.Name, name, err)
	case !obs.Exists:
		return finalizer.Finished(), nil
	}
	if err := r.check(); err != nil {
		return finalizer.Progress{}, err
	}
	op, err := r.Provider.Delete(ctx, obj, name)
	if err != nil {
		return finalizer.Progress{}, fmt.Errorf("failed to delete %s %s: %w", r.Name, name, err)
	}
	message, err := r.recordOperation(ctx, obj, rec, op, kindDelete, fmt.Sprintf("deleting %s %s", r.Name, name))
	if err != nil {
		return finalizer.Progress{}, err
	}
	return finalizer.Waiting(r.pollInterval(), message), nil
}
