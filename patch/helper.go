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
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/internal/pause"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
	"github.com/tenon-dev/tenon/patch/internal/managed"
	"github.com/tenon-dev/tenon/patch/internal/threeway"
)

// Helper writes the changes a reconcile makes to an object, and only those. Create it before
// changing the object, with the controller's [Writer.NewHelper] (or [NewHelper]), change the
// object, then call [Helper.Finish] (or [Helper.Patch]), deferred:
//
//	h, err := r.Writer.NewHelper(cluster)
//	if err != nil {
//		return ctrl.Result{}, err
//	}
//	defer func() { res, err = h.Finish(ctx, cluster, res, err) }()
//
// A Helper may be used for several Patch calls in a row: each successful Patch takes a new
// snapshot. It is not safe for concurrent use.
type Helper struct {
	client client.Client
	gvk    schema.GroupVersionKind
	before client.Object
	// statusSubresource is what this Helper learned from the server's answers about the kind:
	// whether it has a status subresource. Unknown (nil) until a Patch found out.
	statusSubresource *bool
	// previous is the object the last Patch merged its changes onto; see Previous.
	previous client.Object
	// writer is the Writer that made this Helper, whose options every Patch uses; nil for a
	// Helper from NewHelper.
	writer *Writer
}

// Previous returns the object as the API server held it when the last [Helper.Patch] merged the
// reconcile's changes onto it, before that Patch wrote anything: the snapshot, the
// [*History]'s record of the controller's own newer write, or the object read after a conflict;
// when Patch wrote the metadata and spec first, its status is the one that write returned, the
// server's status before Patch wrote any of it. It is nil before the first Patch. Do not modify
// it.
//
// Compare it with the object after Patch to tell what the write changed, for example the
// conditions that observe.RecordEvents reports transitions of. The snapshot itself is not always
// that: when the cache had not delivered the controller's own last write, a Patch with a History
// sends nothing and Previous is that write, so a transition it already recorded is not recorded
// again.
func (h *Helper) Previous() client.Object {
	return h.previous
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

// Patch writes the changes made to obj since the snapshot, merged onto the object as the server
// has it now, as the table "What the helper guarantees" of the package documentation says:
// another writer's changes since the snapshot are kept, except where this reconcile changed the
// same scalar or map key; where both changed the same list, or the same condition of a type not
// in [OwnedConditions], Patch writes nothing of that part and returns a [*ConflictError].
//
// Requests: none when nothing changed; otherwise at most one for metadata and spec, then at most
// one for the status subresource (for a kind without one, see "Kinds without a status
// subresource"), each a JSON Patch of the changed fields only, guarded by tests of what it
// replaces and of the object's uid. Of metadata only labels, annotations, finalizers and owner
// references are written.
//
// Errors, after which obj and the snapshot are as they were, so that calling Patch again sends
// what is still missing, merged onto the latest object:
//
//   - A guard that no longer holds, or a 409, is retried up to five times (10ms doubling,
//     jittered, capped at 1s), each time merged onto the object read again (through the API
//     reader of the [Writer] that made the Helper, if any). When retries run out, or the merge
//     finds a change both made: a [*ConflictError] (apierrors.IsConflict, requeue.ClassConflict).
//   - A new or changed condition of a conditions.Getter that conditions.Validate refuses: nothing
//     is sent; the error wraps conditions.ErrInvalid and names it (requeue.ClassInvalid).
//     Conditions this reconcile did not change are not checked.
//   - A finalizer added to an object deleted since the read (the API server refuses it): a
//     [*ConflictError], so that the next reconcile runs the cleanup.
//   - The object is not found and was not being deleted, or another replaced it under its name:
//     apierrors.IsNotFound.
//   - Anything else (403, a validation error, an admission denial, a 5xx) is returned at once,
//     wrapped, its class intact.
//
// Any error after the metadata and spec request was written (a failed status request, a
// conflict on the status) also wraps [ErrPartiallyWritten]. An object that was being deleted and
// is not found, or was replaced, is no error: it is gone, as removing its last finalizer meant;
// what was not written is dropped, and obj and the snapshot are left as they were.
//
// On success obj becomes the object the server returned last (new resourceVersion, other
// writers' changes, defaults) and the new snapshot. When nothing is sent obj is left as the
// caller had it (a condition's lastTransitionTime changed alone is nothing to send: the server's
// time is kept), unless the Writer's [History] held a newer object that already had the changes;
// see "A snapshot older than the controller's own last write".
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
	if err := h.checkConditions(obj); err != nil {
		return err
	}
	o := newHelperOptions(h.writer, opts)
	h.previous = h.before
	if equality.Semantic.DeepEqual(h.before, obj) {
		return nil
	}
	before, err := objects.ToMap(h.before)
	if err != nil {
		return err
	}
	after, err := objects.ToMap(obj)
	if err != nil {
		return err
	}
	if o.wait != nil && o.wait(before, after) {
		return nil
	}
	_, unstructuredObj := obj.(*unstructured.Unstructured)
	p := &patcher{
		h:        h,
		obj:      obj,
		opts:     o,
		before:   before,
		after:    after,
		exact:    unstructuredObj,
		deleting: h.before.GetDeletionTimestamp() != nil || obj.GetDeletionTimestamp() != nil,
		recorded: o.history.newer(h.before),
	}
	if orderer, ok := obj.(conditions.Orderer); ok {
		p.order = orderer.ConditionOrder()
	}
	return p.run(ctx)
}

