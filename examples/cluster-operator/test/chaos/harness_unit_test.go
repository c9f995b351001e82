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
	"testing"
	"time"
)

// The checks the scenarios rely on must be able to fail: these run under a plain go test.

func TestOverlappingWritesFindsAWriteByAReplicaWithoutTheLease(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1700000000, 0).Add(time.Duration(s) * time.Second) }
	const lease = "/apis/coordination.k8s.io/v1/namespaces/system/leases/operator"
	const cluster = "/apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c/status"
	ws := []write{
		{Replica: "a", Start: at(0), Method: "POST", Path: "/apis/coordination.k8s.io/v1/namespaces/system/leases", Status: 201},
		{Replica: "a", Start: at(1), Method: "PATCH", Path: cluster, Status: 200},
		{Replica: "b", Start: at(2), Method: "PUT", Path: lease, Status: 409}, // a failed acquisition holds nothing
		{Replica: "a", Start: at(3), Method: "PATCH", Path: cluster, Status: 200},
		{Replica: "b", Start: at(10), Method: "PUT", Path: lease, Status: 200},
		{Replica: "b", Start: at(11), Method: "PATCH", Path: cluster, Status: 200},
	}
	if n, problems := overlappingWrites(ws); n != 0 {
		t.Fatalf("overlappingWrites = %d %v, want 0 for writes that follow the lease", n, problems)
	}

	ws = append(ws, write{Replica: "a", Start: at(12), Method: "PATCH", Path: cluster, Status: 200})
	if n, _ := overlappingWrites(ws); n != 1 {
		t.Fatalf("overlappingWrites = %d, want 1 for a write by the old leader after the takeover", n)
	}
	before := []write{{Replica: "a", Start: at(0), Method: "PATCH", Path: cluster, Status: 200}}
	if n, _ := overlappingWrites(before); n != 1 {
		t.Fatalf("overlappingWrites = %d, want 1 for a write before any replica held the lease", n)
	}
}

func TestRecordClusterParsesTheRunsDNSNames(t *testing.T) {
	ns, name, ok := recordCluster("c-1.storm-x2k.chaos.example.com")
	if !ok || ns != "storm-x2k" || name != "c-1" {
		t.Fatalf("recordCluster = %q, %q, %v", ns, name, ok)
	}
	if _, _, ok := recordCluster("c-1.ns.clusters.example.com"); ok {
		t.Fatal("a record outside the run's zone was taken for one of its Clusters")
	}
}

func TestResourceOfNamesTheResourceAndSubresource(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c/status":  "clusters/status",
		"/apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c":         "clusters",
		"/apis/apps.tenon.dev/v1alpha1/clusters":                         "clusters",
		"/api/v1/namespaces/ns/configmaps":                               "configmaps",
		"/api/v1/namespaces/ns":                                          "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/system/leases/operator": "leases",
		"/api": "/api",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}
