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

package patch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/conditions"
)

// Helper writes the changes a reconcile makes to an object, and only those. Create it with
// [NewHelper] before changing the object, change the object, then call [Helper.Patch], usually
// deferred:
//
//	h, err := patch.NewHelper(cluster, r.Client)
//	if err != nil {
//		return ctrl.Result{}, err
//	}
//	defer func() { err = errors.Join(err, h.Patch(ctx, cluster, patch.WithObservedGeneration{})) }()
//
// A Helper may be used for several Patch calls in a row: each successful Patch takes a new
// snapshot. It is not safe for concurrent use.
type Helper struct {
	client client.Client
	gvk    schema.GroupVersionKind
	before client.Object
}

// NewHelper returns a Helper for obj, keeping a deep copy of it as the snapshot that
// [Helper.Patch] compares against. obj is typically the object the reconcile just read; it may be
// typed or an *unstructured.Unstructured with its apiVersion and kind set. obj is not modified.
// NewHelper returns an error when obj or c is nil or c's scheme does not know obj's type.
func NewHelper(obj client.Object, c client.Client) (*Helper, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, errors.New("failed to create a patch helper: the object is nil")
	}
	if c == nil {
		return nil, errors.New("failed to create a patch helper: the client is nil")
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, fmt.Errorf("failed to create a patch helper for %T: %w", obj, err)
	}
	return &Helper{client: c, gvk: gvk, before: deepCopyObject(obj)}, nil
}

// Patch writes the changes made to obj since the snapshot.
//
// What is sent:
//
//   - nothing when nothing changed: a reconcile that changes nothing sends no request;
//   - otherwise at most one request for metadata and spec (everything outside status), then at
//     most one to the status subresource, each only when something in it changed. Objects
//     without a status subresource (found out on first use, see below) get one request for
//     everything;
//   - each request is a JSON Patch of the changed fields only: a label or annotation is added,
//     changed or removed by key; a changed condition is replaced in place. Metadata other than
//     labels, annotations, finalizers and owner references (resourceVersion, generation, ...)
//     belongs to the API server and is never written.
//
// What it cannot drop (other writers' changes since the snapshot, even when obj was read from a
// stale cache):
//
//   - labels, annotations and fields this reconcile did not change;
//   - finalizers and owner references: the lists are merged, this reconcile's additions and
//     removals applied to the latest list; a finalizer is never duplicated;
//   - conditions of other types. A condition of a type in [OwnedConditions] (or with
//     [ForceOverwriteConditions]) is written whatever another writer did to it meanwhile; a
//     condition of another type that another writer changed too is not overwritten, and Patch
//     returns a *conditions.ConflictError for the next reconcile to look again.
//
// Any other field this reconcile changed is written with its new value: the controller owns the
// fields it changes. Lists other than finalizers, owner references and conditions are written
// whole.
//
// Conflicts: when the object changed in a way that matters (the API server answers 409 Conflict,
// or a guarded condition or finalizer list no longer is what it was), Patch reads the latest
// object with the client (or the reader of [ReadLatestFrom]), carries this reconcile's changes
// over to it (a three-way merge) and sends again, up to the retries of [RetryBackoff], waiting
// between attempts. A conflict that a retry resolves is not an error. When retries run out the
// error wraps a 409 Conflict (apierrors.IsConflict, and requeue.Classify reports
// requeue.ClassConflict).
//
// The order of the requests is metadata and spec first, then status: a status write never
// fails because the same Patch removed the last finalizer of an object being deleted. When the
// first response shows the object gone (deletionTimestamp set, no finalizers left), the status
// change is dropped. When an object that was being deleted is not found, Patch returns nil: it
// is gone, which is what removing the last finalizer meant.
//
// Objects without a status subresource (a CRD without subresources.status): Patch first sends
// the status to the subresource; the API server answers 404, and when the object exists Patch
// sends the status with the rest of the object, and remembers for the kind, for the life of the
// process, to do so directly. Their every write changes metadata.generation.
//
// On success obj is replaced by the object the API server returned last (new resourceVersion,
// other writers' changes, defaults) and becomes the new snapshot. On error neither obj nor the
// snapshot changes, and calling Patch again retries the whole change safely.
//
// Patch sends what changed relative to the snapshot. A snapshot read from a cache that lags behind
// the server cannot show what changed since, so a condition the server has but the snapshot lacks
// is not removed by a Patch that does not set it. For the object a controller reconciles, read it
// with controller-runtime's read-your-writes consistency on (client.CacheOptions) or from the API
// reader; see the cache guide.
//
// obj must be the object given to [NewHelper] (same type, name and namespace), or a copy of it.
func (h *Helper) Patch(ctx context.Context, obj client.Object, opts ...Option) error {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return errors.New("failed to patch: the object is nil")
	}
	if reflect.TypeOf(obj) != reflect.TypeOf(h.before) ||
		obj.GetName() != h.before.GetName() || obj.GetNamespace() != h.before.GetNamespace() {
		return fmt.Errorf("failed to patch %s: the helper was created for %T %s",
			h.describe(obj), h.before, client.ObjectKeyFromObject(h.before))
	}
	o := (&HelperOptions{}).ApplyOptions(opts)
	if o.ObservedGeneration {
		if _, err := setObservedGeneration(obj, h.before.GetGeneration()); err != nil {
			return fmt.Errorf("failed to set status.observedGeneration of %s: %w", h.describe(obj), err)
		}
	}
	if equality.Semantic.DeepEqual(h.before, obj) {
		return nil
	}
	before, err := toMap(h.before)
	if err != nil {
		return err
	}
	after, err := toMap(obj)
	if err != nil {
		return err
	}
	p := &patcher{
		h:        h,
		obj:      obj,
		opts:     o,
		before:   before,
		after:    after,
		merge:    mergeOptions{owned: o.OwnedConditions, force: o.ForceOverwriteConditions},
		diff:     diffOptions{guarded: ownedGuard(o.OwnedConditions, o.ForceOverwriteConditions)},
		deleting: h.before.GetDeletionTimestamp() != nil || obj.GetDeletionTimestamp() != nil,
	}
	if orderer, ok := obj.(conditions.Orderer); ok {
		p.merge.order = orderer.ConditionOrder()
	}
	return p.run(ctx)
}

