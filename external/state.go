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
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationPrefix starts the name of the annotation in which a [Resource] keeps the state of
// an object's external resource: "external.tenon.dev/" followed by [Resource.Name], such as
// external.tenon.dev/database. Its value is JSON: the external name, whether a create was sent
// ("Creating"), confirmed ("Created") or failed ("Failed"), the create attempt and its
// idempotency key, and the operation being polled.
//
// The state is in an annotation, not in the status, because it cannot be observed again: a
// status may be rebuilt from the world, but "a create was sent and its response was lost" is
// known only to whoever wrote it down before sending. Remove the annotation only to tell the
// controller that nothing exists at the provider, such as after a create whose outcome was
// unknown (reason [ReasonCreateOutcomeUnknown]).
const AnnotationPrefix = "external.tenon.dev/"

// Phases of the persisted state.
const (
	// phaseCreating: a create was decided and may have been sent; not yet seen to succeed.
	phaseCreating = "Creating"
	// phaseCreated: the resource was seen to exist after a create (or was adopted).
	phaseCreated = "Created"
	// phaseFailed: the last create attempt failed for certain: nothing exists from it.
	phaseFailed = "Failed"
)

// Kinds of operations.
const (
	kindCreate = "Create"
	kindUpdate = "Update"
	kindDelete = "Delete"
)

// state is what the annotation holds.
type state struct {
	// Name is the external name, fixed when the first create is decided.
	Name string `json:"name"`
	// Phase is phaseCreating, phaseCreated or phaseFailed.
	Phase string `json:"phase"`
	// Attempt counts create attempts.
	Attempt int `json:"attempt"`
	// Key is the idempotency key of the attempt: random, stored before the create is sent, so
	// that every send of one attempt has it and no other attempt ever does (not even after a
	// person removed the annotation).
	Key string `json:"key,omitempty"`
	// Operation is the operation being polled, of kind OperationKind.
	Operation     Operation `json:"operation,omitempty"`
	OperationKind string    `json:"operationKind,omitempty"`
}

// settled returns s once its operation has finished, with error opErr (nil when it succeeded):
// the operation cleared and, for a create, its outcome as the phase. A create that finished
// made the resource (if Observe does not find it now, it was deleted since); one that failed made
// nothing, and the next attempt gets a new key.
func (s state) settled(opErr error) state {
	after := s
	after.Operation, after.OperationKind = "", ""
	if s.OperationKind == kindCreate {
		after.Phase = phaseCreated
		if opErr != nil {
			after.Phase = phaseFailed
		}
	}
	return after
}

// record is the persisted state as one copy of the object holds it: the base of the next write.
type record struct {
	uid types.UID
	// annotations reports whether the copy has an annotations map at all.
	annotations bool
	// present reports whether it has the annotation; raw is its value.
	present bool
	raw     string
	state   state
	// deleting reports whether the copy has a deletionTimestamp.
	deleting bool
}

// errStale reports that the copy the decision was based on is not the latest: the guarded
// write was refused. The caller reads the object again and decides again.
var errStale = errors.New("the object changed since it was read")

// errGone reports that the object is gone, or was replaced by another of the same name.
var errGone = errors.New("the object is gone")

// annotation returns the annotation's name.
func (r *Resource[T]) annotation() string { return AnnotationPrefix + r.Name }

// recordOf returns the persisted state of obj.
func (r *Resource[T]) recordOf(obj client.Object) (record, error) {
	annotations := obj.GetAnnotations()
	rec := record{uid: obj.GetUID(), annotations: annotations != nil, deleting: obj.GetDeletionTimestamp() != nil}
	rec.raw, rec.present = annotations[r.annotation()]
	if !rec.present {
		return rec, nil
	}
	err := json.Unmarshal([]byte(rec.raw), &rec.state)
	switch {
	case err != nil:
	case rec.state.Name == "":
		err = errors.New("no name")
	case rec.state.Phase != phaseCreating && rec.state.Phase != phaseCreated && rec.state.Phase != phaseFailed:
		err = fmt.Errorf("unknown phase %q", rec.state.Phase)
	}
	if err != nil {
		return rec, fmt.Errorf("annotation %s of %s is not valid (%w): fix it or remove it", r.annotation(), describe(obj), err)
	}
	return rec, nil
}

