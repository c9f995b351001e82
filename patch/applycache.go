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
	"maps"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// applyKey identifies what one field manager applies to one object (or its status).
type applyKey struct {
	gvk                  schema.GroupVersionKind
	namespace, name      string
	manager, subresource string
}

// applyRecord is what the Applier remembers of its last apply: the hash of the request body and
// the resourceVersion the object had right after it.
type applyRecord struct {
	hash            [32]byte
	resourceVersion string
	// owner is the uid of the owner whose mark the apply declared (a controller owner reference
	// or tracking labels), if any: the object at resourceVersion was that owner's.
	owner types.UID
	// fixed reports whether applying the same request again to the object at resourceVersion
	// changes nothing (see managed.FixedPoint): only then does the record prove a skip.
	fixed bool
	// more holds what only some records have, so that the others stay small; nil for none.
	more *recordDetails
}

// recordDetails is what a record of a proof or of a status apply adds.
type recordDetails struct {
	// declared is the hash of the field set (its bytes) of the manager's managedFields entry
	// that is the field set the apply declares: the one the API server recorded for the apply,
	// or one a proof found equal to the set the kind's schema gives (see
	// Applier.provenUpToDate); zero for none.
	declared [32]byte
	// conditions are the type, status and lastTransitionTime of each condition the object had
	// at resourceVersion, for a status apply: the transition times to carry over while the
	// Applier's reader has not caught up with that apply.
	conditions []any
}

// withDetails returns r with declared and conditions; r has no details when both are zero.
func (r applyRecord) withDetails(declared [32]byte, conditions []any) applyRecord {
	if declared != ([32]byte{}) || conditions != nil {
		r.more = &recordDetails{declared: declared, conditions: conditions}
	}
	return r
}

// declaredFor returns the hash of the field set the apply of hash declares (see
// recordDetails.declared), zero when r is not a record of that apply.
func (r applyRecord) declaredFor(hash [32]byte) [32]byte {
	if r.hash != hash || r.more == nil {
		return [32]byte{}
	}
	return r.more.declared
}

// conditions returns the conditions r keeps (see recordDetails.conditions).
func (r applyRecord) conditions() []any {
	if r.more == nil {
		return nil
	}
	return r.more.conditions
}

// applyCache remembers the last apply of recently applied objects. It keeps two generations of
// entries: when the current one is full it becomes the old one and a new one starts, so the
// entries used recently survive and memory stays bounded without a list to maintain.
//
// A cache made with a size keeps a generation at half of it. One made to grow starts there and
// doubles a generation's capacity, up to maxGrownEntries in all, when half of a generation was
// objects applied before: entries carried over from the old generation, and objects the cache
// had forgotten that the Applier found its own managedFields entry on (see missedApplied). Those
// are objects applied again and again that no longer fit, and would be dropped before their next
// apply (five children of 1,000 owners outgrow a fixed 4,096). A growing cache also starts a new
// generation after as many lookups as a generation holds, and, when a generation was less than a
// quarter full, shrinks to four times what it held, down to where it started: the entries of objects no longer
// applied (deleted ones, or all but a few after a pass over many) go within two generations, and
// the capacity follows the objects applied again.
type applyCache struct {
	mu sync.Mutex
	// limit is a generation's capacity; grow whether it may change, between base and max.
	limit, base, max int
	grow             bool
	// again counts the entries of cur that came from old, and the objects applied before that
	// the cache had forgotten; lookups counts the calls of get; both since cur began.
	again, lookups int
	cur, old       map[applyKey]applyRecord
}

// defaultApplyCacheSize is the size a growing cache starts at.
const defaultApplyCacheSize = 4096

// maxGrownEntries bounds a growing cache: about 200 MB at 200 bytes an entry (its key and
// record, with the map's share), for half a million objects applied again and again by one
// Applier.
const maxGrownEntries = 1 << 20

// newApplyCache returns a cache of up to size entries.
func newApplyCache(size int) *applyCache {
	limit := max((size+1)/2, 1)
	return &applyCache{limit: limit, base: limit, max: limit, cur: map[applyKey]applyRecord{}}
}

// newGrowingApplyCache returns a cache of size entries at first that grows with the objects
// applied again, up to maxGrownEntries, and shrinks back when they are fewer.
func newGrowingApplyCache(size int) *applyCache {
	c := newApplyCache(size)
	c.grow, c.max = true, max(maxGrownEntries/2, c.limit)
	return c
}

func (c *applyCache) get(k applyKey) (applyRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookups++
	if c.grow && c.lookups >= c.limit {
		c.rotate()
	}
	if r, ok := c.cur[k]; ok {
		return r, true
	}
	r, ok := c.old[k]
	if ok {
		delete(c.old, k)
		c.putLocked(k, r)
		c.again++
	}
	return r, ok
}

// missedApplied counts an object that the cache has no entry for although the Applier applied it
// before: its live object has the Applier's managedFields entry.
func (c *applyCache) missedApplied() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.again++
}

func (c *applyCache) put(k applyKey, r applyRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, r)
}

func (c *applyCache) putLocked(k applyKey, r applyRecord) {
	if _, ok := c.cur[k]; !ok && len(c.cur) >= c.limit {
		c.rotate()
	}
	c.cur[k] = r
}

