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
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
	"github.com/tenon-dev/tenon/requeue"
)

// Writer holds what every reconcile of one controller needs to write the object it reconciles
// back: the client, the API reader, the [History] of its own writes, the conditions it owns, and
// what it reports after a write (Events, metrics). Make one per controller with [NewWriter], keep
// it in the reconciler, begin each reconcile with [Writer.NewHelper] and end it with
// [Helper.Finish]:
//
//	h, err := r.Writer.NewHelper(cluster)
//	if err != nil {
//		return ctrl.Result{}, err
//	}
//	defer func() { res, err = h.Finish(ctx, cluster, res, err) }()
//
// A Writer is safe for concurrent use by the controller's workers.
type Writer struct {
	client   client.Client
	opts     WriterOptions
	progress progressClock
}

// WriterOptions configures a [Writer]. Every field is optional.
type WriterOptions struct {
	// APIReader reads the latest object after a conflict, instead of the client: a manager's
	// client reads from its cache, which may not have caught up with the write that conflicted,
	// so that a retry conflicts again. Set it to mgr.GetAPIReader(), which never lags.
	APIReader client.Reader

	// History, when set, remembers the objects this controller's writes returned, so that a
	// reconcile whose snapshot the cache took before its own last write merges onto that write
	// and sends nothing it already sent (see [History]). Which setup needs it: a manager whose
	// client waits for its own writes (controller-runtime's read-your-writes consistency,
	// client.CacheOptions.EnableReadYourWritesConsistency) does not; the default client does.
	History *History

	// OwnedConditions are the condition types this controller writes, as the [OwnedConditions]
	// option of every Patch: when another writer changed one of them since the snapshot, this
	// controller's value wins, where a change to a condition not owned is a [*ConflictError].
	// [Helper.Finish] owns Ready, Reconciling and Stalled besides, which requeue.Report writes.
	OwnedConditions []conditions.Type

	// Recorder, when set, records an Event for each transition of Ready and Stalled that a
	// [Helper.Finish] wrote, with observe.RecordEvents.
	Recorder events.EventRecorder

	// Metrics, when set, is given the object's conditions after each [Helper.Finish] that wrote
	// them or found nothing to write, with [observe.Metrics.Record] under the object's kind.
	// Forget an object that is gone with [observe.Metrics.Forget].
	Metrics *observe.Metrics

	// ProgressInterval, when positive, coalesces the status writes of [Helper.Finish] that report
	// progress only: see "Coalescing progress" in the package documentation. Default: every
	// change is written at once.
	ProgressInterval time.Duration

	// WriteAtOnce, with ProgressInterval, reports whether a change from before (the snapshot) to
	// after (the object to write) must be written at once although it reports progress only by
	// the package's rule, for example a status field that clients wait for. It must only read
	// them: before is the Helper's snapshot, which the write compares against. Optional.
	WriteAtOnce func(before, after client.Object) bool
}

// NewWriter returns a [Writer] that writes with c. A nil c is reported by [Writer.NewHelper].
func NewWriter(c client.Client, opts WriterOptions) *Writer {
	return &Writer{client: c, opts: opts}
}

// NewHelper returns a [Helper] for obj, as the package's [NewHelper] with the Writer's client,
// whose every Patch and Finish use the Writer's options: its API reader, its History and its
// owned conditions, to which the options of a Patch call add.
func (w *Writer) NewHelper(obj client.Object) (*Helper, error) {
	h, err := NewHelper(obj, w.client)
	if err != nil {
		return nil, err
	}
	h.writer = w
	return h, nil
}

// Finish ends a reconcile of obj that returns res and err, in the order that matters, and
// returns what the reconcile should return:
//
//  1. requeue.Report records err (nil for success) in obj's status: Reconciling, Stalled and
//     status.observedGeneration, as kstatus and `kubectl wait` read them;
//  2. Patch writes what the reconcile changed, owning the Writer's conditions and those Report
//     writes; with [WriterOptions.ProgressInterval], a change that reports progress only may
//     wait instead (res then asks for a requeue when it may be written);
//  3. only after a successful write, or when there was nothing to write: an Event for each
//     transition of Ready and Stalled, computed from [Helper.Previous] (not the snapshot, which
//     a lagging cache may have taken before the controller's own last write), and the metrics.
//
// When Patch fails, Finish returns err joined with Patch's error, retried as a whole (a terminal
// err no longer stops the retry: the outcome it recorded was not written), and without res's
// requeue, which controller-runtime ignores beside an error. When the write leaves the object
// gone (its last finalizer removed), no Event is recorded and its metrics are forgotten.
//
// obj must be the object given to the Helper, changed by the reconcile. Report needs the
// object's status to have an observedGeneration (see requeue.Report). A typed object's
// conditions are its conditions.Setter's; an unstructured object's are read from
// status.conditions, so its schema must hold metav1.Condition conditions and
// status.observedGeneration there; an object with neither is patched without steps 1 and 3.
// Finish works with a Helper from the package's NewHelper too, with no options.
func (h *Helper) Finish(ctx context.Context, obj client.Object, res ctrl.Result, err error) (ctrl.Result, error) {
	w := h.writer
	if w == nil {
		w = &Writer{}
	}
	setter := conditionsOf(obj)
	if setter != nil {
		err = requeue.Report(setter, err)
	}
	opts := []Option{OwnedConditions{conditions.Ready, conditions.Reconciling, conditions.Stalled}}
	var wait time.Duration
	var statusChanged bool
	if w.opts.ProgressInterval > 0 {
		opts = append(opts, progressGate(func(before, after map[string]any) bool {
			statusChanged = !jsonvalue.Equal(before["status"], after["status"])
			if err != nil || !w.progressOnly(h.before, obj, before, after) {
				return false
			}
			wait = w.progress.wait(keyOf(obj), w.opts.ProgressInterval)
			return wait > 0
		}))
	}
	if patchErr := h.Patch(ctx, obj, opts...); patchErr != nil {
		var results requeue.Results
		results.Add(res, err)
		results.Add(ctrl.Result{}, patchErr)
		return results.Merge()
	}
	if wait > 0 {
		if res.RequeueAfter == 0 || res.RequeueAfter > wait {
			res.RequeueAfter = wait
		}
		return res, err
	}
	if isGone(obj) {
		w.opts.Metrics.Forget(h.gvk.Kind, obj.GetNamespace(), obj.GetName())
		return res, err
	}
	if statusChanged && h.previous != nil && h.previous.GetResourceVersion() != obj.GetResourceVersion() {
		w.progress.wrote(keyOf(obj), w.opts.ProgressInterval)
	}
	if setter != nil {
		// The object the server returned: an unstructured object's adapter read it before.
		setter = conditionsOf(obj)
	}
	w.report(h, obj, setter)
	return res, err
}

