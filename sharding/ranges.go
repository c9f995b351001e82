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

package sharding

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
)

// The labels of the slice Leases of a ring sharded by the API server (see [Ranges]).
const (
	// SliceRingLabel is the label on a slice Lease that names its ring.
	SliceRingLabel = "sharding.tenon.dev/ring"
	// SliceLabel is the label on a slice Lease whose value is the slice's index.
	SliceLabel = "sharding.tenon.dev/slice"
	// SlicesAnnotation is the annotation on a shard's own Lease that lists the slices it may
	// work on, "0,5,6": no other shard takes them while the shard's Lease is current, even when
	// their slice Leases are deleted or cleared.
	SlicesAnnotation = "sharding.tenon.dev/slices"
)

// uidKey is the field the API server hashes for a shard selector over objects' uids.
const uidKey = "object.metadata.uid"

// RangeOptions configure a shard of a ring sharded by the API server: see [NewRanges].
type RangeOptions struct {
	// Namespace is where the ring's Leases are: the shards' own (the manager's
	// LeaderElectionNamespace, which [ForManager] sets) and the slice Leases. Required.
	Namespace string
	// Slices is how many slices the hash space of objects' uids is cut into: a power of two
	// from 1 to 1024, by default 64. Slices are what moves between shards; more slices spread
	// the objects more evenly over more shards, and cost one Lease each.
	Slices int
	// Period is how often the shard reads the ring's Leases and moves slices; by default 2
	// seconds (controller-runtime's default RetryPeriod).
	Period time.Duration
	// Clock is the clock by which the shard judges the other shards' Leases; by default the
	// real one. Tests may skew it.
	Clock clock.PassiveClock
}

// Ranges is the shard side of a ring that the API server shards (KEP-5866, the
// ShardedListAndWatch feature gate, alpha in Kubernetes 1.36): no sharder labels the objects.
// Instead the hash space of objects' uids (64-bit FNV-1a, as the API server computes it) is cut
// into slices, each guarded by a slice Lease whose holder is the shard that works on the
// slice's objects, and each shard's cache lists and watches only the slices it holds, with a
// shard selector the API server applies. The shards agree on who should hold which slice from
// the ring's shard Leases ([ForManager]), and hand slices over through the slice Leases:
//
//   - a shard takes a slice only when the slice Lease has no holder, or its holder's shard
//     Lease is released, held by another identity, or not renewed for twice its duration by
//     the taker's clock (the same takeover rule, and the same clock-skew bound, as the
//     sharder's: see the package documentation), and no other shard whose Lease is current
//     lists the slice in its [SlicesAnnotation];
//   - a shard gives a slice up by stopping new reconciles of its objects, waiting for those
//     in flight, and only then dropping it from its SlicesAnnotation and clearing the slice
//     Lease's holder.
//
// Every write is a compare-and-swap on the slice Lease's resourceVersion, so two shards never
// hold one slice, and an object's reconciles run on one shard at a time. Build it with
// [NewRanges], pass it to [Ranges.SelectCache] before the manager is built, add it to the
// manager with [Ranges.SetupWithManager], and wrap the main kind's reconciler with
// [Ranges.Reconciler].
type Ranges struct {
	shard Shard
	opts  RangeOptions
	shift uint
	state *rangeState
}

// rangeState is what the copies of a Ranges share.
type rangeState struct {
	mu sync.Mutex
	// held are the slices this shard holds; releasing those it is giving up, whose objects no
	// new reconcile starts on.
	held, releasing map[int]bool
	inFlight        map[int]int
	// ended is closed, and replaced, whenever a reconcile ends.
	ended chan struct{}
	// selector is the shard selector of the held slices; changed is closed, and replaced, when
	// it changes.
	selector string
	changed  chan struct{}
}

// NewRanges returns the range side of shard. It returns an error naming what is wrong in opts.
func NewRanges(shard Shard, opts RangeOptions) (*Ranges, error) {
	var errs []error
	if shard.Ring == "" || shard.Name == "" {
		errs = append(errs, errors.New("the shard has no ring or name: build it with New"))
	}
	if opts.Namespace == "" {
		errs = append(errs, errors.New("the Leases' namespace is empty"))
	} else if problems := validation.IsDNS1123Label(opts.Namespace); len(problems) > 0 {
		errs = append(errs, fmt.Errorf("the Leases' namespace %q is not a namespace's name: %s", opts.Namespace, strings.Join(problems, "; ")))
	}
	if opts.Slices == 0 {
		opts.Slices = 64
	}
	if opts.Slices < 1 || opts.Slices > 1024 || bits.OnesCount(uint(opts.Slices)) != 1 {
		errs = append(errs, fmt.Errorf("the number of slices %d is not a power of two from 1 to 1024", opts.Slices))
	}
	if opts.Period == 0 {
		opts.Period = 2 * time.Second
	}
	if opts.Period < 0 {
		errs = append(errs, fmt.Errorf("the period %s is negative", opts.Period))
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("failed to build the ranges of shard %s: %w", shard, err)
	}
	state := &rangeState{held: map[int]bool{}, releasing: map[int]bool{}, inFlight: map[int]int{},
		ended: make(chan struct{}), changed: make(chan struct{})}
	state.selector = selectorOf(nil, opts.Slices)
	return &Ranges{shard: shard, opts: opts, shift: uint(64 - bits.TrailingZeros(uint(opts.Slices))), state: state}, nil
}

// SliceOf returns the slice of an object with the given uid: the top bits of the FNV-1a hash
// of the uid, which the API server computes for a shard selector on object.metadata.uid.
func (r *Ranges) SliceOf(uid string) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	if r.opts.Slices == 1 {
		return 0
	}
	return int(h.Sum64() >> r.shift)
}

// Held returns the slices this shard holds, in order.
func (r *Ranges) Held() []int {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	out := make([]int, 0, len(r.state.held))
	for i := range r.state.held {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// Selector returns the shard selector of the slices this shard holds, as the API server reads
// it: shardRange(object.metadata.uid, '0x…', '0x…') terms joined by ||, adjacent slices
// merged. While the shard holds no slice it selects a range of one hash value.
func (r *Ranges) Selector() string {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	return r.state.selector
}

// selectorOf returns the shard selector of the slices held, of n.
func selectorOf(held []int, n int) string {
	if len(held) == 0 {
		// Nothing: the API server has no empty range, and this one holds one hash of 2^64.
		return fmt.Sprintf("shardRange(%s, '0x%016x', '0x%016x')", uidKey, 0, 1)
	}
	held = slices.Sorted(slices.Values(held))
	// Slice i starts at i × 2^64/n; the last ends at 2^64, which the API server spells with 17
	// digits.
	bound := func(i int) string {
		if i == n {
			return "'0x10000000000000000'"
		}
		return fmt.Sprintf("'0x%016x'", uint64(i)<<(64-bits.TrailingZeros(uint(n))))
	}
	var terms []string
	for i := 0; i < len(held); {
		j := i
		for j+1 < len(held) && held[j+1] == held[j]+1 {
			j++
		}
		terms = append(terms, fmt.Sprintf("shardRange(%s, %s, %s)", uidKey, bound(held[i]), bound(held[j]+1)))
		i = j + 1
	}
	return strings.Join(terms, " || ")
}

// sliceLeaseName returns the name of the Lease of slice i of the ring.
func (r *Ranges) sliceLeaseName(i int) string {
	return r.shard.Ring + "-slice-" + strconv.Itoa(i)
}
