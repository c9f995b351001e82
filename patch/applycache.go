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
	// changes nothing (see fixedPoint): only then does the record prove a skip.
	fixed bool
	// conditions are the type, status and lastTransitionTime of each condition the object had at
	// resourceVersion, for a status apply: the transition times to carry over while the
	// Applier's reader has not caught up with that apply.
	conditions []any
}

// applyCache remembers the last apply of up to size objects. It keeps two generations of
// entries: when the current one is full it becomes the old one and a new one starts, so the
// entries used recently survive and memory stays bounded without a list to maintain.
type applyCache struct {
	mu       sync.Mutex
	size     int
	cur, old map[applyKey]applyRecord
}

func newApplyCache(size int) *applyCache {
	return &applyCache{size: size, cur: map[applyKey]applyRecord{}}
}

func (c *applyCache) get(k applyKey) (applyRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.cur[k]; ok {
		return r, true
	}
	r, ok := c.old[k]
	if ok {
		c.putLocked(k, r)
	}
	return r, ok
}

func (c *applyCache) put(k applyKey, r applyRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, r)
}

func (c *applyCache) putLocked(k applyKey, r applyRecord) {
	if _, ok := c.cur[k]; !ok && len(c.cur) >= (c.size+1)/2 {
		c.old, c.cur = c.cur, make(map[applyKey]applyRecord, len(c.cur))
	}
	c.cur[k] = r
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
