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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
)

// faultPlan fails a share of the operator's writes the way a busy API server does: conflicts
// with other writers, internal errors, throttling, and timeouts after which the write happened
// anyway. Its seed is random unless TENON_FAULTS_SEED sets it.
//
// Conflicts are injected on creates, updates, patches and applies, not on deletes: the operator
// deletes only with a UID precondition, for which the API server answers 409 only when the name
// belongs to another object now, and ownership.DeleteTracked takes any 409 to mean that (a
// conflict injected on a delete makes it report a child gone that is not; see the report on
// ownership's deleteChild).
var faultPlan = faults.Plan{Rules: []faults.Rule{
	{Match: faults.Match{Verbs: faults.Verbs{faults.Create, faults.Update, faults.Patch, faults.Apply}}, Probability: 0.15, Fault: faults.Conflict},
	{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.InternalError},
	{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.ServiceUnavailable},
	{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.03, Fault: faults.Timeout, LostResponse: true},
}}

// Every Cluster converges, scales and is cleaned up while the API server fails a share of the
// operator's writes and the DNS provider a share of its calls: nothing leaks, nothing wedges.
func TestClustersConvergeAndCleanUpUnderAFaultPlan(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	op := startOperator(t, operatorOptions{plan: faultPlan})
	t.Logf("fault plan seed %d: replay with %s=%d", op.client.Seed(), faults.SeedEnvVar, op.client.Seed())
	op.dns.SetFaults(clouddnstest.Faults{ErrorRate: 0.1})

	const n = 4
	clusters := make([]*appsv1alpha1.Cluster, n)
	for i := range clusters {
		clusters[i] = op.newCluster(fmt.Sprintf("storm-%d", i))
		op.create(t, clusters[i])
	}
	for _, c := range clusters {
		eventuallyReady(t, c)
	}

	for _, c := range clusters[:2] {
		scale(t, c, 5)
	}
	for _, c := range clusters {
		eventuallyReady(t, c)
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
	}
	g.Expect(clusters[0].Status.ReadyReplicas).To(Equal(int32(5)))

	for _, c := range clusters {
		g.Expect(env.Client().Delete(ctx, c)).To(Succeed())
	}
	for _, c := range clusters {
		g.Eventually(c).WithTimeout(2 * timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
	}

	g.Expect(op.dns.Records()).To(BeEmpty(), "no DNS record leaked")
	var entries corev1.ConfigMapList
	g.Expect(env.Client().List(ctx, &entries, client.InNamespace(op.directory),
		client.MatchingLabels{desired.ManagedByLabel: desired.ManagedBy})).To(Succeed())
	g.Expect(entries.Items).To(BeEmpty(), "no directory entry leaked")
	injected := op.client.Count(faults.Injected)
	g.Expect(injected).To(BeNumerically(">", 0), "the plan injected faults")
	t.Logf("%d of %d writes failed by the plan; %d DNS API requests", injected, op.client.Count(faults.Writes), op.dns.Requests()["GET"]+op.dns.Requests()["PUT"]+op.dns.Requests()["DELETE"])
}
