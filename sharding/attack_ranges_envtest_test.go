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

package sharding_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/sharding"
)

// expectCachesFollowSlices checks that each shard's cache holds exactly the objects of the
// slices it holds, as the API server selected them.
func expectCachesFollowSlices(ctx context.Context, g Gomega, ns string, slices map[string]int, shards ...*runningShard) {
	for _, s := range shards {
		want := []string{}
		for name, slice := range slices {
			if holderOf(slice, s) == s.name {
				want = append(want, name)
			}
		}
		g.Expect(cached(ctx, g, s, ns)).To(ConsistOf(want), "the cache of %s (slices %v)", s.name, s.ranges.Held())
	}
}

// Passes: pins five shards joining a ring of four slices at once (one of them, left without a
// slice, caches no object: its selector selects nothing real), then three leaving at the same
// moment: the slices end balanced over the two left, every cache converges to the objects of
// its shard's slices, and no object is written outside its writer's slice epochs.
func TestAttackRangesShardsJoiningAndLeavingAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	start := mark(t)
	const n = 4
	opts := &sharding.RangeOptions{Slices: n, Period: 200 * time.Millisecond}
	var shards []*runningShard
	for _, name := range []string{"shard-a", "shard-b", "shard-c", "shard-d", "shard-e"} {
		shards = append(shards, startShard(t, ns, name, shardOptions{latency: 100 * time.Millisecond, ranges: opts}))
	}
	slices := rangeObjects(t, ns, 24, shards[0].ranges)
	g.Eventually(func(g Gomega) {
		total, empty := 0, 0
		for _, s := range shards {
			h := len(s.ranges.Held())
			g.Expect(h).To(BeNumerically("<=", 1), "%s holds %v", s.name, s.ranges.Held())
			total += h
			if h == 0 {
				empty++
			}
		}
		g.Expect(total).To(Equal(n))
		g.Expect(empty).To(Equal(1))
		writtenBy(ctx, g, ns, slices, func(i int) string { return holderOf(i, shards...) })
		expectCachesFollowSlices(ctx, g, ns, slices, shards...)
	}).WithTimeout(40 * time.Second).Should(Succeed())

	// Three leave at the same moment, among them the one without a slice.
	var leaving, staying []*runningShard
	for _, s := range shards {
		if len(s.ranges.Held()) == 0 || len(leaving) < 2 {
			leaving = append(leaving, s)
		} else {
			staying = append(staying, s)
		}
	}
	if len(leaving) == 2 { // the empty one was among the first two
		leaving, staying = append(leaving, staying[0]), staying[1:]
	}
	for _, s := range leaving {
		s.stop()
	}
	for _, s := range leaving {
		g.Expect(<-s.done).To(Succeed(), "%s did not stop cleanly", s.name)
		s.done <- nil
	}
	g.Eventually(func(g Gomega) {
		for _, s := range staying {
			g.Expect(s.ranges.Held()).To(HaveLen(n/len(staying)), "%s", s.name)
		}
		writtenBy(ctx, g, ns, slices, func(i int) string { return holderOf(i, staying...) })
		expectCachesFollowSlices(ctx, g, ns, slices, staying...)
	}).WithTimeout(40 * time.Second).Should(Succeed())
	end := mark(t)
	g.Expect(sliceViolations(t, between(t, start, end), ns, slices)).To(BeEmpty())
}

