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
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
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

func TestCheckCountsWhatALiveClusterLacksOrHasTwice(t *testing.T) {
	ready := appsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "uid-c", Generation: 1}}
	ready.Status.ObservedGeneration = 1
	ready.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: 1}}
	complete := snapshot{
		Namespaces: []string{"ns"},
		Clusters:   []appsv1alpha1.Cluster{ready},
		Records:    []clouddns.Record{{Name: "c.ns." + dnsZone, Owner: "uid-c"}},
		Entries:    []string{"ns.c"},
		Children: []child{
			{Kind: "ConfigMap", Namespace: "ns", Name: "c-config", Owner: "uid-c"},
			{Kind: "Service", Namespace: "ns", Name: "c", Owner: "uid-c"},
			{Kind: "Service", Namespace: "ns", Name: "c-peers", Owner: "uid-c"},
			{Kind: "StatefulSet", Namespace: "ns", Name: "c", Owner: "uid-c"},
		},
	}
	if a := check(complete, true); a.Leaked+a.Duplicated+a.Missing+a.Wedged != 0 {
		t.Fatalf("a complete Cluster: %+v", a)
	}

	missing := complete
	missing.Children = complete.Children[:3]
	missing.Records = nil
	if a := check(missing, true); a.Missing != 2 {
		t.Errorf("a Ready Cluster without its StatefulSet and DNS record: Missing = %d, want 2 (%v)", a.Missing, a.Problems)
	}

	twice := complete
	twice.Children = append(slices.Clone(complete.Children), child{Kind: "StatefulSet", Namespace: "ns", Name: "c-2", Owner: "uid-c"})
	twice.Records = append(slices.Clone(complete.Records), clouddns.Record{Name: "other.ns." + dnsZone, Owner: "uid-c"})
	if a := check(twice, true); a.Duplicated != 2 {
		t.Errorf("a second StatefulSet and record: Duplicated = %d, want 2 (%v)", a.Duplicated, a.Problems)
	}

	gone := complete
	gone.Clusters = nil
	if a := check(gone, true); a.Leaked != 6 {
		t.Errorf("everything of a deleted Cluster left: Leaked = %d, want 6 (%v)", a.Leaked, a.Problems)
	}
	if a := check(gone, false); a.Leaked != 2 {
		t.Errorf("before the garbage collector settles only the record and entry count: Leaked = %d, want 2 (%v)", a.Leaked, a.Problems)
	}

	stale := complete
	stale.Records = []clouddns.Record{{Name: "c.ns." + dnsZone, Owner: "uid-of-an-earlier-c"}}
	if a := check(stale, true); a.Leaked != 1 || a.Missing != 1 {
		t.Errorf("a record of an earlier Cluster of the same name: Leaked %d, Missing %d, want 1 and 1 (%v)", a.Leaked, a.Missing, a.Problems)
	}
}

func TestCoordinatorRaceIsToldFromAFinding(t *testing.T) {
	race := []byte("fuzz: elapsed: 10s, execs: 23568 (3086/sec)\n--- FAIL: FuzzX (10.06s)\n    context deadline exceeded\nFAIL\n")
	finding := []byte("--- FAIL: FuzzX (0.20s)\n    x_test.go:9: boom\n    Failing input written to testdata/fuzz/FuzzX/1a2b\n    context deadline exceeded\nFAIL\n")
	if !coordinatorRace(race) {
		t.Error("the coordinator's deadline race, with no failing input, is not recognised")
	}
	if coordinatorRace(finding) {
		t.Error("a finding that wrote its failing input is taken for the coordinator's race")
	}
	if coordinatorRace([]byte("--- FAIL: FuzzX\n    x_test.go:9: boom\n")) {
		t.Error("a plain failure is taken for the coordinator's race")
	}
}

func TestGuardBytesCountsTheTestsButTheUIDs(t *testing.T) {
	uid := `{"op":"test","path":"/metadata/uid","value":"u1"}`
	guard := `{"op":"test","path":"/status/conditions/0/status","value":"False"}`
	replace := `{"op":"replace","path":"/status/conditions/0","value":{"type":"Ready","status":"True"}}`
	for _, tc := range []struct {
		body string
		want int
	}{
		{"[" + uid + "," + guard + "," + replace + "]", len(guard) + len(",")},
		{"[" + guard + "," + replace + "]", len(guard) + len(",")},
		{"[" + uid + "," + replace + "]", 0},
		{"[" + guard + "]", len("["+guard+"]") - len("[]")},
		{"[" + guard + "," + replace + "]\n", len(guard) + len(",")}, // a trailing newline is not a guard
		{`{"metadata":{"finalizers":null}}`, 0},                      // not a JSON patch
	} {
		if got := guardBytes([]byte(tc.body)); got != int64(tc.want) {
			t.Errorf("guardBytes(%s) = %d, want %d", tc.body, got, tc.want)
		}
	}
}
