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
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// claims are the slices the shard's Lease says it may work on (SlicesAnnotation), and
	// annotated whether the Lease has the annotation.
	claims    []int
	annotated bool
}

// ring is what a pass read of the ring's Leases.
type ring struct {
	now    time.Time
	shards map[string]shardLease
	// slices holds each slice's Lease, nil when it does not exist (yet, or any more).
	slices []*coordinationv1.Lease
	// foreign names, for each slice whose Lease's name is taken by a Lease that is not a slice
	// Lease of this ring, that Lease.
	foreign map[int]string
}

// readRing lists the ring's Leases from the API server.
func (c *claimer) readRing(ctx context.Context) (ring, error) {
	r := c.ranges
	leases := &coordinationv1.LeaseList{}
	if err := c.reader.List(ctx, leases, client.InNamespace(r.opts.Namespace)); err != nil {
		return ring{}, fmt.Errorf("failed to list the ring's Leases: %w", err)
	}
	out := ring{now: r.opts.Clock.Now(), shards: map[string]shardLease{}, slices: make([]*coordinationv1.Lease, r.opts.Slices), foreign: map[int]string{}}
	prefix := r.shard.Ring + "-slice-"
	for i := range leases.Items {
		l := &leases.Items[i]
		if l.Labels[RingLabel] == r.shard.Ring {
			sl := shardLease{holder: ptr.Deref(l.Spec.HolderIdentity, ""), duration: time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second}
			if l.Spec.RenewTime != nil {
				sl.renewed = l.Spec.RenewTime.Time
			}
			var annotation string
			annotation, sl.annotated = l.Annotations[SlicesAnnotation]
			sl.claims = parseSlices(annotation)
			out.shards[l.Name] = sl
		}
		suffix, ok := strings.CutPrefix(l.Name, prefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(suffix)
		if err != nil || i < 0 || i >= r.opts.Slices || strconv.Itoa(i) != suffix {
			continue
		}
		if l.Labels[SliceRingLabel] == r.shard.Ring && l.Labels[SliceLabel] == suffix {
			out.slices[i] = l
		} else {
			out.foreign[i] = l.Name
		}
	}
	return out, nil
}

// parseSlices reads a SlicesAnnotation's value, "0,5,6"; what is not a slice's index is left out.
func parseSlices(v string) []int {
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		if i, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// formatSlices writes a SlicesAnnotation's value.
func formatSlices(held []int) string {
	held = slices.Sorted(slices.Values(held))
	parts := make([]string, len(held))
	for i, h := range held {
		parts[i] = strconv.Itoa(h)
	}
	return strings.Join(parts, ",")
}

// members returns the shards that hold their Lease and renew it, and me, which the loop runs
// in only while it holds its Lease (its renewal as read may lag, and its clock is its own).
func (g ring) members(me string) []string {
	out := []string{me}
	for name, sl := range g.shards {
		if name != me && sl.holder == name && g.now.Before(sl.renewed.Add(sl.duration)) {
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

// holder returns the holder of slice i's Lease, "" when it has none or does not exist.
func (g ring) holder(i int) string {
	if l := g.slices[i]; l != nil {
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	return ""
}

// claimedByOther reports whether a shard other than me that can still write claims slice i.
func (g ring) claimedByOther(i int, me string) bool {
	for name, sl := range g.shards {
		if name != me && slices.Contains(sl.claims, i) && !g.gone(name) {
			return true
		}
	}
	return false
}

// pass reads the ring's Leases once and moves slices:
//
//  1. it stops new reconciles on the slices it gives up (another shard should hold them, or
//     another shard took them) and waits for those in flight;
//  2. it writes, into its own Lease's SlicesAnnotation, the slices it keeps and those it is
//     about to take, so that no shard takes them, even if their slice Lease is deleted;
//  3. it clears the holder of the slice Leases it gave up, takes the free slices it should
//     hold (no holder, or a holder that is gone, and claimed by no shard that is not gone),
//     and writes itself back as the holder of a slice it keeps whose Lease lost its holder.
//
// An error on one slice does not stop the others; the pass returns them all.
func (c *claimer) pass(ctx context.Context) error {
	r := c.ranges
	me := r.shard.Name
	g, err := c.readRing(ctx)
	if err != nil {
		return err
	}
	// The caches follow what the pass changed, also when some of it failed.
	defer r.state.publish(r.opts.Slices)
	release, take, keep, errs := c.plan(g)
	for _, i := range release {
		if err := r.state.release(ctx, i); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	if err := c.claim(ctx, g, append(slices.Clone(keep), take...)); err != nil {
		// Nothing is released or taken without the claims written first.
		return errors.Join(append(errs, err)...)
	}
	for _, i := range release {
		if g.holder(i) == me {
			if err := c.write(ctx, i, g.slices[i], ""); err != nil {
				errs = append(errs, err)
			}
		}
		r.state.drop(i)
		log.FromContext(ctx).Info("Gave up a slice", "shard", r.shard.String(), "slice", i, "holder", g.holder(i))
	}
	for _, i := range keep {
		if g.holder(i) == "" {
			// Its Lease was deleted or cleared by someone else: this shard still works on it.
			if err := c.write(ctx, i, g.slices[i], me); err != nil {
				errs = append(errs, err)
			}
		}
		r.state.take(i)
	}
	for _, i := range take {
		if err := c.write(ctx, i, g.slices[i], me); err != nil {
			errs = append(errs, err)
			continue
		}
		r.state.take(i)
		log.FromContext(ctx).Info("Took a slice", "shard", r.shard.String(), "slice", i, "from", g.holder(i))
	}
	return errors.Join(errs...)
}

// plan sorts the slices for a pass over g: those this shard gives up, those it takes and those
// it keeps; and the slices it can do nothing with.
func (c *claimer) plan(g ring) (release, take, keep []int, errs []error) {
	r := c.ranges
	me := r.shard.Name
	for i, owner := range assignSlices(r.opts.Slices, g.members(me)) {
		holder := g.holder(i)
		// A slice this shard works on, or whose Lease still names it (a release whose write
		// failed).
		mine := r.state.holds(i) || holder == me
		switch {
		case g.foreign[i] != "":
			errs = append(errs, fmt.Errorf("slice %d: Lease %s exists and is not a slice Lease of ring %s", i, g.foreign[i], r.shard.Ring))
			if mine {
				release = append(release, i)
			}
		case mine && (owner != me || (holder != me && holder != "")):
			release = append(release, i)
		case mine:
			keep = append(keep, i)
		case owner == me && (holder == "" || g.gone(holder)) && !g.claimedByOther(i, me):
			take = append(take, i)
		}
	}
	return release, take, keep, errs
}

// claim writes claims into this shard's Lease as its SlicesAnnotation, unless it holds them
// already.
func (c *claimer) claim(ctx context.Context, g ring, claims []int) error {
	r := c.ranges
	value := formatSlices(claims)
	if own := g.shards[r.shard.Name]; own.annotated && formatSlices(own.claims) == value {
		return nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{SlicesAnnotation: value}}})
	if err != nil {
		return fmt.Errorf("failed to encode the shard's slices: %w", err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.opts.Namespace, Name: r.shard.Name}}
	if err := c.writer.Patch(ctx, lease, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("failed to write the shard's slices into its Lease: %w", err)
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

// holds reports whether this shard holds slice i (and may be giving it up).
func (s *rangeState) holds(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[i]
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