// checkConditions returns an error that wraps conditions.ErrInvalid when obj, a
// conditions.Getter, has a condition the API server would reject that is new or differs from the
// snapshot's condition of its type. The snapshot's own conditions are not checked: they are on
// the server already, perhaps written by another writer.
func (h *Helper) checkConditions(obj client.Object) error {
	g, ok := obj.(conditions.Getter)
	if !ok {
		return nil
	}
	var before []metav1.Condition
	if b, ok := h.before.(conditions.Getter); ok {
		before = b.GetConditions()
	}
	for _, c := range g.GetConditions() {
		i := slices.IndexFunc(before, func(b metav1.Condition) bool { return b.Type == c.Type })
		if i >= 0 && equality.Semantic.DeepEqual(before[i], c) {
			continue
		}
		if err := conditions.Validate(c); err != nil {
			return fmt.Errorf("failed to patch %s: %w", h.describe(obj), err)
		}
	}
	return nil
}

// patcher is the state of one Patch call. The object goes by these names:
//
//   - before: the snapshot the Helper took (h.before), as JSON; after: obj, the desired object,
//     as JSON. Patch writes what changed from before to after.
//   - base: the object the next request is computed against and guarded by, as JSON: before at
//     first, then each newer version (the History's, a response, a read after a conflict).
//   - latest: the newest object the server returned or Patch read (base's typed form); nil
//     while base is the snapshot.
type patcher struct {
	h             *Helper
	obj           client.Object
	opts          *helperOptions
	before, after map[string]any
	exact         bool
	order         []conditions.Type
	deleting      bool
	// recorded is the History's object, newer than the snapshot, to merge onto; nil without one.
	recorded client.Object

	base   map[string]any
	latest client.Object
	// statusInMain is set when the status goes with the rest of the object: the kind has no
	// status subresource.
	statusInMain bool
	// mainDone is set when nothing is left to write outside the status; mainWritten when a
	// request for it succeeded.
	mainDone, mainWritten bool
	// lock is set when requests are guarded by base's resourceVersion instead of value tests.
	lock bool
	// lastRefused is the last request the server refused because a guard failed.
	lastRefused         []threeway.Op
	conflicts, requests int
	// backoff spaces the retries after conflicts; retries is how many there may be (Step counts
	// backoff.Steps down).
	backoff wait.Backoff
	retries int
}

// maxRequests bounds the requests of one Patch besides conflict retries: the main request, the
// status request, and both once more to find out about the status subresource.
const maxRequests = 4

// run sends the requests of one Patch: the main request (metadata, spec and any other field
// outside the status), then the status request, each computed by a three-way merge of before,
// after and base, until nothing is left to write. A conflict reads the latest object and merges
// again (reread); a status request answered 404 finds out whether the kind has a status
// subresource (withoutStatusSubresource).
func (p *patcher) run(ctx context.Context) error {
	if err := p.start(); err != nil {
		return err
	}
	for {
		req, done, err := p.next()
		if err != nil || done {
			return err
		}
		p.requests++
		if p.requests > maxRequests+p.retries {
			return p.fail(fmt.Errorf("failed to patch %s: the server does not keep the changes", p.h.describe(p.obj)), p.mainWritten)
		}
		ops := p.guarded(req)
		resp, err := p.write(ctx, req, ops)
		if err != nil {
			if stop, err := p.refused(ctx, err, req.Status, ops); stop {
				return err
			}
			continue
		}
		if done, err := p.accepted(resp, req.Status, ops); err != nil || done {
			return err
		}
	}
}

