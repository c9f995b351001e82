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

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
