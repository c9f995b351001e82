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

package controller_test

import (
	"reflect"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/sharding"
)

// A shard caches the Clusters, StatefulSets, Services and ConfigMaps the sharder assigned to it,
// and every directory entry, which the sharder never assigns.
func TestAShardCachesItsOwnChildrenAndEveryDirectoryEntry(t *testing.T) {
	g := NewWithT(t)
	shard, err := sharding.New("cluster-operator", "shard-0")
	g.Expect(err).NotTo(HaveOccurred())
	opts := controller.CacheOptions(client.ObjectKey{Namespace: "system", Name: "dns-token"})
	g.Expect(controller.ShardCache(&opts, shard, "cluster-directory")).To(Succeed())

	managed := labels.Set{desired.ManagedByLabel: desired.ManagedBy}
	mine := labels.Merge(managed, labels.Set{shard.ShardLabel(): shard.Name})
	others := labels.Merge(managed, labels.Set{shard.ShardLabel(): "shard-1"})
	entry := func(obj client.Object) cache.ByObject {
		for k, e := range opts.ByObject {
			if reflect.TypeOf(k) == reflect.TypeOf(obj) {
				return e
			}
		}
		t.Fatalf("no cache entry for %T", obj)
		return cache.ByObject{}
	}
	for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}} {
		g.Expect(entry(obj).Label.Matches(mine)).To(BeTrue(), "%T of this shard", obj)
		g.Expect(entry(obj).Label.Matches(others)).To(BeFalse(), "%T of another shard", obj)
	}
	g.Expect(entry(&appsv1alpha1.Cluster{}).Label.Matches(labels.Set{shard.ShardLabel(): "shard-1"})).To(BeFalse())

	configMaps := entry(&corev1.ConfigMap{}).Namespaces
	g.Expect(configMaps).To(HaveLen(2))
	g.Expect(configMaps[cache.AllNamespaces].LabelSelector.Matches(mine)).To(BeTrue(), "this shard's ConfigMaps")
	g.Expect(configMaps[cache.AllNamespaces].LabelSelector.Matches(others)).To(BeFalse(), "another shard's ConfigMaps")
	g.Expect(configMaps[cache.AllNamespaces].LabelSelector.Matches(labels.Set{shard.ShardLabel(): shard.Name})).To(BeFalse(),
		"only ConfigMaps the operator manages")
	g.Expect(configMaps["cluster-directory"].LabelSelector.Matches(managed)).To(BeTrue(), "every directory entry, which no shard label names")
	g.Expect(configMaps["cluster-directory"].LabelSelector.Matches(labels.Set{"app": "other"})).To(BeFalse(),
		"only directory entries the operator manages")

	// Without a directory namespace the directory entries would silently leave the cache.
	opts = controller.CacheOptions(client.ObjectKey{Namespace: "system", Name: "dns-token"})
	g.Expect(controller.ShardCache(&opts, shard, "")).To(MatchError(ContainSubstring("directory namespace")))

	// Options whose ConfigMaps CacheOptions did not configure are refused, not half-selected.
	g.Expect(controller.ShardCache(&cache.Options{}, shard, "cluster-directory")).To(MatchError(ContainSubstring("ConfigMaps")))
}
