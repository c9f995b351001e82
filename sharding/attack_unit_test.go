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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-dev/tenon/sharding"
)

// startCache builds and starts a cache from opts against envtest and returns it synced.
func startCache(t *testing.T, opts cache.Options) cache.Cache {
	t.Helper()
	opts.Scheme = scheme
	c, err := cache.New(env.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("the cache did not sync")
	}
	return c
}

// createLabelled creates a ConfigMap in ns with the labels.
func createLabelled(t *testing.T, ns, name string, l map[string]string) {
	t.Helper()
	if err := env.Client().Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}}); err != nil {
		t.Fatal(err)
	}
}

// SelectCache promises that the cache holds only the objects assigned to the shard, "and keeps
// what the entry selects already (namespaces, fields, other labels)". controller-runtime lets a
// per-namespace LabelSelector (in cache.Options.DefaultNamespaces or in the entry's Namespaces)
// take precedence over ByObject.Label, and lets ByObject.Label replace DefaultLabelSelector.
//
// Expected: in every case the cache holds exactly the objects that the previous selection held
// AND that carry this shard's label. What happens: with a per-namespace label selector the
// shard's requirement is dropped (the cache holds every shard's objects); with a
// DefaultLabelSelector the operator's own selector is dropped (the cache holds objects the
// operator excluded).
func TestAttackSelectCacheKeepsSelectionWithPerNamespaceAndDefaultSelectors(t *testing.T) {
	managed := labels.SelectorFromSet(labels.Set{"app": "x"})
	for _, tc := range []struct {
		name string
		opts func(ns string) cache.Options
	}{{
		name: "a LabelSelector in DefaultNamespaces",
		opts: func(ns string) cache.Options {
			return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {LabelSelector: managed}}}
		},
	}, {
		name: "a LabelSelector in the entry's Namespaces",
		opts: func(ns string) cache.Options {
			return cache.Options{ByObject: map[client.Object]cache.ByObject{
				&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{ns: {LabelSelector: managed}}},
			}}
		},
	}, {
		name: "a DefaultLabelSelector",
		opts: func(ns string) cache.Options {
			return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultLabelSelector: managed}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.Namespace(t)
			createLabelled(t, ns, "mine", map[string]string{"app": "x", shardLabel: "shard-a"})
			createLabelled(t, ns, "other-shard", map[string]string{"app": "x", shardLabel: "shard-b"})
			createLabelled(t, ns, "not-managed", map[string]string{"app": "y", shardLabel: "shard-a"})

			opts := tc.opts(ns)
			g.Expect(mustShard(t, "shard-a").SelectCache(&opts, &corev1.ConfigMap{})).To(Succeed())
			c := startCache(t, opts)
			list := &corev1.ConfigMapList{}
			g.Expect(c.List(t.Context(), list, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, cm := range list.Items {
				if cm.Name != "kube-root-ca.crt" {
					names = append(names, cm.Name)
				}
			}
			g.Expect(names).To(ConsistOf("mine"), "the cache holds objects outside (previous selection AND the shard)")
		})
	}
}

// Reconciler reads "into a new object of obj's type". For a metadata-only prototype
// (metav1.PartialObjectMetadata, as builder.OnlyMetadata watches use), the new object has no
// kind, so every read fails and every reconcile errs. Expected: the wrapper works on the
// object's metadata (the only thing it reads), as it does for a typed prototype.
func TestAttackReconcilerWithAMetadataOnlyPrototype(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	createLabelled(t, ns, "held", map[string]string{shardLabel: "a"})
	createLabelled(t, ns, "draining", map[string]string{shardLabel: "a", drainLabel: "true"})
	proto := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	inner := &recorder{}
	r, err := mustShard(t, "a").Reconciler(env.Client(), proto, inner)
	g.Expect(err).NotTo(HaveOccurred())

	_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "held"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inner.requests).To(HaveLen(1), "the held object was not reconciled")

	_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "draining"}})
	g.Expect(err).NotTo(HaveOccurred())
	live := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "draining"}, live)).To(Succeed())
	g.Expect(live.Labels).To(BeEmpty(), "the drain was not acknowledged")
}

// An unstructured prototype: the wrapper reads with the kind, acknowledges with the JSON patch
// and never calls the inner reconciler for a draining or foreign object (passes; pins it).
func TestAttackReconcilerWithAnUnstructuredPrototype(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	createLabelled(t, ns, "held", map[string]string{shardLabel: "a"})
	createLabelled(t, ns, "foreign", map[string]string{shardLabel: "b", drainLabel: "true"})
	createLabelled(t, ns, "draining", map[string]string{shardLabel: "a", drainLabel: "true", "keep": "me"})
	proto := &unstructured.Unstructured{}
	proto.SetAPIVersion("v1")
	proto.SetKind("ConfigMap")
	inner := &recorder{}
	r, err := mustShard(t, "a").Reconciler(env.Client(), proto, inner)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{"held", "foreign", "draining"} {
		_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
		g.Expect(err).NotTo(HaveOccurred(), name)
	}
	g.Expect(inner.requests).To(ConsistOf(ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "held"}}))
	live := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "draining"}, live)).To(Succeed())
	g.Expect(live.Labels).To(Equal(map[string]string{"keep": "me"}))
	g.Expect(env.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "foreign"}, live)).To(Succeed())
	g.Expect(live.Labels).To(Equal(map[string]string{shardLabel: "b", drainLabel: "true"}))
}