// refused handles err, the failure of a request (ops, to the status subresource when status is
// set). stop is set when Patch returns, with err (nil when the object is gone as its deletion
// meant); Patch goes on with the next request otherwise.
func (p *patcher) refused(ctx context.Context, err error, status bool, ops []threeway.Op) (stop bool, _ error) {
	switch {
	case apierrors.IsNotFound(err) && status:
		return p.withoutStatusSubresource(ctx, err)
	case apierrors.IsNotFound(err):
		return true, p.fail(p.notFound(err), p.mainWritten)
	case apierrors.IsConflict(err) || isGuardFailure(err):
		return p.reread(ctx, err, ops)
	case !status && refusesNewFinalizers(err) && addsFinalizers(p.before, p.after):
		// The object was deleted after it was read: a race, not an invalid request. The next
		// reconcile reads the deletion and runs the cleanup instead.
		e := newConflictError(p.h.describe(p.obj), []string{"/metadata/finalizers"}, 0, err)
		e.why = "it is being deleted, so no finalizer can be added"
		return true, p.fail(e, p.mainWritten)
	default:
		return true, p.fail(fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err), p.mainWritten)
	}
}

// start sets the loop's state up: base is the snapshot, or the History's newer object.
func (p *patcher) start() error {
	p.backoff = retryBackoff()
	p.retries = p.backoff.Steps
	p.base = p.before
	p.statusInMain = p.snapshotShowsStatusInMain()
	if p.recorded == nil {
		return nil
	}
	// The controller's own last write is newer than the snapshot: merge onto it, as onto an
	// object read after a conflict.
	m, err := objects.ToMap(p.recorded)
	if err != nil {
		return err
	}
	p.latest, p.base = p.recorded, m
	p.h.previous = deepCopyObject(p.recorded)
	return nil
}

// next computes the next request against base: the main request while one is left, then the
// status request. done is set, and obj updated, when nothing is left to write.
func (p *patcher) next() (req threeway.Request, done bool, err error) {
	m := &threeway.Merger{Owned: p.opts.ownedConditions, Order: p.order}
	d := &threeway.Differ{Exact: p.exact, Guarded: threeway.OwnedGuard(p.opts.ownedConditions), Written: written(p.base)}
	if !p.mainDone {
		result := m.MergeMain(p.before, p.after, p.base, p.statusInMain)
		if len(m.Conflicts) > 0 {
			return req, false, p.fail(newConflictError(p.h.describe(p.obj), m.Conflicts, 0, nil), p.mainWritten)
		}
		req = d.DiffMain(p.base, result, p.statusInMain)
		p.mainDone = req.Empty()
		if !p.mainDone {
			return req, false, nil
		}
	}
	if p.statusInMain {
		p.finish(p.latest)
		return req, true, nil
	}
	result := m.MergeStatus(p.before, p.after, p.base)
	if len(m.Conflicts) > 0 {
		return req, false, p.fail(newConflictError(p.h.describe(p.obj), m.Conflicts, 0, nil), p.mainWritten)
	}
	req = d.DiffStatus(p.base, result)
	if req.Empty() {
		p.finish(p.latest)
		return req, true, nil
	}
	return req, false, nil
}

// guarded returns req's operations with their guards. The very request the server just refused
// is locked on base's resourceVersion instead: what the object as read shows cannot be what the
// server holds, and only the resourceVersion can guard it.
func (p *patcher) guarded(req threeway.Request) []threeway.Op {
	ops := req.Finish(p.base, p.lock)
	if !p.lock && slices.EqualFunc(ops, p.lastRefused, func(a, b threeway.Op) bool {
		return a.Kind == b.Kind && a.Path == b.Path && jsonvalue.Equal(a.Value, b.Value)
	}) {
		p.lock = true
		ops = req.Finish(p.base, p.lock)
	}
	return ops
}

