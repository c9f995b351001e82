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
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestSelectorOfMergesAdjacentSlices(t *testing.T) {
	for _, tc := range []struct {
		held []int
		n    int
		want string
	}{
		{nil, 4, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"},
		{[]int{0}, 1, "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{[]int{3, 0, 1}, 4, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"},
		{[]int{1}, 1024, "shardRange(object.metadata.uid, '0x0040000000000000', '0x0080000000000000')"},
	} {
		if got := selectorOf(tc.held, tc.n); got != tc.want {
			t.Errorf("selectorOf(%v, %d) = %s, want %s", tc.held, tc.n, got, tc.want)
		}
	}
}

var rangeTerm = regexp.MustCompile(`shardRange\(object\.metadata\.uid, '(0x[0-9a-f]+)', '(0x[0-9a-f]+)'\)`)

// SliceOf and the selector agree with the hash the API server matches a shard selector with
// (k8s.io/apimachinery/pkg/sharding): an object is in a held slice exactly when the selector
// of the held slices matches its uid.
func TestSliceOfAgreesWithTheAPIServersHash(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	defer func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	}()
	for _, n := range []int{1, 2, 64, 1024} {
		r, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{Namespace: "ns", Slices: n})
		if err != nil {
			t.Fatal(err)
		}
		held := []int{}
		for i := range n {
			if rng.IntN(2) == 0 {
				held = append(held, i)
			}
		}
		var reqs []apisharding.ShardRangeRequirement
		for _, m := range rangeTerm.FindAllStringSubmatch(selectorOf(held, n), -1) {
			reqs = append(reqs, apisharding.ShardRangeRequirement{Key: uidKey, Start: m[1], End: m[2]})
		}
		for range 2000 {
			uid := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&0xffffffffffff)
			hash := "0x" + apisharding.HashField(uid)
			matched := slices.ContainsFunc(reqs, func(q apisharding.ShardRangeRequirement) bool {
				return !apisharding.HexLess(hash, q.Start) && apisharding.HexLess(hash, q.End)
			})
			if in := slices.Contains(held, r.SliceOf(uid)); in != matched || (len(held) == 0 && matched) {
				t.Fatalf("%d slices: uid %s (hash %s) is in slice %d, held %t, but the selector matches it: %t", n, uid, hash, r.SliceOf(uid), in, matched)
			}
		}
	}
}

func TestAssignSlicesIsBalancedAndTheSameForEveryShard(t *testing.T) {
	members := []string{"shard-c", "shard-a", "shard-b"}
	a := assignSlices(64, members)
	b := assignSlices(64, []string{"shard-a", "shard-b", "shard-c"})
	if !slices.Equal(a, b) {
		t.Fatalf("the assignment depends on the order of the members:\n%v\n%v", a, b)
	}
	count := map[string]int{}
	for _, m := range a {
		count[m]++
	}
	if len(count) != 3 || slices.Max(mapsValues(count))-slices.Min(mapsValues(count)) > 1 {
		t.Errorf("unbalanced: %v", count)
	}
	// A fourth shard joining takes slices from the others and moves few between them.
	d := assignSlices(64, append(members, "shard-d"))
	moved := 0
	for i := range d {
		if d[i] != a[i] && d[i] != "shard-d" {
			moved++
		}
	}
	if moved > 64/4 {
		t.Errorf("%d slices moved between the old shards when one joined: %v -> %v", moved, a, d)
	}
	if got := assignSlices(4, nil); strings.Join(got, "") != "" {
		t.Errorf("with no members: %v", got)
	}
}

func mapsValues(m map[string]int) []int {
	out := make([]int, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestNewRangesNamesWhatIsWrong(t *testing.T) {
	_, err := NewRanges(Shard{}, RangeOptions{Namespace: "Team_A", Slices: 3, Period: -1})
	want := []string{"the shard has no ring or name", `the Leases' namespace "Team_A" is not a namespace's name`,
		"the number of slices 3 is not a power of two from 1 to 1024", "the period -1ns is negative"}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("NewRanges: %v; want it to say %q", err, w)
		}
	}
	if _, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{}); err == nil || !strings.Contains(err.Error(), "namespace is empty") {
		t.Errorf("NewRanges without a namespace: %v", err)
	}
}

// countingReconciler counts its calls.
type countingReconciler struct{ calls int }

func (c *countingReconciler) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	c.calls++
	return reconcile.Result{}, nil
}

// The reconciler runs the wrapped one on the objects of held slices only, not on a slice being
// given up, and on an object gone (to forget it).
func TestTheRangeReconcilerRunsOnHeldSlicesOnly(t *testing.T) {
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "7d3c9a52-5c1e-4b8e-9a57-3f2a1b0c9d8e"}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	r, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{Namespace: "ns", Slices: 4})
	if err != nil {
		t.Fatal(err)
	}
	inner := &countingReconciler{}
	rec, err := r.Reconciler(c, &corev1.ConfigMap{}, inner)
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}
	slice := r.SliceOf(string(cm.UID))
	steps := []struct {
		name string
		set  func()
		req  reconcile.Request
		want int
	}{
		{"a slice not held", func() {}, req, 0},
		{"a held slice", func() { r.state.take(slice) }, req, 1},
		{"a slice being given up", func() { r.state.releasing[slice] = true }, req, 1},
		{"an object gone", func() {}, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "gone"}}, 2},
	}
	for _, st := range steps {
		st.set()
		if _, err := rec.Reconcile(ctx, st.req); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if inner.calls != st.want {
			t.Errorf("%s: the wrapped reconciler ran %d times in all, want %d", st.name, inner.calls, st.want)
		}
	}
}
