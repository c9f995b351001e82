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
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of [History].
const (
	defaultHistoryTTL        = time.Minute
	defaultHistoryMaxEntries = 10000
)

// History remembers the last object the API server returned to the writes of [Helper.Patch],
// per object (by UID), so that a Patch whose snapshot is older than this controller's own last
// write merges onto that write instead of onto the stale snapshot. Give one to the controller's
// [Writer], whose Helpers all use it:
//
//	r.Writer = patch.NewWriter(mgr.GetClient(), patch.WriterOptions{
//		APIReader: mgr.GetAPIReader(),
//		History:   &patch.History{},
//	})
//
// It removes the cost of a manager's cache lagging behind the controller's own writes: a
// reconcile woken by the watch event of one write (a finalizer) runs before the cache shows the
// next (the status), sees no status, and without a History sends the status again, guarded
// against the stale snapshot, which fails (a 409 or 422 answer), after which Patch reads again and
// finds nothing to send.
//
// What it does, in every Patch given it:
//
//   - After each successful write, it records the object the server returned, with its
//     resourceVersion, unless it holds a newer one for that UID.
//   - Before sending anything, when it holds an object of the snapshot's UID and Go type whose
//     resourceVersion is newer than the snapshot's, Patch merges the changes made since the
//     snapshot onto that object, exactly as onto an object read after a conflict. When the merge
//     leaves nothing to send, nothing is sent and obj becomes that object: this reconcile's
//     changes are what the controller's own last write left. Otherwise the request is guarded
//     against that object, and a failed guard reads the latest object as always.
//   - When the snapshot's resourceVersion is the same as or newer than the recorded one, the entry
//     is dropped: the cache caught up. Resource versions are compared as integers, as every API
//     server backed by etcd makes them; an entry or a snapshot whose resourceVersion is not one
//     is never used.
//   - Entries expire after TTL, and at most about MaxEntries are kept, so that deleted objects do
//     not stay; a Patch without an entry does what it does without a History.
//
// Why skipping is safe: the recorded object was the server's state at a moment after the
// snapshot, so the skip is exactly what a Patch with a fresh read at that moment would have done
// (sent nothing). Another writer's change since then is not overwritten, as if it had come
// after; the watch event of the controller's own write, or of any later one, brings a reconcile
// whose snapshot is at least as new as the recorded object, which takes the normal path. With a
// predicate that filters the controller's own writes out (GenerationChangedPredicate filters
// status writes) that later reconcile may never come for the own write; but then neither would
// it after a Patch with a fresh read at that moment: the guarantee is that of a fresh read then,
// no weaker.
//
// What it costs: each entry is a deep copy of the object (managedFields included: the guards use
// them), held from the write until the cache delivers it, typically milliseconds, or until TTL.
//
// A History is safe for concurrent use by the workers of one controller. Its zero value is ready
// to use; it must not be copied after first use. A nil *History is an Option that does nothing.
type History struct {
	// TTL is how long an entry is kept after its write. Default (zero or negative): one minute.
	TTL time.Duration
	// MaxEntries bounds the entries kept: when that many were recorded since the oldest kept
	// generation began, the older half is forgotten. Default (zero or negative): 10,000.
	MaxEntries int

	mu sync.Mutex
	// cur and old are two generations of entries: cur receives new ones; when it is older than
	// TTL or full, it becomes old and old is forgotten, so memory is bounded without a sweep.
	cur, old map[types.UID]historyEntry
	since    time.Time // when cur began
}

// historyEntry is one recorded object.
type historyEntry struct {
	obj client.Object
	at  time.Time
}

func (h *History) ttl() time.Duration {
	if h.TTL <= 0 {
		return defaultHistoryTTL
	}
	return h.TTL
}

func (h *History) maxEntries() int {
	if h.MaxEntries <= 0 {
		return defaultHistoryMaxEntries
	}
	return h.MaxEntries
}

// newer returns a deep copy of the recorded object of snapshot's UID when it is newer than
// snapshot and of its Go type (and kind), or nil. An entry the snapshot caught up with is dropped.
func (h *History) newer(snapshot client.Object) client.Object {
	if h == nil || snapshot.GetUID() == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	uid := snapshot.GetUID()
	e, ok := h.lookupLocked(uid, time.Now())
	if !ok {
		return nil
	}
	switch rv, recorded := snapshot.GetResourceVersion(), e.obj.GetResourceVersion(); {
	case olderThan(rv, recorded):
	case olderThan(recorded, rv) || rv == recorded:
		delete(h.cur, uid)
		delete(h.old, uid)
		return nil
	default: // not integers
		return nil
	}
	if reflect.TypeOf(e.obj) != reflect.TypeOf(snapshot) || !sameKind(e.obj, snapshot) {
		return nil
	}
	return deepCopyObject(e.obj)
}

// record keeps a deep copy of obj, the object the server returned to a write, unless an entry
// at least as new is kept for its UID.
func (h *History) record(obj client.Object) {
	if h == nil || obj == nil || obj.GetUID() == "" {
		return
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	uid := obj.GetUID()
	if e, ok := h.lookupLocked(uid, now); ok && !olderThan(e.obj.GetResourceVersion(), obj.GetResourceVersion()) {
		return
	}
	if h.cur == nil || now.Sub(h.since) >= h.ttl() || len(h.cur) >= (h.maxEntries()+1)/2 {
		h.old, h.cur, h.since = h.cur, make(map[types.UID]historyEntry), now
	}
	delete(h.old, uid)
	h.cur[uid] = historyEntry{obj: deepCopyObject(obj), at: now}
}

// lookupLocked returns the entry of uid unless it expired; an expired one is dropped.
func (h *History) lookupLocked(uid types.UID, now time.Time) (historyEntry, bool) {
	e, ok := h.cur[uid]
	if !ok {
		e, ok = h.old[uid]
	}
	if !ok {
		return historyEntry{}, false
	}
	if now.Sub(e.at) >= h.ttl() {
		delete(h.cur, uid)
		delete(h.old, uid)
		return historyEntry{}, false
	}
	return e, true
}

// sameKind reports whether a and b, of the same Go type, are of the same kind: an unstructured
// object says so in its apiVersion and kind.
func sameKind(a, b client.Object) bool {
	ua, ok := a.(*unstructured.Unstructured)
	if !ok {
		return true
	}
	ub, _ := b.(*unstructured.Unstructured)
	return ub != nil && ua.GroupVersionKind() == ub.GroupVersionKind()
}
