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

package sharder

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// keys returns n hash keys of main objects, in a handful of namespaces.
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ringKey("apps", "Deployment", fmt.Sprintf("team-%d", i%7), fmt.Sprintf("web-%d", i))
	}
	return out
}

func TestTheRingDoesNotDependOnTheOrderOfShards(t *testing.T) {
	g := NewWithT(t)
	a := newRing([]string{"shard-a", "shard-b", "shard-c"})
	b := newRing([]string{"shard-c", "shard-a", "shard-b"})
	for _, k := range keys(10000) {
		g.Expect(b.shardFor(k)).To(Equal(a.shardFor(k)), "key %s", k)
	}
}

// The reference sharder's ring (its consistenthash package, run on these keys) places them on
// these shards; a change of the hash would also move the objects of every test that ran before.
func TestTheRingPlacesKeysWhereTheReferenceSharderDoes(t *testing.T) {
	g := NewWithT(t)
	r := newRing([]string{"shard-0", "shard-1", "shard-2"})
	got := map[string]string{}
	for _, k := range []string{"/ConfigMap/default/web", "/ConfigMap/default/db", "apps/Deployment/team-a/api", "apps/Deployment/team-b/api"} {
		got[k] = r.shardFor(k)
	}
	g.Expect(got).To(Equal(map[string]string{
		"/ConfigMap/default/web":     "shard-0",
		"/ConfigMap/default/db":      "shard-1",
		"apps/Deployment/team-a/api": "shard-2",
		"apps/Deployment/team-b/api": "shard-2",
	}))
}

func TestTheRingSpreadsKeysEvenly(t *testing.T) {
	for _, n := range []int{2, 3, 5, 10} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			g := NewWithT(t)
			var shards []string
			for i := range n {
				shards = append(shards, fmt.Sprintf("operator-7d9f8-%d", i))
			}
			r := newRing(shards)
			const total = 30000
			count := map[string]int{}
			for _, k := range keys(total) {
				count[r.shardFor(k)]++
			}
			g.Expect(count).To(HaveLen(n))
			fair := float64(total) / float64(n)
			for shard, c := range count {
				g.Expect(float64(c)).To(BeNumerically("~", fair, fair*0.25), "shard %s has %d of %d keys", shard, c, total)
			}
		})
	}
}

func TestAddingAShardMovesKeysOnlyToIt(t *testing.T) {
	g := NewWithT(t)
	before := newRing([]string{"shard-a", "shard-b", "shard-c"})
	after := newRing([]string{"shard-a", "shard-b", "shard-c", "shard-d"})
	const total = 20000
	moved := 0
	for _, k := range keys(total) {
		if from, to := before.shardFor(k), after.shardFor(k); from != to {
			g.Expect(to).To(Equal("shard-d"), "key %s moved from %s to %s", k, from, to)
			moved++
		}
	}
	// A fair ring moves a quarter of the keys to the fourth shard.
	g.Expect(float64(moved) / total).To(BeNumerically("~", 0.25, 0.1))
}

func TestRemovingAShardMovesOnlyItsKeys(t *testing.T) {
	g := NewWithT(t)
	before := newRing([]string{"shard-a", "shard-b", "shard-c"})
	after := newRing([]string{"shard-a", "shard-c"})
	for _, k := range keys(20000) {
		if from := before.shardFor(k); from != "shard-b" {
			g.Expect(after.shardFor(k)).To(Equal(from), "key %s", k)
		}
	}
}

func TestAnEmptyRingHasNoShardForAKey(t *testing.T) {
	NewWithT(t).Expect(newRing(nil).shardFor("/ConfigMap/default/web")).To(BeEmpty())
}

func TestHashKey(t *testing.T) {
	main := kind{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
	controlled := kind{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, controlled: true}
	object := func(refs ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-6f7d", OwnerReferences: refs}}
	}
	controller := func(apiVersion, kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "1", Controller: ptr.To(true)}
	}
	for _, tc := range []struct {
		name    string
		kind    kind
		obj     *metav1.PartialObjectMetadata
		want    string
		wantErr string
	}{
		{name: "a main object is keyed by its own group, kind, namespace and name", kind: main, obj: object(), want: "apps/Deployment/team-a/web-6f7d"},
		{name: "a main object's owners do not matter", kind: main, obj: object(controller("apps/v1", "Deployment", "web")), want: "apps/Deployment/team-a/web-6f7d"},
		{name: "a controlled object is keyed by its controller", kind: controlled,
			obj: object(controller("apps/v1", "Deployment", "web")), want: "apps/Deployment/team-a/web"},
		{name: "a controller of the core group has an empty group", kind: controlled,
			obj: object(controller("v1", "ConfigMap", "web")), want: "/ConfigMap/team-a/web"},
		{name: "an owner that is not the controller does not count", kind: controlled,
			obj: object(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "1"}), want: ""},
		{name: "a controlled object without a controller has no key", kind: controlled, obj: object(), want: ""},
		{name: "a controller reference without a kind is an error", kind: controlled,
			obj: object(controller("apps/v1", "", "web")), wantErr: "controller reference"},
		{name: "a controller reference with an invalid apiVersion is an error", kind: controlled,
			obj: object(controller("apps/v1/x", "Deployment", "web")), wantErr: "controller reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := hashKey(tc.kind, tc.obj)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