// write sends ops, unless they must be locked on a resourceVersion base does not have: that is
// a conflict, so that the object is read first.
func (p *patcher) write(ctx context.Context, req threeway.Request, ops []threeway.Op) (client.Object, error) {
	if rv, _ := jsonvalue.Nested(p.base, "metadata", "resourceVersion"); (p.lock || req.Lock) && (rv == nil || rv == "") {
		return nil, apierrors.NewConflict(p.resource(), p.obj.GetName(), errors.New("the object has no resourceVersion"))
	}
	return p.send(ctx, ops, req.Status)
}

// accepted takes resp, the server's answer to a request that succeeded, as the latest object.
// done is set, and obj updated, when it was the last request: the status request, or one that
// left the object gone.
func (p *patcher) accepted(resp client.Object, status bool, ops []threeway.Op) (done bool, err error) {
	p.opts.history.record(resp)
	p.latest = resp
	if status || isGone(resp) {
		p.finish(p.latest)
		return true, nil
	}
	// The next request is computed on what this one returned.
	if p.base, err = objects.ToMap(resp); err != nil {
		return false, err
	}
	if !p.mainWritten && !p.statusInMain {
		// The status is merged onto what this write returned: the server's status before this
		// Patch wrote any of it, newer than the snapshot's when the cache lagged. Previous says
		// so, for the transitions the status write makes.
		p.h.previous = withStatusOf(p.h.previous, resp, p.base)
	}
	p.mainDone, p.mainWritten = true, true
	if p.statusInMain && p.h.statusSubresource == nil && touchesStatus(ops) {
		// The status went with the rest of the object: whether the server kept what was sent of
		// it says whether the kind has a status subresource. (Not whether the status now holds
		// every change: another writer may have changed it since the object the request was
		// computed on.)
		kept := keptStatus(p.base, ops)
		p.h.statusSubresource = ptr.To(!kept)
		p.statusInMain = kept
	}
	return false, nil
}

// withoutStatusSubresource handles err, a status request answered 404: the object is gone, or
// its kind has no status subresource, and the object tells which. Without one, the status is
// sent with the rest of the object from then on. (What the server keeps of it says nothing
// more: it prunes fields the schema does not know, with or without a status subresource.)
func (p *patcher) withoutStatusSubresource(ctx context.Context, err error) (stop bool, _ error) {
	fresh, getErr := p.get(ctx)
	if getErr != nil || !p.sameObject(fresh) {
		return true, p.fail(p.notFound(err), p.mainWritten)
	}
	p.latest, p.statusInMain, p.mainDone = fresh, true, false
	p.h.statusSubresource = ptr.To(false)
	if !p.mainWritten {
		p.h.previous = deepCopyObject(fresh)
	}
	if p.base, err = objects.ToMap(fresh); err != nil {
		return true, err
	}
	return false, nil
}

// reread handles err, a request (ops) refused because another writer changed what a guard
// tests: it waits, reads the latest object and makes it base, so that the next request is
// merged again onto it.
func (p *patcher) reread(ctx context.Context, err error, ops []threeway.Op) (stop bool, _ error) {
	p.conflicts++
	if p.conflicts > p.retries {
		return true, p.fail(newConflictError(p.h.describe(p.obj), nil, p.conflicts, err), p.mainWritten)
	}
	delay := p.backoff.Step()
	log.FromContext(ctx).V(1).Info("Patch conflicted, retrying with the latest object", "object", p.h.describe(p.obj), "attempt", p.conflicts, "delay", delay)
	if err := pause.For(ctx, delay); err != nil {
		return true, p.fail(fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err), p.mainWritten)
	}
	fresh, getErr := p.get(ctx)
	if apierrors.IsNotFound(getErr) || (getErr == nil && !p.sameObject(fresh)) {
		return true, p.fail(p.notFound(err), p.mainWritten)
	}
	if getErr != nil {
		return true, p.fail(fmt.Errorf("failed to read %s after a conflict: %w", p.h.describe(p.obj), getErr), p.mainWritten)
	}
	m, convErr := objects.ToMap(fresh)
	if convErr != nil {
		return true, convErr
	}
	if isGuardFailure(err) {
		p.lastRefused = ops
		if threeway.Applies(m, ops) {
			m = p.explainRefusal(ctx, m, ops)
		}
	}
	p.latest, p.base = fresh, m
	if !p.mainWritten {
		p.h.previous = deepCopyObject(fresh)
	}
	return false, nil
}