// patcher is the state of one Patch call.
type patcher struct {
	h             *Helper
	obj           client.Object
	opts          *HelperOptions
	before, after map[string]any
	merge         mergeOptions
	diff          diffOptions
	deleting      bool
}

// maxRequests bounds the requests of one Patch besides conflict retries: the main request, the
// status request, and the status request repeated once to learn about the status subresource.
const maxRequests = 4

func (p *patcher) run(ctx context.Context) error {
	logger := log.FromContext(ctx)
	backoff := p.opts.backoff()
	retries := backoff.Steps
	base := p.before
	var latest client.Object // the newest object the server returned
	var mainDone, statusDone bool
	conflicts, requests := 0, 0
	for {
		result, err := merge(p.before, p.after, base, p.merge)
		if err != nil {
			return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
		}
		statusInMain := !hasStatusSubresource(p.h.gvk)
		var req request
		if !mainDone {
			req = diffMain(base, result, statusInMain, p.diff)
			mainDone = req.empty()
		}
		if req.empty() && !statusDone {
			req = diffStatus(base, result, p.diff)
			statusDone = req.empty()
			if !statusDone && statusInMain {
				// The status went with the rest of the object, and the server dropped it: the
				// kind has a status subresource after all.
				setStatusSubresource(p.h.gvk, true)
			}
		}
		if req.empty() {
			p.finish(latest)
			return nil
		}
		requests++
		if requests > maxRequests+retries {
			return fmt.Errorf("failed to patch %s: the server does not keep the changes", p.h.describe(p.obj))
		}

		var resp client.Object
		if rv, _ := nested(base, "metadata", "resourceVersion"); req.lock && rv == nil {
			// Nothing to lock on: read the object first.
			err = apierrors.NewConflict(p.resource(), p.obj.GetName(), errors.New("the object has no resourceVersion"))
		} else {
			resp, err = p.send(ctx, req.finish(base), req.status)
		}
		switch {
		case err == nil:
			latest = resp
			if req.status || isGone(resp) {
				p.finish(latest)
				return nil
			}
			mainDone = true
			if base, err = toMap(resp); err != nil {
				return err
			}
			continue

		case apierrors.IsNotFound(err):
			if !req.status {
				return p.notFound(err)
			}
			fresh, getErr := p.get(ctx)
			if getErr != nil {
				return p.notFound(err)
			}
			// The object exists, the status subresource does not.
			setStatusSubresource(p.h.gvk, false)
			mainDone, latest = false, fresh
			if base, err = toMap(fresh); err != nil {
				return err
			}
			continue

		case apierrors.IsConflict(err):
			// The resourceVersion lock: wait, read the latest object and merge again.
			conflicts++
			if conflicts > retries {
				return fmt.Errorf("failed to patch %s after %d attempts: %w", p.h.describe(p.obj), conflicts, err)
			}
			delay := backoff.Step()
			logger.V(1).Info("Patch conflicted, retrying with the latest object", "object", p.h.describe(p.obj), "attempt", conflicts, "delay", delay)
			if err := pause(ctx, delay); err != nil {
				return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
			}
			fresh, getErr := p.get(ctx)
			if getErr != nil {
				return p.notFound(getErr)
			}
			latest = fresh
			if base, err = toMap(fresh); err != nil {
				return err
			}

		default:
			// A patch whose guards no longer hold is rejected as invalid (the API server) or with
			// a plain error (the fake client). A failed test op is a conflict even when the guards
			// hold again on the object read next: another writer may have changed the field and
			// changed it back in between. Another rejection is a conflict only when the guards no
			// longer hold on the latest object; otherwise the server refused the patch itself.
			guardFailed := isGuardFailure(err)
			if guardFailed && conflicts < retries {
				// Another writer is changing the same field right now: give it room, as for a 409.
				if err := pause(ctx, backoff.Step()); err != nil {
					return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
				}
			}
			fresh, getErr := p.get(ctx)
			if apierrors.IsNotFound(getErr) {
				return p.notFound(getErr)
			}
			if getErr != nil {
				return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
			}
			m, convErr := toMap(fresh)
			if convErr != nil || (!guardFailed && guardsHold(m, req.finish(base))) {
				return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
			}
			conflicts++
			if conflicts > retries {
				return fmt.Errorf("failed to patch %s after %d attempts: %w", p.h.describe(p.obj), conflicts,
					apierrors.NewConflict(p.resource(), p.obj.GetName(), err))
			}
			logger.V(1).Info("Patch conflicted, retrying with the latest object", "object", p.h.describe(p.obj), "attempt", conflicts)
			latest, base = fresh, m
		}
	}
}

