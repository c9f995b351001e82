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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/shardlabels"
	"github.com/tenon-dev/tenon/sharding"
)

const (
	ring       = "cluster-operator"
	shardLabel = "shard.alpha.sharding.timebertt.dev/cluster-operator"
	drainLabel = "drain.alpha.sharding.timebertt.dev/cluster-operator"
)

func mustShard(t *testing.T, name string) sharding.Shard {
	t.Helper()
	s, err := sharding.New(ring, name)
	if err != nil {
		t.Fatalf("failed to build shard %q: %v", name, err)
	}
	return s
}

func TestNewRefusesNamesTheProtocolCannotCarry(t *testing.T) {
	for _, tc := range []struct {
		name, ring, shard, wantErr string
	}{
		{"an empty ring", "", "a", "the ring's name is empty"},
		{"a ring longer than 63 characters", strings.Repeat("r", 64), "a", "no more than 63 characters"},
		{"a ring with a slash", "a/b", "a", "cannot be a ControllerRing's name"},
		{"a ring with upper case", "Cluster-Operator", "a", "cannot be a ControllerRing's name"},
		{"an empty shard", "ring", "", "the shard's name is empty"},
		{"a shard with upper case", "ring", "Pod-1", "cannot be a label value and a Lease's name"},
		{"a shard longer than a label value", "ring", strings.Repeat("p", 64), "cannot be a label value and a Lease's name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := sharding.New(tc.ring, tc.shard)
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
	g := NewWithT(t)
	s, err := sharding.New(ring, "cluster-operator-7d9f-abcde")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.ShardLabel()).To(Equal(shardLabel))
	g.Expect(s.DrainLabel()).To(Equal(drainLabel))
	g.Expect(s.Selector().String()).To(Equal(shardLabel + "=cluster-operator-7d9f-abcde"))
	g.Expect(s.String()).To(Equal("cluster-operator/cluster-operator-7d9f-abcde"))
}

func TestHoldsAndDraining(t *testing.T) {
	g := NewWithT(t)
	s := mustShard(t, "a")
	obj := func(l map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	}
	g.Expect(s.Holds(obj(map[string]string{shardLabel: "a"}))).To(BeTrue())
	g.Expect(s.Holds(obj(map[string]string{shardLabel: "b"}))).To(BeFalse(), "another shard's")
	g.Expect(s.Holds(obj(nil))).To(BeFalse(), "unassigned")
	g.Expect(s.Holds(obj(map[string]string{shardLabel: "a", drainLabel: ""}))).To(BeFalse(), "draining, whatever the drain label's value")
	g.Expect(s.Draining(obj(map[string]string{drainLabel: ""}))).To(BeTrue())
	g.Expect(s.Draining(obj(map[string]string{"drain.alpha.sharding.timebertt.dev/other-ring": "true"}))).To(BeFalse(), "another ring's drain")
	g.Expect(s.Holds(nil)).To(BeFalse())
}

func TestSelectCacheAddsTheShardToWhatEachKindSelects(t *testing.T) {
	g := NewWithT(t)
	s := mustShard(t, "a")
	managed := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "cluster-operator"})
	existing := &appsv1.StatefulSet{}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.tenon.dev", Version: "v1alpha1", Kind: "Cluster"})
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		existing:            {Label: managed, Namespaces: map[string]cache.Config{"team-a": {}}},
		&corev1.ConfigMap{}: {Label: managed},
	}}
	g.Expect(s.SelectCache(&opts, u, &appsv1.StatefulSet{})).To(Succeed())

	g.Expect(opts.ByObject).To(HaveLen(3), "the StatefulSet's entry was reused, not duplicated")
	g.Expect(opts.ByObject[existing].Label.String()).To(Equal("app.kubernetes.io/managed-by=cluster-operator," + shardLabel + "=a"))
	g.Expect(opts.ByObject[existing].Namespaces).To(HaveKey("team-a"), "what the entry selected is kept")
	g.Expect(opts.ByObject[u].Label.String()).To(Equal(shardLabel + "=a"))
	for obj, entry := range opts.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			g.Expect(entry.Label.String()).To(Equal("app.kubernetes.io/managed-by=cluster-operator"), "a kind not passed is not selected")
		}
	}
}