// write replaces the state of rec with next, in a JSON Patch that the API server applies only
// while the object is the one rec was read from (its uid) and its annotation is still rec's. With
// notDeleting, it also needs the object not to be deleted. It returns the record written, errStale
// when a guard failed and errGone when the object is gone.
func (r *Resource[T]) write(ctx context.Context, obj T, rec record, next state, notDeleting bool) (record, error) {
	value, err := json.Marshal(next)
	if err != nil {
		return rec, fmt.Errorf("failed to encode the state of %s: %w", r.Name, err)
	}
	path := "/metadata/annotations/" + escape(r.annotation())
	ops := []map[string]any{{"op": "test", "path": "/metadata/uid", "value": string(rec.uid)}}
	if notDeleting {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/deletionTimestamp", "value": nil})
	}
	switch {
	case !rec.annotations:
		ops = append(ops,
			map[string]any{"op": "test", "path": "/metadata/annotations", "value": nil},
			map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{r.annotation(): string(value)}})
	case rec.present:
		ops = append(ops,
			map[string]any{"op": "test", "path": path, "value": rec.raw},
			map[string]any{"op": "replace", "path": path, "value": string(value)})
	default:
		ops = append(ops,
			map[string]any{"op": "test", "path": path, "value": nil},
			map[string]any{"op": "add", "path": path, "value": string(value)})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return rec, fmt.Errorf("failed to encode the state of %s: %w", r.Name, err)
	}
	work, ok := obj.DeepCopyObject().(T)
	if !ok {
		return rec, fmt.Errorf("failed to copy %s: %T does not copy into its own type", describe(obj), obj)
	}
	if err := r.Client.Patch(ctx, work, client.RawPatch(types.JSONPatchType, data)); err != nil {
		if apierrors.IsNotFound(err) {
			return rec, errGone
		}
		// A failed guard, or a write whose answer was lost: the object tells which, whatever
		// the error looks like (the API server's 422, a fake client's own error, a timeout).
		latest, readErr := r.latest(ctx, obj)
		switch {
		case errors.Is(readErr, errGone):
			return rec, errGone
		case readErr == nil && !rec.same(latest):
			return rec, errStale
		}
		return rec, fmt.Errorf("failed to write annotation %s of %s: %w", r.annotation(), describe(obj), err)
	}
	return r.recordOf(work)
}

// same reports whether the copies that rec and o were read from agree on everything a write
// of the state tests.
func (rec record) same(o record) bool {
	return rec.uid == o.uid && rec.annotations == o.annotations && rec.present == o.present && rec.raw == o.raw &&
		rec.deleting == o.deleting
}

// latest reads obj from the API server (the APIReader, else the Client) into a copy and returns
// its record. It returns errGone when the object is gone or has another uid.
func (r *Resource[T]) latest(ctx context.Context, obj T) (record, error) {
	work, ok := obj.DeepCopyObject().(T)
	if !ok {
		return record{}, fmt.Errorf("failed to copy %s: %T does not copy into its own type", describe(obj), obj)
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), work); err != nil {
		if apierrors.IsNotFound(err) {
			return record{}, errGone
		}
		return record{}, fmt.Errorf("failed to read %s: %w", describe(obj), err)
	}
	if work.GetUID() != obj.GetUID() {
		return record{}, errGone
	}
	return r.recordOf(work)
}

// newKey returns a random idempotency key: a UUID (RFC 9562 version 4), the form providers that
// take a request id expect.
func newKey() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails (crypto/rand)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// escape escapes a JSON Pointer token.
func escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// describe names obj for errors: its key.
func describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
