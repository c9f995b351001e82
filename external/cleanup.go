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

// cleanupPass is one pass of cleanup, from the state rec.
func (r *Resource[T]) cleanupPass(ctx context.Context, obj T, rec record) (finalizer.Progress, error) {
	st := rec.state
	if st.Operation != "" {
		ops, ok := r.Provider.(Operations[T])
		if !ok {
			return finalizer.Progress{}, fmt.Errorf("%T returned operation %s but does not implement external.Operations to poll it", r.Provider, st.Operation)
		}
		done, opErr := ops.OperationDone(ctx, obj, st.Operation)
		switch {
		case !done && opErr != nil:
			return finalizer.Progress{}, fmt.Errorf("failed to poll operation %s of %s %s: %w", st.Operation, r.Name, st.Name, opErr)
		case !done && st.OperationKind == kindDelete:
			return finalizer.Waiting(r.pollInterval(), fmt.Sprintf("deleting %s %s: operation %s", r.Name, st.Name, st.Operation)), nil
		case !done:
			return finalizer.Waiting(r.pollInterval(), fmt.Sprintf("waiting for operation %s (%s) of %s %s before deleting it",
				st.Operation, st.OperationKind, r.Name, st.Name)), nil
		}
		after := st
		after.Operation, after.OperationKind = "", ""
		if st.OperationKind == kindCreate {
			after.Phase = phaseCreated
			if opErr != nil {
				after.Phase = phaseFailed
			}
		}
		var err error
		if rec, err = r.write(ctx, obj, rec, after, false); err != nil {
			return finalizer.Progress{}, err
		}
		if opErr != nil && st.OperationKind == kindDelete {
			return finalizer.Progress{}, fmt.Errorf("operation %s deleting %s %s failed: %w", st.Operation, r.Name, st.Name, opErr)
		}
	}
	obs, err := r.Provider.Observe(ctx, obj, st.Name)
	switch {
	case errors.Is(err, ErrNameTaken):
		return finalizer.Finished(), nil
	case err != nil:
		return finalizer.Progress{}, fmt.Errorf("failed to observe %s %s: %w", r.Name, st.Name, err)
	case !obs.Exists:
		return finalizer.Finished(), nil
	}
	if err := r.check(); err != nil {
		return finalizer.Progress{}, err
	}
	op, err := r.Provider.Delete(ctx, obj, st.Name)
	if err != nil {
		return finalizer.Progress{}, fmt.Errorf("failed to delete %s %s: %w", r.Name, st.Name, err)
	}
	message := fmt.Sprintf("deleting %s %s", r.Name, st.Name)
	if op != "" {
		next := rec.state
		next.Operation, next.OperationKind = op, kindDelete
		if _, err := r.write(ctx, obj, rec, next, false); err != nil && !errors.Is(err, errStale) {
			return finalizer.Progress{}, err
		}
		message += ": operation " + string(op)
	}
	return finalizer.Waiting(r.pollInterval(), message), nil
}