// explainRefusal is called when the server refused ops although m, the object as read, says it
// would accept them: it holds a value the object cannot show exactly (a field its Go type lacks,
// an empty map a typed object drops), or another writer changed it and changed it back. It
// reads the object as JSON, which shows every field: when the guards fail on that, the type hid
// a field, so the JSON is returned to merge onto (the field is kept, or a change to its list is
// a conflict). Otherwise no value explains the refusal: requests are locked on the
// resourceVersion from now on, and m is returned.
func (p *patcher) explainRefusal(ctx context.Context, m map[string]any, ops []threeway.Op) map[string]any {
	if raw, rawErr := p.getRaw(ctx); rawErr == nil && p.sameObject(raw) && !threeway.Applies(raw.Object, ops) {
		return raw.Object
	}
	p.lock = true
	return m
}

// refusesNewFinalizers reports whether err is the API server's refusal to add a finalizer to an
// object being deleted: 422 with a cause on metadata.finalizers.
func refusesNewFinalizers(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
		return c.Field == "metadata.finalizers" && c.Type == metav1.CauseTypeForbidden
	})
}

// addsFinalizers reports whether after has a finalizer before does not.
func addsFinalizers(before, after map[string]any) bool {
	bv, _ := jsonvalue.Nested(before, "metadata", "finalizers")
	av, _ := jsonvalue.Nested(after, "metadata", "finalizers")
	b := jsonvalue.StringList(bv)
	return slices.ContainsFunc(jsonvalue.StringList(av), func(f string) bool { return !slices.Contains(b, f) })
}

// snapshotShowsStatusInMain reports whether the status should go with the rest of the object: when the
// Helper learned that the kind has no status subresource, or when the snapshot's managedFields
// show status fields written through the main resource and none through the status subresource.
func (p *patcher) snapshotShowsStatusInMain() bool {
	if s := p.h.statusSubresource; s != nil {
		return !*s
	}
	inMain := false
	for _, e := range p.h.before.GetManagedFields() {
		if e.Subresource == "status" {
			return false
		}
		fields, ok := managed.FieldSet(&e)
		if !ok {
			continue
		}
		if status, ok := fields["f:status"].(map[string]any); ok && len(status) > 0 {
			inMain = true
		}
	}
	return inMain
}

// written returns whether a field manager of obj's managedFields owns the field at path or
// something in it, or nil when obj has no managedFields.
func written(obj map[string]any) func(path []string) bool {
	entries := jsonvalue.List(nestedValue(obj, "metadata", "managedFields"))
	if len(entries) == 0 {
		return nil
	}
	return func(path []string) bool {
		for _, e := range entries {
			fields := jsonvalue.NestedMap(jsonvalue.Map(e), "fieldsV1")
			if _, ok := jsonvalue.Nested(fields, fieldsPath(path)...); ok {
				return true
			}
		}
		return false
	}
}

func nestedValue(m map[string]any, path ...string) any {
	v, _ := jsonvalue.Nested(m, path...)
	return v
}

// fieldsPath returns path as managedFields name it: "f:" and each field's name.
func fieldsPath(path []string) []string {
	out := make([]string, len(path))
	for i, p := range path {
		out[i] = "f:" + p
	}
	return out
}

// sameObject reports whether fresh is the object the snapshot was taken of, not another one
// created under the same name since.
func (p *patcher) sameObject(fresh client.Object) bool {
	uid := p.h.before.GetUID()
	return uid == "" || fresh.GetUID() == uid
}

// notFound returns what Patch returns for err, from a request or a read that found the object
// gone: nothing when the object was being deleted (it is gone, as removing its last finalizer
// meant), a NotFound error otherwise.
func (p *patcher) notFound(err error) error {
	if p.deleting {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		err = apierrors.NewNotFound(p.resource(), p.obj.GetName())
	}
	return fmt.Errorf("failed to patch %s: %w", p.h.describe(p.obj), err)
}

// fail returns err, marked with ErrPartiallyWritten when the metadata and spec were written.
func (p *patcher) fail(err error, mainWritten bool) error {
	if err == nil || !mainWritten {
		return err
	}
	return fmt.Errorf("%w: %w", ErrPartiallyWritten, err)
}

// send sends one JSON Patch and returns the object the server answered with.
func (p *patcher) send(ctx context.Context, ops []threeway.Op, status bool) (client.Object, error) {
	data, err := threeway.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the patch of %s: %w", p.h.describe(p.obj), err)
	}
	resp, err := newLike(p.obj, p.h.gvk)
	if err != nil {
		return nil, err
	}
	patch := client.RawPatch(types.JSONPatchType, data)
	if status {
		return resp, p.h.client.Status().Patch(ctx, resp, patch)
	}
	return resp, p.h.client.Patch(ctx, resp, patch)
}