// notFound returns what Patch returns for err, from a request or a read that failed: nothing when
// it says the object does not exist and the object was being deleted (it is gone, as removing its
// last finalizer meant), err wrapped otherwise.
func (p *patcher) notFound(err error) error {
	if apierrors.IsNotFound(err) && p.deleting {
		return nil
	}
	return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
}

// send sends one JSON Patch and returns the object the server answered with.
func (p *patcher) send(ctx context.Context, ops []op, status bool) (client.Object, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the patch of %s: %w", p.h.describe(p.obj), err)
	}
	resp, err := newLike(p.obj, p.h.gvk)
	if err != nil {
		return nil, err
	}
	patch := client.RawPatch(types.JSONPatchType, data)
	if status {
		var opts []client.SubResourcePatchOption
		if p.opts.FieldOwner != "" {
			opts = append(opts, client.FieldOwner(p.opts.FieldOwner))
		}
		return resp, p.h.client.Status().Patch(ctx, resp, patch, opts...)
	}
	var opts []client.PatchOption
	if p.opts.FieldOwner != "" {
		opts = append(opts, client.FieldOwner(p.opts.FieldOwner))
	}
	return resp, p.h.client.Patch(ctx, resp, patch, opts...)
}

// get reads the latest object with the helper's client.
func (p *patcher) get(ctx context.Context) (client.Object, error) {
	fresh, err := newLike(p.obj, p.h.gvk)
	if err != nil {
		return nil, err
	}
	reader := client.Reader(p.h.client)
	if p.opts.LatestFrom != nil {
		reader = p.opts.LatestFrom
	}
	return fresh, reader.Get(ctx, client.ObjectKeyFromObject(p.obj), fresh)
}

// finish makes latest, when there is one, both obj and the new snapshot.
func (p *patcher) finish(latest client.Object) {
	if latest == nil {
		return
	}
	p.h.before = deepCopyObject(latest)
	copyInto(p.obj, latest)
}

// resource names the object's resource in the conflict errors the helper makes itself.
func (p *patcher) resource() schema.GroupResource {
	if m, err := p.h.client.RESTMapper().RESTMapping(p.h.gvk.GroupKind(), p.h.gvk.Version); err == nil {
		return m.Resource.GroupResource()
	}
	return schema.GroupResource{Group: p.h.gvk.Group, Resource: p.h.gvk.Kind}
}

// guardsHold reports whether ops apply to doc: whether every test holds and every path they
// change exists.
func guardsHold(doc map[string]any, ops []op) bool {
	_, err := applyOps(deepCopyMap(doc), ops)
	return err == nil
}

// isGone reports whether obj, as returned by the server, is being deleted and has no finalizers
// left: the server removes it at once.
func isGone(obj client.Object) bool {
	return obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0
}

// pause waits for d or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// describe names obj for errors and logs: its kind and its key.
func (h *Helper) describe(obj client.Object) string {
	return h.gvk.Kind + " " + client.ObjectKeyFromObject(obj).String()
}

// isGuardFailure reports whether err is the rejection of a JSON Patch whose operations did not
// apply, which for the patches Patch builds means a test operation failed. The API server then
// answers 422 Invalid with a generic message and no causes (the JSON Patch library's message is
// dropped), unlike a validation error, which names the object and lists the invalid fields; the
// fake client returns the library's message as a plain error.
func isGuardFailure(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return s.Reason == metav1.StatusReasonInvalid && (s.Details == nil ||
			(len(s.Details.Causes) == 0 && s.Details.Name == "" && s.Details.Kind == ""))
	}
	msg := err.Error()
	for _, failure := range []string{"testing value ", "test operation does not apply", "error in test for path"} {
		if strings.Contains(msg, failure) {
			return true
		}
	}
	return false
}
