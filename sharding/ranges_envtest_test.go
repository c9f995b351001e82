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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// rangeSlices is how many slices the rings sharded by the API server have in these tests.
const rangeSlices = 8

// rangeObjects creates n main ConfigMaps in ns and returns the slice of each, by name.
func rangeObjects(t *testing.T, ns string, n int, ranges *sharding.Ranges) map[string]int {
	t.Helper()
	out := make(map[string]int, n)
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("object-%d", i)}}
		if err := env.Client().Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		out[cm.Name] = ranges.SliceOf(string(cm.UID))
	}
	return out
}

// writtenBy checks that each object in ns was last written by the shard want returns for its
// slice.
func writtenBy(ctx context.Context, g Gomega, ns string, slices map[string]int, want func(slice int) string) {
	for name, slice := range slices {
		cm := &corev1.ConfigMap{}
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
		g.Expect(cm.Annotations["test.tenon.dev/written-by"]).To(Equal(want(slice)), "%s (slice %d)", name, slice)
	}
}

// holderOf returns the shard among shards that holds slice i, or "".
func holderOf(i int, shards ...*runningShard) string {
	for _, s := range shards {
		for _, h := range s.ranges.Held() {
			if h == i {
				return s.name
			}
		}
	}
	return ""
}

// cached returns the names of the main ConfigMaps in s's cache.
func cached(ctx context.Context, g Gomega, s *runningShard, ns string) []string {
	list := &corev1.ConfigMapList{}
	g.Expect(s.cache.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "object-") {
			out = append(out, cm.Name)
		}
	}
	return out
}

// sliceViolations returns the successful writes by shards to the main ConfigMaps of ns and their
// child Secrets that no epoch of the writing shard on the object's slice covers. The epochs come
// from the audit log's successful writes to the slice Leases: an update by the slice's holder
// gives it up; an update by another shard, or a create, takes it (a create by the holder, of a
// Lease someone deleted, goes on with its epoch); after someone else wrote or deleted the
// Lease, the next shard's write takes it.
func sliceViolations(t *testing.T, events testenv.AuditEvents, ns string, slices map[string]int) []string {
	t.Helper()
	epochs := map[int][]sharder.Epoch{}
	holder := map[int]string{}
	reset := map[int]bool{}
	prefix := ring + "-slice-"
	for _, e := range events {
		if e.Resource != "leases" || e.Namespace != ns || !e.IsWrite() || e.Code >= 300 {
			continue
		}
		shard, byShard := strings.CutPrefix(e.UserAgent, "shard/")
		if !byShard {
			// Someone else's write: the whole collection, or one slice Lease.
			for i := range rangeSlices {
				if e.Name == "" || e.Name == fmt.Sprintf("%s%d", prefix, i) {
					reset[i] = true
				}
			}
			continue
		}
		index, ok := strings.CutPrefix(e.Name, prefix)
		if !ok {
			continue
		}
		var i int
		if _, err := fmt.Sscan(index, &i); err != nil {
			t.Fatalf("slice Lease %s: %v", e.Name, err)
		}
		takes := e.Verb == "create" || reset[i] || holder[i] != shard
		reset[i] = false
		if takes && holder[i] == shard {
			continue // the holder wrote back a Lease someone deleted or cleared
		}
		if es := epochs[i]; len(es) > 0 && es[len(es)-1].End.IsZero() {
			es[len(es)-1].End = e.Received
		}
		if !takes {
			holder[i] = ""
			continue
		}
		holder[i] = shard
		epochs[i] = append(epochs[i], sharder.Epoch{Shard: shard, Start: e.Received})
	}
	var out []string
	for _, e := range events {
		shard, ok := strings.CutPrefix(e.UserAgent, "shard/")
		if !ok || e.Namespace != ns || !e.IsWrite() || e.Code >= 300 {
			continue
		}
		name := e.Name
		switch e.Resource {
		case "configmaps":
		case "secrets":
			name = strings.TrimSuffix(name, "-child")
		default:
			continue
		}
		slice, ok := slices[name]
		if !ok {
			continue
		}
		if !sharder.Covered(epochs[slice], shard, e.Received) {
			out = append(out, fmt.Sprintf("%s %s %s by %s, received %s; epochs of slice %d: %v",
				e.Verb, e.Resource, e.Name, shard, e.Received.Format(time.RFC3339Nano), slice, epochs[slice]))
		}
	}
	return out
}