// controller-runtime picks one label selector per namespace: the kind's namespace's, the kind's,
// the namespace's default, the default. SelectCache makes the one that would apply explicit
// and adds the shard to it, so that neither the operator's selection nor the shard's is lost.
func TestSelectCacheKeepsTheSelectorControllerRuntimeWouldApply(t *testing.T) {
	s := mustShard(t, "a")
	managed := labels.SelectorFromSet(labels.Set{"managed": "yes"})
	team := labels.SelectorFromSet(labels.Set{"team": "a"})
	for _, tc := range []struct {
		name      string
		opts      cache.Options
		wantLabel string
		wantByNS  map[string]string
		unchanged bool
	}{{
		name:      "the default selector",
		opts:      cache.Options{DefaultLabelSelector: managed},
		wantLabel: "managed=yes," + shardLabel + "=a",
	}, {
		name: "a namespace's own selector in the kind's options",
		opts: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Label: managed, Namespaces: map[string]cache.Config{"team-a": {LabelSelector: team}, "team-b": {}},
		}}},
		wantLabel: "managed=yes," + shardLabel + "=a",
		wantByNS:  map[string]string{"team-a": shardLabel + "=a,team=a", "team-b": "managed=yes," + shardLabel + "=a"},
	}, {
		name: "a namespace's default selector, which controller-runtime prefers to the kind's",
		opts: cache.Options{
			DefaultNamespaces: map[string]cache.Config{"team-a": {LabelSelector: team}, "team-b": {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: managed}},
		},
		wantLabel: "managed=yes," + shardLabel + "=a",
		wantByNS:  map[string]string{"team-a": shardLabel + "=a,team=a", "team-b": "managed=yes," + shardLabel + "=a"},
	}, {
		name: "a namespace's default selector, for a kind with namespaces of its own",
		opts: cache.Options{
			DefaultNamespaces: map[string]cache.Config{"team-a": {LabelSelector: team}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{"team-a": {}}}},
		},
		wantLabel: shardLabel + "=a",
		wantByNS:  map[string]string{"team-a": shardLabel + "=a,team=a"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(s.SelectCache(&tc.opts, &corev1.ConfigMap{})).To(Succeed())
			g.Expect(tc.opts.ByObject).To(HaveLen(1))
			for _, entry := range tc.opts.ByObject {
				g.Expect(entry.Label.String()).To(Equal(tc.wantLabel))
				for ns, want := range tc.wantByNS {
					g.Expect(entry.Namespaces[ns].LabelSelector.String()).To(Equal(want), "namespace %s", ns)
				}
			}
		})
	}
}

func TestSelectCacheRefusesBadInputAndChangesNothing(t *testing.T) {
	s := mustShard(t, "a")
	selected := labels.SelectorFromSet(labels.Set{shardLabel: "b"})
	for _, tc := range []struct {
		name    string
		opts    *cache.Options
		objs    []client.Object
		wantErr string
	}{
		{"nil options", nil, []client.Object{&corev1.ConfigMap{}}, "the cache.Options is nil"},
		{"no kinds", &cache.Options{}, nil, "no kinds given"},
		{"a nil kind", &cache.Options{}, []client.Object{&corev1.ConfigMap{}, (*corev1.Secret)(nil)}, "kind 2 of 2 is nil"},
		{"a kind selected on the shard label already", &cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: selected},
		}}, []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}, "selects on " + shardLabel + " already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var before int
			if tc.opts != nil {
				before = len(tc.opts.ByObject)
			}
			g.Expect(s.SelectCache(tc.opts, tc.objs...)).To(MatchError(ContainSubstring(tc.wantErr)))
			if tc.opts != nil {
				g.Expect(tc.opts.ByObject).To(HaveLen(before), "the options changed")
			}
		})
	}
}