// progressKey identifies an object for the progress clock: by name and UID, so that objects
// without a UID (a fake client's) are told apart by name.
type progressKey struct {
	types.NamespacedName
	uid types.UID
}

// keyOf returns obj's progressKey.
func keyOf(obj client.Object) progressKey {
	return progressKey{types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, obj.GetUID()}
}

// report records the Events and metrics of what the Patch of h wrote.
func (w *Writer) report(h *Helper, obj client.Object, setter conditions.Setter) {
	if setter == nil {
		return
	}
	if w.opts.Recorder != nil && h.previous != nil {
		if previous := conditionsOf(deepCopyObject(h.previous)); previous != nil {
			observe.RecordEvents(w.opts.Recorder, obj, previous.GetConditions(), setter.GetConditions())
		}
	}
	if w.opts.Metrics != nil {
		w.opts.Metrics.Record(h.gvk.Kind, namedSetter{setter, obj})
	}
}

// namedSetter gives [observe.Metrics.Record] an object's conditions and its name.
type namedSetter struct {
	conditions.Getter
	metav1.Object
}

// GetGeneration resolves the method both embedded types have.
func (n namedSetter) GetGeneration() int64 { return n.Object.GetGeneration() }

// conditionsOf returns obj's conditions as a Setter: obj itself when it is one, an adapter for
// an unstructured object, nil for an object without metav1.Condition conditions.
func conditionsOf(obj client.Object) conditions.Setter {
	switch o := obj.(type) {
	case conditions.Setter:
		return o
	case *unstructured.Unstructured:
		a, err := conditions.FromUnstructured(o)
		if err != nil {
			return nil
		}
		return a
	}
	return nil
}

// progressGate is the option of a Finish with a progress interval: Patch sends nothing when
// wait, given the snapshot and the object to write as JSON, returns true.
type progressGate func(before, after map[string]any) bool

func (g progressGate) applyToHelper(o *helperOptions) { o.wait = g }

// progressOnly reports whether the change from the snapshot to obj reports progress only: the
// rule of "Coalescing progress" in the package documentation, and WriteAtOnce.
func (w *Writer) progressOnly(snapshot, obj client.Object, before, after map[string]any) bool {
	for k, v := range before {
		if k != "status" && !jsonvalue.Equal(v, after[k]) {
			return false
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok && k != "status" && !jsonvalue.Equal(nil, v) {
			return false
		}
	}
	statusBefore, _ := before["status"].(map[string]any)
	statusAfter, _ := after["status"].(map[string]any)
	if !jsonvalue.Equal(statusBefore["observedGeneration"], statusAfter["observedGeneration"]) {
		return false
	}
	for _, t := range []conditions.Type{conditions.Ready, conditions.Reconciling, conditions.Stalled} {
		a, b := conditionIn(statusBefore, t), conditionIn(statusAfter, t)
		if (a == nil) != (b == nil) || a != nil && (a["status"] != b["status"] || a["reason"] != b["reason"]) {
			return false
		}
	}
	return w.opts.WriteAtOnce == nil || !w.opts.WriteAtOnce(snapshot, obj)
}

// conditionIn returns the condition of type t in status.conditions, as JSON, or nil.
func conditionIn(status map[string]any, t conditions.Type) map[string]any {
	list, _ := status["conditions"].([]any)
	for _, item := range list {
		if c, ok := item.(map[string]any); ok && c["type"] == string(t) {
			return c
		}
	}
	return nil
}

// progressClock remembers when each object's status was last written, for coalescing progress.
type progressClock struct {
	mu        sync.Mutex
	last      map[progressKey]time.Time
	lastSweep time.Time
}

// wait returns how long a progress write of uid must wait, 0 when it may be written now.
func (c *progressClock) wait(uid progressKey, interval time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.last[uid]
	if !ok {
		return 0
	}
	return max(0, interval-time.Since(last))
}

// wrote records that uid's status was written now, and forgets, once per interval, the objects
// whose last write is older than interval: they wait for nothing.
func (c *progressClock) wrote(uid progressKey, interval time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.last == nil {
		c.last = map[progressKey]time.Time{}
	}
	if now.Sub(c.lastSweep) > interval {
		for k, t := range c.last {
			if now.Sub(t) >= interval {
				delete(c.last, k)
			}
		}
		c.lastSweep = now
	}
	c.last[uid] = now
}