// Slice Leases deleted by someone else while their holder works on them: the holder's own
// Lease still lists the slices it works on (sharding.SlicesAnnotation), so a shard that joins
// takes none of them while the holder's Lease is current, though no slice Lease says so. When
// the holder reads the ring again it writes the Leases back and hands half of the slices over as
// usual. No object is written outside its slice's epochs either way.
func TestADeletedSliceLeaseIsNotAFreeSlice(t *testing.T) {
	for _, tc := range []struct {
		name string
		// period is the holder's: 10 minutes keeps it from reading the ring during the test.
		period time.Duration
	}{
		{name: "the holder does not read the ring again", period: 10 * time.Minute},
		{name: "the holder reads the ring again", period: 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			start := mark(t)
			a := startShard(t, ns, "shard-a", shardOptions{latency: 100 * time.Millisecond,
				ranges: &sharding.RangeOptions{Slices: rangeSlices, Period: tc.period}})
			slices := rangeObjects(t, ns, 24, a.ranges)
			g.Eventually(func(g Gomega) {
				g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices))
				writtenBy(ctx, g, ns, slices, func(int) string { return "shard-a" })
			}).WithTimeout(30 * time.Second).Should(Succeed())
			g.Expect(env.Client().DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(ns),
				client.MatchingLabels{sharding.SliceRingLabel: ring})).To(Succeed())
			b := startShard(t, ns, "shard-b", shardOptions{ranges: &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond}})
			if tc.period > time.Minute {
				g.Consistently(b.ranges.Held).WithTimeout(3*time.Second).Should(BeEmpty(), "shard-b took slices shard-a's Lease lists")
			} else {
				g.Eventually(func(g Gomega) {
					g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices / 2))
					g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices / 2))
					writtenBy(ctx, g, ns, slices, func(i int) string { return holderOf(i, a, b) })
				}).WithTimeout(60 * time.Second).Should(Succeed())
			}
			end := mark(t)
			if v := sliceViolations(t, between(t, start, end), ns, slices); len(v) > 0 {
				t.Fatalf("%d writes outside the writer's slice epochs, the first: %q", len(v), v[:min(4, len(v))])
			}
		})
	}
}

// An object deleted and created again under its name while a reconcile of the old one is in
// flight on shard-a: the new object has a new uid, in a slice shard-b holds. The check of the
// slice is made on the object the reconcile read; a write addressed by name alone lands on
// whatever object has the name, which is why the Reconciler's documentation requires writes of
// the main object to be conditional on its uid (patch.Helper's are). With that condition
// shard-a's late write is refused; without it (the negative control) it lands on shard-b's
// object, and the check must see it.
func TestAnObjectRecreatedDuringAReconcileIsWrittenOnlyByItsSlicesShard(t *testing.T) {
	for _, tc := range []struct {
		name    string
		guarded bool
	}{
		{name: "writes conditional on the uid", guarded: true},
		{name: "writes by name alone (negative control)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attempts := 1
			if !tc.guarded {
				attempts = 3
			}
			var found []string
			for range attempts {
				if found = recreateDuringAReconcile(t, tc.guarded); len(found) > 0 {
					break
				}
			}
			if tc.guarded {
				if len(found) > 0 {
					t.Fatalf("shard-a wrote the object created again in shard-b's slice: %v", found)
				}
				return
			}
			if len(found) == 0 {
				t.Fatalf("the check missed shard-a's write by name of the object created again, %d times", attempts)
			}
		})
	}
}

