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

package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The sharded ring's checker must catch a write of a shard outside its epochs of the Cluster,
// and accept the writes of each holder in turn, children and directory entry included.
func TestWritesOutsideEpochsFindsASecondWriter(t *testing.T) {
	const ns = "sharded-x"
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	sharderWrite := func(s float64) testenv.AuditEvent {
		return testenv.AuditEvent{UserAgent: sharderAgent, Verb: "patch", APIGroup: "apps.tenon.dev", Resource: "clusters", Namespace: ns, Name: "c",
			Code: 200, Received: at(s), Completed: at(s + 0.01)}
	}
	write := func(user, resource, namespace, name string, s float64) testenv.AuditEvent {
		return testenv.AuditEvent{User: user, Verb: "patch", Resource: resource, Namespace: namespace, Name: name, Code: 200, Received: at(s), Completed: at(s + 0.01)}
	}
	clusterKind := appsv1alpha1.GroupVersion.WithKind("Cluster")
	moves := []sharder.Move{
		{Kind: clusterKind, Object: client.ObjectKey{Namespace: ns, Name: "c"}, To: "shard-0"},
		{Kind: clusterKind, Object: client.ObjectKey{Namespace: ns, Name: "c"}, From: "shard-0", To: "shard-1", Drain: true},
		{Kind: clusterKind, Object: client.ObjectKey{Namespace: ns, Name: "c"}, To: "shard-1"},
	}
	users := map[string]string{"user-0": "shard-0", "user-1": "shard-1"}
	legal := testenv.AuditEvents{
		sharderWrite(1),
		write("user-0", "clusters", ns, "c", 2),
		write("user-0", "statefulsets", ns, "c", 2.5),
		sharderWrite(3), // the drain
		write("user-0", "configmaps", ns, "c-config", 3.5),
		write("user-0", "clusters", ns, "c", 4), // the acknowledgement
		sharderWrite(5),
		write("user-1", "services", ns, "c-peers", 6),
		write("user-1", "configmaps", directoryNamespace, ns+".c", 6.5),
		{User: "user-0", Verb: "create", Resource: "events", Namespace: ns, Name: "c.1", Code: 201, Received: at(7)},
	}
	for _, tc := range []struct {
		name   string
		extra  testenv.AuditEvents
		want   int
		checks int
	}{
		{name: "each holder in turn", want: 0, checks: 6},
		{name: "the old shard after the move", extra: testenv.AuditEvents{write("user-0", "clusters", ns, "c", 5.5)}, want: 1, checks: 7},
		{name: "the old shard's directory entry after the move", extra: testenv.AuditEvents{write("user-0", "configmaps", directoryNamespace, ns+".c", 8)}, want: 1, checks: 7},
		{name: "the new shard before the move", extra: testenv.AuditEvents{write("user-1", "statefulsets", ns, "c", 4.5)}, want: 1, checks: 7},
		{name: "a failed write of the old shard", extra: testenv.AuditEvents{{User: "user-0", Verb: "patch", Resource: "clusters", Namespace: ns, Name: "c", Code: 409, Received: at(5.5)}}, want: 0, checks: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			outside, checked, problems := writesOutsideEpochs(append(append(testenv.AuditEvents{}, legal...), tc.extra...), moves, ns, users)
			g.Expect(outside).To(Equal(tc.want), "%v", problems)
			g.Expect(checked).To(Equal(tc.checks))
		})
	}
}

// The lab's sharder shards what config/sharding's ControllerRing lists, and the sharder's
// ClusterRole there lets it list and patch every one of those kinds: a kind missing from either
// leaves its objects unlabelled, so out of every shard's cache, in the lab or on a cluster.
func TestTheLabsRingIsTheManifestsRing(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(moduleDir, "config", "sharding")
	type groupResource struct {
		Group    string `json:"group"`
		Resource string `json:"resource"`
	}
	var ring struct {
		Spec struct {
			Resources []struct {
				groupResource
				ControlledResources []groupResource `json:"controlledResources"`
			} `json:"resources"`
		} `json:"spec"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "controllerring.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.Unmarshal(data, &ring)).To(Succeed())
	var manifest []string
	for _, r := range ring.Spec.Resources {
		manifest = append(manifest, r.Group+"/"+r.Resource)
		for _, c := range r.ControlledResources {
			manifest = append(manifest, r.Group+"/"+r.Resource+" controls "+c.Group+"/"+c.Resource)
		}
	}

	resourceOf := func(obj client.Object) string {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		g.Expect(err).NotTo(HaveOccurred())
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		return plural.Group + "/" + plural.Resource
	}
	var lab []string
	for _, r := range ringResources {
		lab = append(lab, resourceOf(r.Object))
		for _, c := range r.Controlled {
			lab = append(lab, resourceOf(r.Object)+" controls "+resourceOf(c))
		}
	}
	g.Expect(lab).To(ConsistOf(manifest))

	data, err = os.ReadFile(filepath.Join(dir, "sharder_role.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	g.Expect(yaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), &role)).To(Succeed())
	g.Expect(role.Kind).To(Equal("ClusterRole"))
	for _, entry := range lab {
		kind := entry[strings.LastIndex(entry, " ")+1:]
		group, resource, _ := strings.Cut(kind, "/")
		g.Expect(slices.ContainsFunc(role.Rules, func(rule rbacv1.PolicyRule) bool {
			return slices.Contains(rule.APIGroups, group) && slices.Contains(rule.Resources, resource) &&
				slices.Contains(rule.Verbs, "list") && slices.Contains(rule.Verbs, "patch")
		})).To(BeTrue(), "the sharder's ClusterRole lets it list and patch %s", kind)
	}
}

// Every shard of the full ring holds a Cluster of the scenario, in any namespace, so that adding
// or stopping any shard moves something.
func TestRingNamesPutAClusterOnEveryShard(t *testing.T) {
	g := NewWithT(t)
	clusters := appsv1alpha1.GroupVersion.WithKind("Cluster").GroupKind()
	shards := make([]string, ringShards)
	for i := range shards {
		shards[i] = shardName(i)
	}
	for i := range 500 {
		ns := fmt.Sprintf("sharded-%05d", i)
		names := ringNames(ns, 12)
		g.Expect(names).To(HaveLen(12))
		g.Expect(sets.New(names...).Len()).To(Equal(12), "names in %s: %v", ns, names)
		held := map[string]int{}
		for _, name := range names {
			held[sharder.ShardFor(shards, clusters, client.ObjectKey{Namespace: ns, Name: name})]++
		}
		g.Expect(held).To(HaveLen(ringShards), "Clusters by shard in %s: %v", ns, held)
	}
}