// get reads the latest object with the helper's client.
func (p *patcher) get(ctx context.Context) (client.Object, error) {
	fresh, err := newLike(p.obj, p.h.gvk)
	if err != nil {
		return nil, err
	}
	return fresh, p.latestReader().Get(ctx, client.ObjectKeyFromObject(p.obj), fresh)
}

// latestReader is where the latest object is read: the Writer's API reader, or the client.
func (p *patcher) latestReader() client.Reader {
	if p.opts.latestFrom != nil {
		return p.opts.latestFrom
	}
	return p.h.client
}

// getRaw reads the object as JSON, every field it holds, whatever obj's Go type shows of it.
func (p *patcher) getRaw(ctx context.Context) (*unstructured.Unstructured, error) {
	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(p.h.gvk)
	// Without read-your-writes for this read: with it, a client would start an informer of the
	// unstructured form of the kind, a second copy of all its objects, for one read.
	return raw, p.latestReader().Get(ctx, client.ObjectKeyFromObject(p.obj), raw, client.DisableReadYourWritesConsistency)
}

// finish makes latest, when there is one, both obj and the new snapshot.
func (p *patcher) finish(latest client.Object) {
	if latest == nil {
		return
	}
	p.h.before = deepCopyObject(latest)
	// latest was read or decoded into an object of obj's type (see newLike): the copy cannot fail.
	_ = objects.CopyInto(p.obj, latest)
}

// resource names the object's resource in the errors the helper makes itself.
func (p *patcher) resource() schema.GroupResource {
	return resourceOf(p.h.client, p.h.gvk)
}

// resourceOf names gvk's resource as c's RESTMapper maps it, or by its kind when it cannot.
func resourceOf(c client.Client, gvk schema.GroupVersionKind) schema.GroupResource {
	if m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Resource.GroupResource()
	}
	return schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
}

// keptStatus reports whether obj, the server's answer to a request of ops, holds every change
// ops made to the status: a value added or replaced is there (an empty object or list may be
// missing, since a typed object cannot show one), a value removed is not.
func keptStatus(obj map[string]any, ops []threeway.Op) bool {
	for _, o := range ops {
		if o.Kind == "test" || (o.Path != "/status" && !strings.HasPrefix(o.Path, "/status/")) {
			continue
		}
		v, ok := atPointer(obj, o.Path)
		switch {
		case o.Kind == "remove":
			if ok {
				return false
			}
		case ok:
			if !jsonvalue.Equal(v, o.Value) {
				return false
			}
		case !isEmptyValue(o.Value):
			return false
		}
	}
	return true
}

// isEmptyValue reports whether v is an empty object or list.
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// atPointer returns the value at the JSON pointer path in doc, and reports whether there is one.
func atPointer(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, token := range strings.Split(path, "/")[1:] {
		token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[token]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// touchesStatus reports whether ops change the status.
func touchesStatus(ops []threeway.Op) bool {
	return slices.ContainsFunc(ops, func(o threeway.Op) bool {
		return o.Kind != "test" && (o.Path == "/status" || strings.HasPrefix(o.Path, "/status/"))
	})
}

// isGone reports whether obj, as returned by the server, is being deleted and has no finalizers
// left: the server removes it at once.
func isGone(obj client.Object) bool {
	return obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0
}

// describe names obj for errors and logs: its kind and its key.
func (h *Helper) describe(obj client.Object) string {
	return h.gvk.Kind + " " + client.ObjectKeyFromObject(obj).String()
}

// isGuardFailure reports whether err is the API server's refusal of a JSON Patch whose
// operations did not apply to the object, which for the patches Patch builds means that a test
// failed or that a path it changes is gone: another writer changed that part. The API server
// answers 422 Unprocessable Entity without details (the JSON Patch library's message is
// dropped); a validation error or an admission policy's denial, also 422, names the object and
// lists causes.
func isGuardFailure(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusUnprocessableEntity && s.Reason == metav1.StatusReasonInvalid &&
		(s.Details == nil || (len(s.Details.Causes) == 0 && s.Details.Name == "" && s.Details.Kind == ""))
}
