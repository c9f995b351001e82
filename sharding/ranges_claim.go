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
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// SetupWithManager adds to mgr the loop that moves slices: every RangeOptions.Period, while the
// manager holds the shard's Lease, it reads the ring's Leases from the API server (not from the
// cache) and takes or gives up slices, writing the slice Leases with the manager's client,
// which [ForManager] fenced.
func (r *Ranges) SetupWithManager(mgr manager.Manager) error {
	if mgr == nil {
		return fmt.Errorf("failed to set up the ranges of shard %s: the manager is nil", r.shard)
	}
	return mgr.Add(&claimer{ranges: r, reader: mgr.GetAPIReader(), writer: mgr.GetClient()})
}

// claimer is the loop [Ranges.SetupWithManager] adds.
type claimer struct {
	ranges *Ranges
	reader client.Reader
	writer client.Client
}

// NeedLeaderElection reports true: a shard moves slices only while it holds its Lease.
func (c *claimer) NeedLeaderElection() bool { return true }

// Start moves slices until ctx ends.
func (c *claimer) Start(ctx context.Context) error {
	ticker := time.NewTicker(c.ranges.opts.Period)
	defer ticker.Stop()
	for {
		if err := c.pass(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Failed to move the shard's slices; trying again", "shard", c.ranges.shard.String())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// shardLease is what a pass knows of one shard's Lease.
type shardLease struct {
	holder   string
	renewed  time.Time
	duration time.Duration
}

// ring is what a pass read of the ring's Leases.
type ring struct {
	now    time.Time
	shards map[string]shardLease
	// slices holds each slice's Lease, nil when it does not exist yet.
	slices []*coordinationv1.Lease
}

// readRing lists the ring's Leases from the API server.
func (c *claimer) readRing(ctx context.Context) (ring, error) {
	r := c.ranges
	leases := &coordinationv1.LeaseList{}
	if err := c.reader.List(ctx, leases, client.InNamespace(r.opts.Namespace)); err != nil {
		return ring{}, fmt.Errorf("failed to list the ring's Leases: %w", err)
	}
	out := ring{now: r.opts.Clock.Now(), shards: map[string]shardLease{}, slices: make([]*coordinationv1.Lease, r.opts.Slices)}
	for i := range leases.Items {
		l := &leases.Items[i]
		switch {
		case l.Labels[RingLabel] == r.shard.Ring:
			sl := shardLease{holder: ptr.Deref(l.Spec.HolderIdentity, ""), duration: time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second}
			if l.Spec.RenewTime != nil {
				sl.renewed = l.Spec.RenewTime.Time
			}
			out.shards[l.Name] = sl
		case l.Labels[SliceRingLabel] == r.shard.Ring:
			i, err := strconv.Atoi(l.Labels[SliceLabel])
			if err == nil && i >= 0 && i < r.opts.Slices && l.Name == r.sliceLeaseName(i) {
				out.slices[i] = l
			}
		}
	}
	return out, nil
}

// members returns the shards that hold their Lease and renew it.
func (g ring) members() []string {
	var out []string
	for name, sl := range g.shards {
		if sl.holder == name && g.now.Before(sl.renewed.Add(sl.duration)) {
			out = append(out, name)
		}
	}
	return out
}

// gone reports whether shard name can no longer write: its Lease is gone, released, held by
// another identity, or not renewed for twice its duration.
func (g ring) gone(name string) bool {
	sl, ok := g.shards[name]
	return !ok || sl.holder != name || !g.now.Before(sl.renewed.Add(2*sl.duration))
}

// holder returns the holder of slice i's Lease, "" when it has none.
func (g ring) holder(i int) string {
	if l := g.slices[i]; l != nil {
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	return ""
}

// pass reads the ring's Leases once, gives up the slices another shard should hold, and takes
// those this shard should hold that are free.
func (c *claimer) pass(ctx context.Context) error {
	r := c.ranges
	g, err := c.readRing(ctx)
	if err != nil {
		return err
	}
	members := g.members()
	if !slices.Contains(members, r.shard.Name) {
		// This shard's own Lease as read is not current (it is being renewed): wait for the
		// next pass rather than hand everything to the others.
		return nil
	}
	// The caches follow what the pass changed, also when a later slice's write failed.
	defer r.state.publish(r.opts.Slices)
	for i, owner := range assignSlices(r.opts.Slices, members) {
		if err := c.move(ctx, g, i, owner); err != nil {
			return err
		}
	}
	return nil
}

// move takes slice i, gives it up or leaves it, as owner, the shard that should hold it, and
// the slice's holder in g require.
func (c *claimer) move(ctx context.Context, g ring, i int, owner string) error {
	r := c.ranges
	me := r.shard.Name
	holder := g.holder(i)
	if holder != me && r.state.drop(i) {
		// Another shard holds the slice, or nobody does: a release whose answer was lost went
		// through.
		log.FromContext(ctx).Info("Lost a slice", "shard", r.shard.String(), "slice", i, "holder", holder)
	}
	switch {
	case owner == me && holder == me:
		// Held since a pass whose write succeeded, or whose answer was lost; a release that
		// failed is taken back.
		r.state.take(i)
	case owner == me && (holder == "" || g.gone(holder)):
		if err := c.write(ctx, i, g.slices[i], me); err != nil {
			return err
		}
		r.state.take(i)
		log.FromContext(ctx).Info("Took a slice", "shard", r.shard.String(), "slice", i, "from", holder)
	case owner != me && holder == me:
		if err := r.state.release(ctx, i); err != nil {
			return err
		}
		// A failed write leaves the slice being released: no reconcile starts on it until a
		// pass reads who holds it.
		if err := c.write(ctx, i, g.slices[i], ""); err != nil {
			return err
		}
		r.state.drop(i)
		log.FromContext(ctx).Info("Gave up a slice", "shard", r.shard.String(), "slice", i, "to", owner)
	}
	return nil
}

// write sets the holder of slice i's Lease l (nil: it does not exist yet) to holder, as a
// compare-and-swap on the resourceVersion read.
func (c *claimer) write(ctx context.Context, i int, l *coordinationv1.Lease, holder string) error {
	r := c.ranges
	if l == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Namespace: r.opts.Namespace, Name: r.sliceLeaseName(i),
			Labels: map[string]string{SliceRingLabel: r.shard.Ring, SliceLabel: strconv.Itoa(i)},
		}}
		l.Spec.HolderIdentity = ptr.To(holder)
		l.Spec.AcquireTime = ptr.To(metav1.NewMicroTime(r.opts.Clock.Now()))
		if err := c.writer.Create(ctx, l); err != nil {
			return fmt.Errorf("failed to create the Lease of slice %d: %w", i, err)
		}
		return nil
	}
	l = l.DeepCopy()
	l.Spec.HolderIdentity = ptr.To(holder)
	l.Spec.AcquireTime = ptr.To(metav1.NewMicroTime(r.opts.Clock.Now()))
	if err := c.writer.Update(ctx, l); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("the Lease of slice %d changed since it was read: %w", i, err)
		}
		return fmt.Errorf("failed to write the Lease of slice %d: %w", i, err)
	}
	return nil
}

