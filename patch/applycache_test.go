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
	"fmt"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestApplyCacheKeepsRecentEntriesWithinItsSize(t *testing.T) {
	g := NewWithT(t)
	c := newApplyCache(4)
	key := func(i int) applyKey {
		return applyKey{gvk: schema.GroupVersionKind{Kind: "ConfigMap"}, name: string(rune('a' + i))}
	}
	for i := range 10 {
		c.put(key(i), applyRecord{resourceVersion: string(rune('0' + i))})
		// Entry 0 is used all the time and stays.
		_, ok := c.get(key(0))
		g.Expect(ok).To(BeTrue(), "after put %d", i)
	}
	_, ok := c.get(key(1))
	g.Expect(ok).To(BeFalse(), "an entry not used for a while is dropped")
	r, ok := c.get(key(9))
	g.Expect(ok).To(BeTrue())
	g.Expect(r.resourceVersion).To(Equal("9"))
	g.Expect(len(c.cur) + len(c.old)).To(BeNumerically("<=", 4))

	c.forget(func(k applyKey) bool { return k == key(9) })
	_, ok = c.get(key(9))
	g.Expect(ok).To(BeFalse())
}

// TestAGrowingApplyCacheFitsTheObjectsAppliedAgain drives the Applier's default cache as a
// controller's reconciles do: every object applied once per round, round after round, with the
// cache asked first and, on a miss of an object applied before, told so (the Applier finds its
// managedFields entry). Once the objects outgrow the starting size, the cache grows until every
// round hits; objects applied once and never again (churn) do not make it grow.
func TestAGrowingApplyCacheFitsTheObjectsAppliedAgain(t *testing.T) {
	key := func(i int) applyKey {
		return applyKey{gvk: schema.GroupVersionKind{Kind: "ConfigMap"}, namespace: "ns", name: strconv.Itoa(i)}
	}
	round := func(c *applyCache, from, n int, appliedBefore bool) (misses int) {
		for i := from; i < from+n; i++ {
			if _, ok := c.get(key(i)); !ok {
				misses++
				if appliedBefore {
					c.missedApplied()
				}
			}
			c.put(key(i), applyRecord{resourceVersion: "1"})
		}
		return misses
	}
	size := func(c *applyCache) int { return len(c.cur) + len(c.old) }

	for _, objects := range []int{1000, 5000, 6000, 50000} {
		t.Run(fmt.Sprintf("%d objects", objects), func(t *testing.T) {
			g := NewWithT(t)
			c := newGrowingApplyCache(defaultApplyCacheSize)
			round(c, 0, objects, false) // the first apply of each
			var misses []int
			for range 6 {
				misses = append(misses, round(c, 0, objects, true))
			}
			g.Expect(misses[len(misses)-1]).To(BeZero(), "misses per round: %v (limit %d)", misses, c.limit)
			g.Expect(size(c)).To(BeNumerically("<=", max(4*objects, defaultApplyCacheSize)), "limit %d", c.limit)
		})
	}

	t.Run("a pass over many objects, then few", func(t *testing.T) {
		g := NewWithT(t)
		c := newGrowingApplyCache(defaultApplyCacheSize)
		round(c, 0, 200000, true) // a restart: every object applied before, each once
		grown := c.limit
		g.Expect(grown).To(BeNumerically(">", defaultApplyCacheSize/2))
		var misses int
		for range 10000 {
			misses = round(c, 0, 100, true)
		}
		g.Expect(misses).To(BeZero())
		g.Expect(size(c)).To(BeNumerically("<=", 200), "the records of the objects applied once are gone (limit %d, grown to %d)", c.limit, grown)
		g.Expect(c.limit).To(Equal(defaultApplyCacheSize/2), "and the capacity is back where it started")
	})

	t.Run("churn", func(t *testing.T) {
		g := NewWithT(t)
		c := newGrowingApplyCache(defaultApplyCacheSize)
		for r := range 20 {
			round(c, r*10000, 10000, false) // new objects, each applied once
		}
		g.Expect(c.limit).To(Equal(defaultApplyCacheSize/2), "objects applied once are no reason to grow")
		g.Expect(size(c)).To(BeNumerically("<=", defaultApplyCacheSize))
	})

	t.Run("a size set is fixed", func(t *testing.T) {
		g := NewWithT(t)
		c := newApplyCache(100)
		round(c, 0, 1000, false)
		for range 3 {
			round(c, 0, 1000, true)
		}
		g.Expect(size(c)).To(BeNumerically("<=", 100))
	})

	t.Run("bounded", func(t *testing.T) {
		g := NewWithT(t)
		c := newGrowingApplyCache(defaultApplyCacheSize)
		for range 12 {
			// A full generation, every entry of it applied again: the next put rotates and grows.
			c.cur = map[applyKey]applyRecord{}
			for i := range c.limit {
				c.cur[key(i)] = applyRecord{}
			}
			c.again = c.limit
			c.put(key(-1), applyRecord{})
		}
		g.Expect(c.limit).To(Equal(maxGrownEntries / 2))
	})
}