// New's documentation: it "returns an error naming what is wrong when ring cannot be the name
// part of a label key (longer than 63 characters, or not a DNS-1123 subdomain's characters)".
// A ring is the name of a ControllerRing, a DNS-1123 subdomain; upper case and underscores are
// allowed in a label key's name part but not in a ControllerRing's name, and the sharder
// never serves such a ring. Expected: an error.
func TestAttackNewRefusesARingNoControllerRingCanHave(t *testing.T) {
	for _, ring := range []string{"Cluster_Operator", "cluster_operator", "Cluster-Operator"} {
		t.Run(ring, func(t *testing.T) {
			_, err := sharding.New(ring, "shard-a")
			NewWithT(t).Expect(err).To(HaveOccurred(), "ring %q accepted", ring)
		})
	}
}

// Names at the limits: a ring and a shard of 63 characters make valid labels, a valid Lease
// and a valid selector (passes; pins the limit against the API server).
func TestAttackNamesAtTheLengthLimits(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	ring63 := strings.Repeat("r", 30) + "." + strings.Repeat("s", 32)
	name63 := strings.Repeat("n", 31) + "-" + strings.Repeat("m", 31)
	s, err := sharding.New(ring63, name63)
	g.Expect(err).NotTo(HaveOccurred())
	createLabelled(t, ns, "long", map[string]string{s.ShardLabel(): s.Name, s.DrainLabel(): "true"})
	list := &corev1.ConfigMapList{}
	g.Expect(env.Client().List(t.Context(), list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s.Selector()})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	inner := &recorder{}
	r, err := s.Reconciler(env.Client(), &corev1.ConfigMap{}, inner)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "long"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "long"}, &list.Items[0])).To(Succeed())
	g.Expect(list.Items[0].Labels).To(BeEmpty(), "the acknowledgement of a 63-character ring failed")
	opts := manager.Options{LeaderElectionNamespace: ns}
	_, err = sharding.ForManager(rest.CopyConfig(env.Config()), &opts, s)
	g.Expect(err).NotTo(HaveOccurred())
}

// ForManager's documentation lists what it changes and says it "returns an error, and changes
// nothing" for bad options. Pins: a "configmapsleases" lock is refused and nothing changes; a
// LeaderElectionNamespace left empty outside a cluster is refused and nothing changes.
func TestAttackForManagerRefusesAndChangesNothing(t *testing.T) {
	s := mustShard(t, "shard-a")
	for _, tc := range []struct {
		name    string
		opts    manager.Options
		wantErr string
	}{
		{"configmapsleases", manager.Options{LeaderElectionResourceLock: "configmapsleases", LeaderElectionNamespace: "ns"}, "configmapsleases"},
		{"no namespace outside a cluster", manager.Options{}, "LeaderElectionNamespace is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cfg := rest.CopyConfig(env.Config())
			before := tc.opts
			_, err := sharding.ForManager(cfg, &tc.opts, s)
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
			g.Expect(tc.opts.LeaderElection).To(Equal(before.LeaderElection))
			g.Expect(tc.opts.LeaderElectionID).To(Equal(before.LeaderElectionID))
			g.Expect(tc.opts.LeaderElectionResourceLockInterface).To(BeNil())
			g.Expect(cfg.WrapTransport).To(BeNil(), "the config was fenced")
		})
	}
}

// ForManager overwrites a LeaderElectionID the caller set (the shard's Lease must be named
// after the shard). Its documentation lists the fields it sets and does not name
// LeaderElectionID, LeaderElectionNamespace or LeaderElectionResourceLock. Expected: either an
// error for a conflicting LeaderElectionID, or the documentation naming it. This test pins the
// behaviour (it passes) so that a change is noticed.
func TestAttackForManagerOverwritesTheLeaderElectionID(t *testing.T) {
	g := NewWithT(t)
	opts := manager.Options{LeaderElectionID: "my-operator-lock", LeaderElectionNamespace: "ns"}
	_, err := sharding.ForManager(rest.CopyConfig(env.Config()), &opts, mustShard(t, "shard-a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.LeaderElectionID).To(Equal("shard-a"))
}

// An object with a finalizer, deleted while it drains: the wrapper acknowledges (the JSON patch
// applies to a terminating object) and does not call the inner reconciler, so the finalizer is
// left to the next shard. Passes: pins it against the API server.
func TestAttackADeletedObjectThatDrainsIsHandedOver(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deleting",
		Labels: map[string]string{shardLabel: "a", drainLabel: "true"}, Finalizers: []string{"test.tenon.dev/keep"}}}
	g.Expect(env.Client().Create(ctx, cm)).To(Succeed())
	g.Expect(env.Client().Delete(ctx, cm)).To(Succeed())
	inner := &recorder{}
	r, err := mustShard(t, "a").Reconciler(env.Client(), &corev1.ConfigMap{}, inner)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cm)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inner.requests).To(BeEmpty())
	live := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cm), live)).To(Succeed())
	g.Expect(live.DeletionTimestamp).NotTo(BeNil())
	g.Expect(live.Labels).To(BeEmpty(), "the drain of a terminating object was not acknowledged")
	g.Expect(live.Finalizers).To(ConsistOf("test.tenon.dev/keep"), "the wrapper touched the finalizers")
	live.Finalizers = nil
	g.Expect(env.Client().Update(ctx, live)).To(Succeed())
}
