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
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
	// conditions are the type, status and lastTransitionTime of each condition the object had at
	// resourceVersion, for a status apply: the transition times to carry over while the
	// Applier's reader has not caught up with that apply.
	conditions []any
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

// maxGrownEntries bounds a growing cache: about 150 MB at 150 bytes an entry, for half a million
// objects applied again and again by one Applier.
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