// rotate makes cur the old generation and starts a new one, first resizing a growing cache: up
// when half of cur was applied again, down when cur is less than a quarter full.
func (c *applyCache) rotate() {
	switch {
	case !c.grow:
	case 2*c.again >= c.limit && c.limit < c.max:
		c.limit = min(2*c.limit, c.max)
	case 4*len(c.cur) < c.limit && c.limit > c.base:
		c.limit = max(4*len(c.cur), c.base)
	}
	c.old, c.cur = c.cur, make(map[applyKey]applyRecord, min(len(c.cur), c.limit))
	c.again, c.lookups = 0, 0
}

func (c *applyCache) forget(match func(applyKey) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.cur {
		if match(k) {
			delete(c.cur, k)
		}
	}
	for k := range c.old {
		if match(k) {
			delete(c.old, k)
		}
	}
}

// olderThan reports whether resourceVersion a is older than b. Resource versions are opaque to
// clients in general; every API server backed by etcd uses etcd's increasing revision, and any
// other value compares as not older.
func olderThan(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}

// omissions remembers, per kind, the places where the kind's stored form omits an empty map or
// list an apply sets, or keeps it (see managed.Omits), as the Go types of the kind tell (see
// builtInOmissions). Nothing is learned from what the server answered: an empty value an apply
// set and the object lacks may also be one an admission policy removes from some objects only,
// or until it is changed, or a list of type map the server dropped when an apply removed the
// manager's last element (which a schema's minItems may refuse to create again). It holds the
// places of the empty values desired objects set, a few per kind, and is safe for concurrent use.
type omissions struct {
	mu sync.RWMutex
	// places maps a kind's places to true where its stored form omits an empty map or list and
	// false where it keeps one.
	places map[schema.GroupVersionKind]map[string]bool
}

// record records what places tells of gvk's stored form.
func (o *omissions) record(gvk schema.GroupVersionKind, places map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.places == nil {
		o.places = map[schema.GroupVersionKind]map[string]bool{}
	}
	if o.places[gvk] == nil {
		o.places[gvk] = make(map[string]bool, len(places))
	}
	maps.Copy(o.places[gvk], places)
}

// lookup returns what is known of place in gvk's stored form.
func (o *omissions) lookup(gvk schema.GroupVersionKind, place string) (omitted, known bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	omitted, known = o.places[gvk][place]
	return omitted, known
}

// of returns what the proofs of an apply of desired, of kind gvk, know of its stored form: what
// is recorded, and, on the first place that is not, what reading desired into the kind's Go type
// tells (see builtInOmissions).
func (o *omissions) of(gvk schema.GroupVersionKind, desired map[string]any) managed.Omits {
	read := false
	return func(place string) bool {
		omitted, known := o.lookup(gvk, place)
		if known || read {
			return omitted
		}
		read = true
		if places, ok := builtInOmissions(gvk, desired); ok {
			o.record(gvk, places)
		}
		omitted, _ = o.lookup(gvk, place)
		return omitted
	}
}

// builtInOmissions returns, for each empty map or list desired sets where the stored form of gvk
// is known, whether it omits it. A kind the API server serves from its own Go types (client-go's
// scheme) stores what those types keep, so desired read into the kind's type and written back
// lacks the empty values they omit (a field with omitempty, such as a nodeSelector, labels, a
// container's ports or finalizers) and keeps the others (an empty struct behind a pointer, such
// as a Node's status.features). Any other kind stores its metadata as ObjectMeta and the rest as
// the JSON sent, whose empty values stay unless an admission plugin removes them: only metadata
// is read then.
// ok is false when desired cannot be read into the type.
func builtInOmissions(gvk schema.GroupVersionKind, desired map[string]any) (places map[string]bool, ok bool) {
	places = map[string]bool{}
	if obj, err := clientgoscheme.Scheme.New(gvk); err == nil {
		back, ok := roundTrip(desired, obj)
		if ok {
			emptiesKept(desired, back, nil, places)
		}
		return places, ok
	}
	meta, _ := desired["metadata"].(map[string]any)
	back, ok := roundTrip(meta, &metav1.ObjectMeta{})
	if ok {
		emptiesKept(meta, back, []string{"metadata"}, places)
	}
	return places, ok
}

// roundTrip returns m read into obj, a Go type, and written back; ok is false when obj has no
// field for a key of m or cannot hold its value.
func roundTrip(m map[string]any, obj any) (back map[string]any, ok bool) {
	if runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, obj, true) != nil {
		return nil, false
	}
	back, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	return back, err == nil
}

// emptiesKept records in places, for each empty map or list in d, whether k, the same value
// written back through a Go type, lacks it; path is where d is.
func emptiesKept(d, k any, path []string, places map[string]bool) {
	switch dv := d.(type) {
	case map[string]any:
		kv, _ := k.(map[string]any)
		for name, de := range dv {
			if managed.Empty(de) {
				_, kept := kv[name]
				places[strings.Join(append(path, name), ".")] = !kept
				continue
			}
			emptiesKept(de, kv[name], append(path, name), places)
		}
	case []any:
		kv, _ := k.([]any)
		for i, de := range dv {
			var ke any
			if i < len(kv) {
				ke = kv[i]
			}
			emptiesKept(de, ke, append(path, "[]"), places)
		}
	}
}