// In a ring the API server shards, a shard alone holds every slice; a second one joining takes
// half of them, each given up after the first shard's reconciles of its objects returned; the
// first stopping hands the rest over. Each shard's cache holds the objects of its slices only,
// selected by the API server, and no object is written by a shard outside its slice's epochs.
func TestARingShardedByTheAPIServerHandsSlicesOverWithoutTwoWriters(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	start := mark(t)
	opts := &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond}
	// Reconciles that spend their time between read and write are in flight at every handover.
	a := startShard(t, ns, "shard-a", shardOptions{latency: 150 * time.Millisecond, ranges: opts})
	slices := rangeObjects(t, ns, 24, a.ranges)
	g.Eventually(func(g Gomega) {
		g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices))
		writtenBy(ctx, g, ns, slices, func(int) string { return "shard-a" })
	}).WithTimeout(30 * time.Second).Should(Succeed())

	b := startShard(t, ns, "shard-b", shardOptions{ranges: opts})
	g.Eventually(func(g Gomega) {
		g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices / 2))
		g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices / 2))
		writtenBy(ctx, g, ns, slices, func(i int) string { return holderOf(i, a, b) })
		// The API server selected each cache: it holds the objects of the shard's slices only.
		for _, s := range []*runningShard{a, b} {
			var want []string
			for name, slice := range slices {
				if holderOf(slice, s) == s.name {
					want = append(want, name)
				}
			}
			g.Expect(cached(ctx, g, s, ns)).To(ConsistOf(want), "the cache of %s", s.name)
		}
	}).WithTimeout(60 * time.Second).Should(Succeed())

	a.stop()
	g.Expect(<-a.done).To(Succeed(), "shard-a did not stop cleanly")
	a.done <- nil // for the cleanup
	g.Eventually(func(g Gomega) {
		g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices))
		writtenBy(ctx, g, ns, slices, func(int) string { return "shard-b" })
		g.Expect(cached(ctx, g, b, ns)).To(HaveLen(len(slices)))
	}).WithTimeout(60 * time.Second).Should(Succeed())
	end := mark(t)
	g.Expect(sliceViolations(t, between(t, start, end), ns, slices)).To(BeEmpty())
}

// A shard whose Lease renewals stall loses its slices to the others once its Lease went
// unrenewed for twice its duration by the taker's clock; its fence closed before that, so its
// reconciles in flight write nothing after the takeover, also with the taker's clock ahead
// within the bound. Past the bound, or without the fence (the negative controls), they do, and
// the checker must see it.
func TestARingShardedByTheAPIServerTakesAStalledShardsSlicesOver(t *testing.T) {
	// The taker judges the stalled shard's Lease by its own clock, which may be ahead by less
	// than leaseDuration + margin (the package documentation's bound).
	takeoverCases(t, "the taker's clock", rangeTakeover)
}

// rangeTakeover runs shards a and b of a ring the API server shards, b's clock ahead by skew,
// stalls a's renewals until b holds every slice and wrote every object, and returns the writes
// outside their writer's epochs.
func rangeTakeover(t *testing.T, g Gomega, skew time.Duration, unfenced bool) []string {
	t.Helper()
	ctx := t.Context()
	ns := env.Namespace(t)
	start := mark(t)
	opts := &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond}
	a := startShard(t, ns, "shard-a", shardOptions{latency: 150 * time.Millisecond, unfenced: unfenced, ranges: opts})
	clk := &skewedClock{}
	b := startShard(t, ns, "shard-b", shardOptions{ranges: &sharding.RangeOptions{Slices: rangeSlices, Period: 200 * time.Millisecond, Clock: clk}})
	slices := rangeObjects(t, ns, 16, a.ranges)
	g.Eventually(func(g Gomega) {
		g.Expect(a.ranges.Held()).To(HaveLen(rangeSlices / 2))
		g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices / 2))
		writtenBy(ctx, g, ns, slices, func(i int) string { return holderOf(i, a, b) })
	}).WithTimeout(60 * time.Second).Should(Succeed())

	clk.skew(skew)
	a.stall.start()
	g.Eventually(func(g Gomega) {
		g.Expect(b.ranges.Held()).To(HaveLen(rangeSlices))
		writtenBy(ctx, g, ns, slices, func(int) string { return "shard-b" })
	}).WithTimeout(60 * time.Second).Should(Succeed())
	end := mark(t)
	return sliceViolations(t, between(t, start, end), ns, slices)
}