func TestAppliedByReadsTheManagersApplyEntryForTheSubresource(t *testing.T) {
	g := NewWithT(t)
	obj := &unstructured.Unstructured{}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status"},
		{Manager: "me", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "other", Operation: metav1.ManagedFieldsOperationApply},
	})
	g.Expect(appliedBy(obj, "me", "status")).To(BeTrue())
	g.Expect(appliedBy(obj, "me", "")).To(BeFalse(), "an update is not an apply")
	g.Expect(appliedBy(obj, "other", "")).To(BeTrue())
	g.Expect(appliedBy(obj, "other", "status")).To(BeFalse())
	g.Expect(appliedBy(&unstructured.Unstructured{}, "me", "")).To(BeFalse())
}

// TestAnApplyThatStoredTheSameObjectAgainProvesAFixedPoint: the API server stores a custom
// resource again, under a new resourceVersion, for an apply of `finalizers: []`, which it stores
// without them. Such an answer holds what the object held, content and field sets, and proves
// that applying again changes nothing; otherwise the Applier would send that apply on every
// reconcile (seed 2846489767, case 11483 of the real kinds' oracle: a kueue LocalQueue).
func TestAnApplyThatStoredTheSameObjectAgainProvesAFixedPoint(t *testing.T) {
	g := NewWithT(t)
	object := func(rv, time, weight string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
			"metadata": map[string]any{"name": "q", "namespace": "ns", "resourceVersion": rv, "managedFields": []any{map[string]any{
				"manager": "me", "operation": "Apply", "apiVersion": "kueue.x-k8s.io/v1beta2", "time": time, "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:fairSharing": map[string]any{}}},
			}}},
			"spec": map[string]any{"fairSharing": map[string]any{"weight": weight}},
		}}
	}
	live := object("281", "2026-12-03T12:52:31Z", "1")
	g.Expect(sameApplied(live, object("282", "2026-12-03T12:52:32Z", "1"))).To(BeTrue(), "stored again, the same")
	g.Expect(sameApplied(live, object("282", "2026-12-03T12:52:31Z", "2"))).To(BeFalse(), "the content changed")
	changedSet := object("282", "2026-12-03T12:52:31Z", "1")
	changedSet.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)["fieldsV1"] = map[string]any{}
	g.Expect(sameApplied(live, changedSet)).To(BeFalse(), "a field set changed")
	stripped := object("281", "", "1")
	delete(stripped.Object["metadata"].(map[string]any), "managedFields")
	g.Expect(sameApplied(stripped, object("282", "2026-12-03T12:52:32Z", "1"))).To(BeFalse(), "a live object without managedFields proves nothing")
}

// TestTheStoredFormOfABuiltInKindTellsWhichEmptyMapsItOmits: an empty map a built-in kind's Go
// type holds in a map field with omitempty (labels, a nodeSelector) is not stored, and applying
// it again changes nothing; an empty struct behind a pointer (a Node's status.features) is, and
// an object that lacks it changes when it is applied. A custom resource's stored form is its JSON:
// only applies that wrote nothing tell.
func TestTheStoredFormOfABuiltInKindTellsWhichEmptyMapsItOmits(t *testing.T) {
	g := NewWithT(t)
	node := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n", "labels": map[string]any{}},
		"status": map[string]any{"features": map[string]any{}, "capacity": map[string]any{}}}
	places, ok := builtInOmissions(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, node)
	g.Expect(ok).To(BeTrue())
	g.Expect(places).To(Equal(map[string]bool{"metadata.labels": true, "status.features": false, "status.capacity": true}))

	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{},
			"containers": []any{map[string]any{"name": "a", "ports": []any{}, "resources": map[string]any{"limits": map[string]any{}}}}}}}}
	places, ok = builtInOmissions(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, deployment)
	g.Expect(ok).To(BeTrue())
	g.Expect(places).To(Equal(map[string]bool{"spec.template.spec.nodeSelector": true, "spec.template.spec.containers.[].resources.limits": true,
		"spec.template.spec.containers.[].ports": true}), "empty lists too")

	// A custom resource's metadata is ObjectMeta, which drops empty finalizers and owner
	// references; a list of type map in its spec or status that the server dropped when an apply
	// removed the last element stays unknown (applying it again creates it, or is refused).
	places, ok = builtInOmissions(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, map[string]any{
		"metadata": map[string]any{"name": "w", "labels": map[string]any{}, "annotations": map[string]any{}, "finalizers": []any{}, "ownerReferences": []any{}},
		"spec":     map[string]any{"a": map[string]any{}}, "status": map[string]any{"failureDomains": []any{}}})
	g.Expect(ok).To(BeTrue())
	g.Expect(places).To(Equal(map[string]bool{"metadata.labels": true, "metadata.annotations": true, "metadata.finalizers": true, "metadata.ownerReferences": true}),
		"a custom resource's metadata only")
	_, ok = builtInOmissions(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "unknown": map[string]any{}})
	g.Expect(ok).To(BeFalse(), "a field the type does not have")

	// What the Go type tells is recorded; a custom resource's places outside its metadata stay
	// unknown, whatever was applied before.
	var o omissions
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	g.Expect(o.of(widget, map[string]any{"spec": map[string]any{"a": map[string]any{}}})("spec.a")).To(BeFalse())
	nodeKind := schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	omits := o.of(nodeKind, node)
	g.Expect(omits("status.features")).To(BeFalse())
	g.Expect(omits("metadata.labels")).To(BeTrue())
	g.Expect(o.of(nodeKind, nil)("metadata.labels")).To(BeTrue(), "recorded")
}