func TestPredicatePassesTheHandoverWhateverThePredicatesSay(t *testing.T) {
	s := mustShard(t, "a")
	p := s.Predicate(predicate.GenerationChangedPredicate{})
	cm := func(generation int64, l map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Generation: generation, Labels: l}}
	}
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"the drain label added", cm(1, map[string]string{shardLabel: "a"}), cm(1, map[string]string{shardLabel: "a", drainLabel: "true"}), true},
		{"the object assigned to a shard", cm(1, nil), cm(1, map[string]string{shardLabel: "a"}), true},
		{"the drain withdrawn, the shard label kept", cm(1, map[string]string{shardLabel: "a", drainLabel: "true"}), cm(1, map[string]string{shardLabel: "a"}), true},
		{"another label changed", cm(1, map[string]string{shardLabel: "a"}), cm(1, map[string]string{shardLabel: "a", "x": "y"}), false},
		{"a status write", cm(1, map[string]string{shardLabel: "a"}), cm(1, map[string]string{shardLabel: "a"}), false},
		{"a spec change", cm(1, map[string]string{shardLabel: "a"}), cm(2, map[string]string{shardLabel: "a"}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(s.Predicate(predicate.Funcs{CreateFunc: func(event.CreateEvent) bool { return false }}).
		Create(event.CreateEvent{Object: cm(1, map[string]string{shardLabel: "a", drainLabel: "true"})})).To(BeTrue(), "a draining object seen at start")
}

// recorder is a reconciler that records its requests.
type recorder struct{ requests []reconcile.Request }

func (r *recorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.requests = append(r.requests, req)
	return reconcile.Result{}, nil
}

func TestReconcilerWorksOnlyOnWhatTheShardHolds(t *testing.T) {
	s := mustShard(t, "a")
	key := client.ObjectKey{Namespace: "ns", Name: "c"}
	for _, tc := range []struct {
		name       string
		labels     map[string]string
		absent     bool
		wantCalled bool
		wantLabels map[string]string
	}{
		{name: "held", labels: map[string]string{shardLabel: "a", "x": "y"}, wantCalled: true, wantLabels: map[string]string{shardLabel: "a", "x": "y"}},
		{name: "another shard's", labels: map[string]string{shardLabel: "b"}, wantLabels: map[string]string{shardLabel: "b"}},
		{name: "unassigned", labels: map[string]string{"x": "y"}, wantLabels: map[string]string{"x": "y"}},
		{name: "draining: acknowledged", labels: map[string]string{shardLabel: "a", drainLabel: "true", "x": "y"}, wantLabels: map[string]string{"x": "y"}},
		{name: "draining from another shard", labels: map[string]string{shardLabel: "b", drainLabel: "true"}, wantLabels: map[string]string{shardLabel: "b", drainLabel: "true"}},
		{name: "gone", absent: true, wantCalled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			b := fake.NewClientBuilder()
			if !tc.absent {
				b = b.WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-1", Labels: tc.labels}})
			}
			c := b.Build()
			inner := &recorder{}
			r, err := s.Reconciler(c, &corev1.ConfigMap{}, inner)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: key})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(inner.requests).To(HaveLen(map[bool]int{true: 1, false: 0}[tc.wantCalled]))
			if !tc.absent {
				live := &corev1.ConfigMap{}
				g.Expect(c.Get(t.Context(), key, live)).To(Succeed())
				g.Expect(live.Labels).To(Equal(tc.wantLabels))
			}
		})
	}
}

func TestReconcilerRefusesNilArguments(t *testing.T) {
	g := NewWithT(t)
	s := mustShard(t, "a")
	c := fake.NewClientBuilder().Build()
	_, err := s.Reconciler(nil, &corev1.ConfigMap{}, &recorder{})
	g.Expect(err).To(MatchError(ContainSubstring("the client is nil")))
	_, err = s.Reconciler(c, (*corev1.ConfigMap)(nil), &recorder{})
	g.Expect(err).To(MatchError(ContainSubstring("the object is nil")))
	_, err = s.Reconciler(c, &corev1.ConfigMap{}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("the reconciler is nil")))
}

// The patch package never applies the sharder's labels; it spells their prefixes in an internal
// package, which must agree with these.
func TestThePatchPackageKnowsTheLabels(t *testing.T) {
	g := NewWithT(t)
	g.Expect(shardlabels.ShardPrefix).To(Equal(sharding.ShardLabelPrefix))
	g.Expect(shardlabels.DrainPrefix).To(Equal(sharding.DrainLabelPrefix))
	g.Expect(shardlabels.Is(mustShard(t, "a").ShardLabel())).To(BeTrue())
	g.Expect(shardlabels.Is(mustShard(t, "a").DrainLabel())).To(BeTrue())
	g.Expect(shardlabels.Is(sharding.RingLabel)).To(BeFalse(), "the ring label is on Leases, which the Applier may apply")
}
