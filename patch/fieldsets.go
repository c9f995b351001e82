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
	"crypto/sha256"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// fieldSetsPerGeneration is how many decoded field sets a generation of fieldSets holds. The
// entries of the objects one controller applies alike hold the same bytes whatever their names
// (a field set names fields and list keys, not values), so a few dozen cover its kinds.
const fieldSetsPerGeneration = 64

// maxSharedFieldSet is the size of the largest field set (its JSON) fieldSets keeps: a larger
// one (a ConfigMap with thousands of keys) is decoded each time, so that what the cache holds is
// bounded in bytes, not only in sets.
const maxSharedFieldSet = 16 << 10

// fieldSets remembers the field sets of managedFields entries, decoded from their JSON, by the
// hash of that JSON, so that the proofs of many objects decode each distinct set once. It keeps
// two generations, as the apply cache does, so that memory stays bounded. The sets it returns
// are shared: read only.
type fieldSets struct {
	mu       sync.Mutex
	cur, old map[[32]byte]decodedSet
}

// decodedSet is a field set decoded from its JSON; ok is false when it could not be.
type decodedSet struct {
	set map[string]any
	ok  bool
}

// entries returns the proofs' form of the managedFields entries in list, and the hash of the
// field set of manager's apply entry for subresource (zero when there is not exactly one).
// Only manager's own field sets are kept: other writers' often name what differs from object
// to object (an annotation, a data key) and would only push them out.
func (c *fieldSets) entries(list []metav1.ManagedFieldsEntry, manager, subresource string) ([]managed.Entry, [32]byte) {
	out := make([]managed.Entry, 0, len(list))
	var own [32]byte
	owners := 0
	for i := range list {
		e := &list[i]
		var d decodedSet
		switch {
		case e.Manager != manager:
			d.set, d.ok = managed.FieldSet(e)
		case e.FieldsV1 != nil:
			sum := sha256.Sum256(e.FieldsV1.GetRawBytes())
			d = c.decode(sum, e)
			if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource {
				own = sum
			}
		}
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource {
			owners++
		}
		out = append(out, managed.NewEntry(e, d.set, d.ok))
	}
	if owners != 1 {
		own = [32]byte{}
	}
	return out, own
}

// decode returns the field set of e, whose JSON has the hash sum.
func (c *fieldSets) decode(sum [32]byte, e *metav1.ManagedFieldsEntry) decodedSet {
	c.mu.Lock()
	d, found := c.cur[sum]
	if !found {
		if d, found = c.old[sum]; found {
			c.putLocked(sum, d)
		}
	}
	c.mu.Unlock()
	if found {
		return d
	}
	d.set, d.ok = managed.FieldSet(e)
	if len(e.FieldsV1.GetRawBytes()) > maxSharedFieldSet {
		return d
	}
	c.mu.Lock()
	c.putLocked(sum, d)
	c.mu.Unlock()
	return d
}

func (c *fieldSets) putLocked(sum [32]byte, d decodedSet) {
	if c.cur == nil {
		c.cur = make(map[[32]byte]decodedSet, fieldSetsPerGeneration)
	}
	if len(c.cur) >= fieldSetsPerGeneration {
		c.old, c.cur = c.cur, make(map[[32]byte]decodedSet, fieldSetsPerGeneration)
	}
	c.cur[sum] = d
}