// assignSlices returns the shard that should hold each of n slices: each slice goes to the
// member that ranks it highest (rendezvous hashing of slice and shard name), unless that member
// already has its fair share (n / members, rounded up), then to the next. Every shard computes
// the same assignment from the same members, and a member joining or leaving moves few slices.
func assignSlices(n int, members []string) []string {
	out := make([]string, n)
	if len(members) == 0 {
		return out
	}
	members = slices.Sorted(slices.Values(members))
	fair := (n + len(members) - 1) / len(members)
	count := map[string]int{}
	for i := range n {
		ranked := slices.Clone(members)
		score := func(m string) uint64 {
			h := fnv.New64a()
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(i))
			_, _ = h.Write(b[:])
			_, _ = h.Write([]byte(m))
			return h.Sum64()
		}
		slices.SortStableFunc(ranked, func(a, b string) int {
			sa, sb := score(a), score(b)
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
		for _, m := range ranked {
			if count[m] < fair {
				out[i] = m
				count[m]++
				break
			}
		}
	}
	return out
}

// take records that this shard holds slice i and works on its objects.
func (s *rangeState) take(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[i] = true
	delete(s.releasing, i)
}

// release stops new reconciles on the objects of slice i and waits until none is in flight or
// ctx ends.
func (s *rangeState) release(ctx context.Context, i int) error {
	s.mu.Lock()
	s.releasing[i] = true
	for s.inFlight[i] > 0 {
		ended := s.ended
		s.mu.Unlock()
		select {
		case <-ended:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// drop records that slice i is no longer this shard's, and reports whether it was.
func (s *rangeState) drop(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.held[i]
	delete(s.held, i)
	delete(s.releasing, i)
	return was
}

// publish sets the selector of the slices held, of n, and tells the caches when it changed.
func (s *rangeState) publish(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := make([]int, 0, len(s.held))
	for i := range s.held {
		held = append(held, i)
	}
	if sel := selectorOf(held, n); sel != s.selector {
		s.selector = sel
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// begin records a reconcile of an object of slice i, unless this shard does not hold the slice
// or is giving it up: then it reports false and the reconcile must not run.
func (s *rangeState) begin(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held[i] || s.releasing[i] {
		return false
	}
	s.inFlight[i]++
	return true
}

// end records that a reconcile of an object of slice i that began returned.
func (s *rangeState) end(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight[i]--
	if s.inFlight[i] <= 0 {
		delete(s.inFlight, i)
	}
	close(s.ended)
	s.ended = make(chan struct{})
}
