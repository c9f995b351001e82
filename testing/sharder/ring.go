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
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tokensPerShard is the number of virtual nodes each shard has on the ring.
const tokensPerShard = 100

// token is one virtual node: a position on the ring and the shard it belongs to.
type token struct {
	hash  uint64
	shard string
}

// ring is a consistent hash ring over shards: a key belongs to the shard of the first token at or
// after the key's hash, wrapping around at the end.
//
// It hashes as the reference sharder does (xxhash64; a shard's tokens are the hashes of its name
// followed by 0..99; a key's position is its hash), so that a key lands on the same shard in both.
// A ring is immutable; a new set of shards builds a new ring.
type ring struct {
	tokens []token
}

// newRing returns the ring of shards. The order of shards does not matter.
func newRing(shards []string) *ring {
	r := &ring{tokens: make([]token, 0, len(shards)*tokensPerShard)}
	for _, shard := range shards {
		for i := range tokensPerShard {
			r.tokens = append(r.tokens, token{hash: xxhash.Sum64String(shard + strconv.Itoa(i)), shard: shard})
		}
	}
	// Ties between the tokens of two shards (a 64-bit collision) go to the smaller name, so that
	// the ring does not depend on the order of shards.
	slices.SortFunc(r.tokens, func(a, b token) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), strings.Compare(a.shard, b.shard))
	})
	return r
}

// shardFor returns the shard that key belongs to, or "" when the ring has no shards.
func (r *ring) shardFor(key string) string {
	if len(r.tokens) == 0 {
		return ""
	}
	h := xxhash.Sum64String(key)
	i, _ := slices.BinarySearchFunc(r.tokens, h, func(t token, h uint64) int { return cmp.Compare(t.hash, h) })
	if i == len(r.tokens) {
		i = 0
	}
	return r.tokens[i].shard
}

// ShardFor returns the shard of shards that the sharder places the object of kind at key on,
// and with it every object that object controls: the same ring the sharder builds from its
// available shards, so a test can choose names that reach a given shard or know which shard a
// drain will move an object to. It returns "" when shards is empty; the order of shards does
// not matter.
func ShardFor(shards []string, kind schema.GroupKind, key client.ObjectKey) string {
	return newRing(shards).shardFor(ringKey(kind.Group, kind.Kind, key.Namespace, key.Name))
}

// hashKey returns the key of obj on the ring: its own group, kind, namespace and name for a main
// kind, those of its controller for a controlled kind, and "" for a controlled object without a
// controller, which is not assigned.
func hashKey(k kind, obj *metav1.PartialObjectMetadata) (string, error) {
	if !k.controlled {
		return ringKey(k.gvk.Group, k.gvk.Kind, obj.Namespace, obj.Name), nil
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return "", nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.APIVersion == "" || ref.Kind == "" || ref.Name == "" {
		return "", fmt.Errorf("failed to assign %s %s: its controller reference %s %s %q names no owner",
			k.gvk.Kind, client.ObjectKeyFromObject(obj), ref.APIVersion, ref.Kind, ref.Name)
	}
	return ringKey(gv.Group, ref.Kind, obj.Namespace, ref.Name), nil
}

// ringKey is the reference sharder's key of an object: only what an owner reference also holds,
// so that an owner and the objects it controls have one key.
func ringKey(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}