// recreateDuringAReconcile creates an object in a slice of shard-a, deletes it and creates it again
// in a slice of shard-b while a reconcile of shard-a is in flight, and returns shard-a's
// successful writes of the new object (and its child).
func recreateDuringAReconcile(t *testing.T, guarded bool) []string {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	opts := &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond}
	// shard-a's reconciles spend a second between their read and their writes.
	a := startShard(t, ns, "shard-a", shardOptions{latency: time.Second, ranges: opts, guarded: guarded})
	b := startShard(t, ns, "shard-b", shardOptions{ranges: opts, guarded: guarded})
	g.Eventually(func(g Gomega) {
		g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices / 2))
		g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices / 2))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// create makes the object "victim" again until its uid lands in a slice of want.
	create := func(want *runningShard) *corev1.ConfigMap {
		for attempt := 0; ; attempt++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "object-victim"}}
			g.Expect(env.Client().Create(ctx, cm)).To(Succeed())
			if holderOf(a.ranges.SliceOf(string(cm.UID)), a, b) == want.name {
				return cm
			}
			g.Expect(attempt).To(BeNumerically("<", 64), "no uid landed in a slice of %s", want.name)
			g.Expect(env.Client().Delete(ctx, cm, client.Preconditions{UID: &cm.UID})).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
			}).Should(BeTrue())
		}
	}
	old := create(a)
	g.Eventually(func(g Gomega) {
		writtenBy(ctx, g, ns, map[string]int{old.Name: 0}, func(int) string { return "shard-a" })
	}).WithTimeout(30 * time.Second).Should(Succeed())
	// shard-a writes the object every second and a bit: wait for one of its writes, so that
	// its next reconcile is in flight, reading the old object.
	cur := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(old), cur)).To(Succeed())
	at := cur.Annotations["test.tenon.dev/at"]
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(old), cur)).To(Succeed())
		g.Expect(cur.Annotations["test.tenon.dev/at"]).NotTo(Equal(at))
	}).WithTimeout(10 * time.Second).Should(Succeed())
	// The next reconcile reads the old object 20 ms after that write and writes a second later:
	// delete and create the object in between.
	g.Consistently(func() bool { return true }).WithTimeout(300 * time.Millisecond).Should(BeTrue())
	g.Expect(env.Client().Delete(ctx, old, client.Preconditions{UID: &old.UID})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(old), &corev1.ConfigMap{}))
	}).Should(BeTrue())
	recreated := mark(t)
	fresh := create(b)
	g.Eventually(func(g Gomega) {
		writtenBy(ctx, g, ns, map[string]int{fresh.Name: 0}, func(int) string { return "shard-b" })
	}).WithTimeout(30 * time.Second).Should(Succeed())
	// Long enough for shard-a's reconcile in flight to have written.
	g.Consistently(func() bool { return true }).WithTimeout(1500 * time.Millisecond).Should(BeTrue())
	end := mark(t)
	events := between(t, recreated, end)
	// The new object's create: the last successful one of its name.
	var createdAt time.Time
	for _, e := range events {
		if e.Verb == "create" && e.Resource == "configmaps" && e.Namespace == ns && e.Name == fresh.Name && e.Code < 300 {
			createdAt = e.Received
		}
	}
	g.Expect(createdAt).NotTo(BeZero(), "the audit log has no create of the new object")
	var found []string
	for _, e := range events {
		if e.Received.After(createdAt) && e.UserAgent == "shard/shard-a" && e.IsWrite() && e.Code < 300 && e.Namespace == ns &&
			(e.Name == fresh.Name || e.Name == fresh.Name+"-child") {
			found = append(found, fmt.Sprintf("%s %s %s by shard-a at %s", e.Verb, e.Resource, e.Name, e.Received.Format(time.RFC3339Nano)))
		}
	}
	return found
}

// aheadClock is the real clock, ahead by a fixed offset.
type aheadClock struct{ by time.Duration }

func (c aheadClock) Now() time.Time                  { return time.Now().Add(c.by) }
func (c aheadClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var _ clock.PassiveClock = aheadClock{}

// RangeOptions.Clock is "the clock by which the shard judges the other shards' Leases", and the
// package documents that a shard's clock may be ahead of the others' by up to leaseDuration +
// margin (3.6 s here). A shard alone in its ring, its Clock ahead by 3.2 s, within that bound,
// must still take the slices.
// (Found by an attack: the pass judged the shard's own Lease by Clock too, while its renewTime
// comes from the leader election's clock, and the shard never counted itself a member. A shard
// now counts itself a member: its loop runs only while it holds its Lease.)
func TestAttackRangesAShardWhoseClockIsAheadWithinTheBoundTakesSlices(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	skew := leaseDuration + margin - 400*time.Millisecond
	a := startShard(t, ns, "shard-a", shardOptions{ranges: &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond, Clock: aheadClock{skew}}})
	g.Eventually(a.ranges.Held).WithTimeout(8*time.Second).Should(HaveLen(rangeSlices),
		"a shard alone, its Clock ahead by %s (the bound is %s), took no slice", skew, leaseDuration+margin)
}
