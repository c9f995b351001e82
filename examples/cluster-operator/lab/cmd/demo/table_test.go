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

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"

	"github.com/tenon-dev/tenon/conditions"
)

func TestTheTablePrintsARowOnlyWhenItChanges(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	tbl := newTable(&out, time.Now(), []string{"orders", "payments"})
	orders := &appsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Generation: 1},
		Spec:       appsv1alpha1.ClusterSpec{DNSName: "orders.example.com"},
	}
	s := snapshot{clusters: map[string]*appsv1alpha1.Cluster{"orders": orders}, records: map[string]clouddns.Record{}}
	lines := func() []string { return strings.Split(strings.TrimSpace(out.String()), "\n") }

	tbl.header()
	tbl.update(s)
	tbl.update(s)
	g.Expect(lines()).To(HaveLen(2), "the header and one row; payments does not exist yet: %s", out.String())
	g.Expect(lines()[1]).To(ContainSubstring("waiting for the operator"))

	conditions.MarkFalse(orders, conditions.Ready, "RollingOut", "WorkloadReady: 1 of 3 replicas ready")
	orders.Status.ObservedGeneration = 1
	s.records["orders.example.com"] = clouddns.Record{Name: "orders.example.com", Status: clouddns.StatusPending}
	tbl.update(s)
	g.Expect(lines()).To(HaveLen(3))
	g.Expect(strings.Fields(lines()[2])[1:6]).To(Equal([]string{"orders", "1", "1", "False", "-"}))
	g.Expect(lines()[2]).To(ContainSubstring("PENDING"))
	g.Expect(lines()[2]).To(HaveSuffix("WorkloadReady: 1 of 3 replicas ready"))

	// A new generation makes the conditions stale until the operator observes it.
	orders.Generation = 2
	tbl.update(s)
	g.Expect(strings.Fields(lines()[3])[4]).To(Equal("False*"))
	g.Expect(tbl.footnote()).To(ContainSubstring("older generation"))

	delete(s.clusters, "orders")
	tbl.update(s)
	tbl.update(s)
	g.Expect(lines()).To(HaveLen(5))
	g.Expect(lines()[4]).To(ContainSubstring("gone"))
}

func TestTruncateKeepsShortTextAndMarksCuts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(truncate("short", 10)).To(Equal("short"))
	g.Expect(truncate("a longer text", 8)).To(Equal("a longe…"))
	g.Expect([]rune(truncate(strings.Repeat("é", 20), 8))).To(HaveLen(8))
}
