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
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// eventuallyReady waits until the API server has cluster converged: Ready for its current
// generation, with a status that follows the convention (in particular, not Reconciling after a
// failed attempt that is being retried), and leaves cluster as read last.
func eventuallyReady(t testenv.TB, cluster *appsv1alpha1.Cluster) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster).To(matchers.BeReady())
		g.Expect(cluster).To(matchers.BeCompliant())
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
}

var _ = Describe("The Cluster controller", func() {
	It("a created cluster becomes ready with its children and DNS record", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("alpha")

		op.create(t, cluster)
		eventuallyReady(t, cluster)

		// The status follows the kstatus convention: tools and `kubectl wait` read it right.
		Expect(cluster).To(matchers.BeCompliant())
		Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusCurrent))
		Expect(cluster).To(matchers.HaveFinalizer(controller.FinalizerName))
		for _, c := range appsv1alpha1.DependentConditions() {
			Expect(cluster).To(matchers.HaveCondition(c, metav1.ConditionTrue, matchers.CurrentGeneration{}))
		}
		Expect(conditions.Get(cluster, conditions.Reconciling)).To(BeNil())
		Expect(conditions.Get(cluster, conditions.Stalled)).To(BeNil())
		Expect(cluster.Status.ObservedGeneration).To(Equal(cluster.Generation))
		Expect(cluster.Status.ReadyReplicas).To(Equal(int32(3)))
		Expect(cluster.Status.Endpoint).To(Equal("alpha.clusters.example.com"))
		out, err := env.Kubectl(ctx, "wait", "--for=condition=Ready", "--timeout=30s", "-n", cluster.Namespace, "clusters.apps.tenon.dev/alpha")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(ContainSubstring("condition met"))

		// Children in the Cluster's namespace are controlled by owner references.
		config := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "alpha-config"}, config)).To(Succeed())
		Expect(config).To(matchers.BeControlledBy(cluster))
		Expect(config.Data).To(Equal(map[string]string{"version": "1.4.2", "replicas": "3", "log-level": "info"}))
		svc := &corev1.Service{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "alpha"}, svc)).To(Succeed())
		Expect(svc).To(matchers.BeControlledBy(cluster))
		Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
		peers := &corev1.Service{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "alpha-peers"}, peers)).To(Succeed())
		Expect(peers).To(matchers.BeControlledBy(cluster))
		Expect(peers.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
		sts := &appsv1.StatefulSet{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "alpha"}, sts)).To(Succeed())
		Expect(sts).To(matchers.BeControlledBy(cluster))
		Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
		Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example.com/cluster:1.4.2"))

		// The directory entry is in another namespace, where no owner reference can point back: it
		// is tracked with ownership's labels and annotations instead.
		entry := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, op.directoryEntry(cluster), entry)).To(Succeed())
		Expect(entry.OwnerReferences).To(BeEmpty())
		Expect(entry.Labels).To(HaveKeyWithValue(ownership.LabelOwnerUID, string(cluster.UID)))
		Expect(entry.Annotations).To(HaveKeyWithValue(ownership.AnnotationOwnerName, "alpha"))
		Expect(ownership.Owns(cluster, entry)).To(BeTrue())
		Expect(entry.Data).To(HaveKeyWithValue("dnsName", "alpha.clusters.example.com"))

		// The DNS record points at the Service, and says who owns it.
		record, ok := op.record("alpha.clusters.example.com")
		Expect(ok).To(BeTrue(), "records: %v", op.dns.Records())
		Expect(record.Status).To(Equal(clouddns.StatusInSync))
		Expect(record.Value).To(Equal(svc.Spec.ClusterIP))
		Expect(record.Owner).To(Equal(string(cluster.UID)))

		// Condition transitions are recorded as Events on the Cluster.
		Eventually(func(g Gomega) {
			var events eventsv1.EventList
			g.Expect(env.Client().List(ctx, &events, client.InNamespace(op.namespace))).To(Succeed())
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Name == "alpha" && e.Regarding.Kind == "Cluster" {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring("Ready changed")))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	})

	It("a DNS record deleted behind the operator's back is created again, once", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("drift")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		const name = "drift.clusters.example.com"

		// What the operator must remember about the record is in the Cluster: its name, created.
		var state struct{ Name, Phase string }
		Expect(json.Unmarshal([]byte(cluster.Annotations[external.AnnotationPrefix+"dns-record"]), &state)).To(Succeed())
		Expect(state.Name).To(Equal(name))
		Expect(state.Phase).To(Equal("Created"))

		api := &clouddns.Client{BaseURL: op.endpoint, Token: op.token}
		_, err := api.Delete(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool { _, ok := op.record(name); return ok }).WithTimeout(timeout).WithPolling(interval).Should(BeFalse())
		puts := op.dns.Requests()["PUT"]

		// Anything that wakes the controller (here an annotation; at the latest, the drift poll
		// every external.DefaultDriftInterval) finds the record gone and creates it again.
		Expect(env.Client().Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"example.com/touched":"now"}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			record, ok := op.record(name)
			g.Expect(ok).To(BeTrue(), "records: %v", op.dns.Records())
			g.Expect(record.Status).To(Equal(clouddns.StatusInSync))
			g.Expect(record.Owner).To(Equal(string(cluster.UID)))
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.DNSReady, metav1.ConditionTrue,
				matchers.WithReason(external.ReasonAvailable), matchers.CurrentGeneration{}))
			g.Expect(cluster).To(matchers.BeReady())
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		Expect(op.dns.Requests()["PUT"]-puts).To(Equal(1), "one create, and nothing else written to the provider")
		Expect(cluster.Status.Endpoint).To(Equal(name))
	})

	It("an outage of the DNS API leaves the endpoint and DNSReady as they were", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("outage")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		const name = "outage.clusters.example.com"
		Expect(cluster.Status.Endpoint).To(Equal(name))

		op.dns.SetFaults(clouddnstest.Faults{Down: true})
		gets := op.dns.Requests()["GET"]
		Expect(env.Client().Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"example.com/touched":"now"}}}`)))).To(Succeed())
		Eventually(func() int { return op.dns.Requests()["GET"] }).WithTimeout(timeout).WithPolling(interval).
			Should(BeNumerically(">", gets), "the controller looked at the record during the outage")

		// The record still resolves; the controller only cannot see it.
		Consistently(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster.Status.Endpoint).To(Equal(name))
			g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.DNSReady, metav1.ConditionTrue,
				matchers.WithReason(external.ReasonAvailable)))
		}).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		op.dns.SetFaults(clouddnstest.Faults{})
	})

	It("a DNS record annotation a person broke clears the endpoint with DNSReady", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("broken")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		Expect(cluster.Status.Endpoint).To(Equal("broken.clusters.example.com"))

		Expect(env.Client().Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"external.tenon.dev/dns-record":"{"}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.DNSReady, metav1.ConditionFalse,
				matchers.WithReason(external.ReasonObserveFailed)))
			g.Expect(cluster.Status.Endpoint).To(BeEmpty(), "no endpoint while DNSReady is not True")
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	})

	It("scaling a cluster catches up observed generation", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{kubeletDelay: 2 * time.Second})
		cluster := op.newCluster("scaled")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		Expect(cluster.Status.ObservedGeneration).To(Equal(int64(1)))

		generation := scale(t, cluster, 5)
		Expect(generation).To(Equal(int64(2)))

		// The new replicas become ready one every two seconds: meanwhile the Cluster says it is
		// rolling out, for the generation it was asked for, and kstatus reports it InProgress.
		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.WorkloadReady, metav1.ConditionFalse,
				matchers.WithReason(controller.ReasonRollingOut), matchers.CurrentGeneration{}))
			g.Expect(cluster).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.CurrentGeneration{}))
			g.Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusInProgress))
			g.Expect(cluster).To(matchers.BeCompliant())
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

		eventuallyReady(t, cluster)
		Expect(cluster.Status.ObservedGeneration).To(Equal(generation))
		Expect(cluster.Status.ReadyReplicas).To(Equal(int32(5)))
		Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusCurrent))
		sts := &appsv1.StatefulSet{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "scaled"}, sts)).To(Succeed())
		Expect(*sts.Spec.Replicas).To(Equal(int32(5)))
		config := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "scaled-config"}, config)).To(Succeed())
		Expect(config.Data).To(HaveKeyWithValue("replicas", "5"))
	})

	It("a rollout of many replicas is reported in a few status writes", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{kubeletDelay: 1200 * time.Millisecond})
		cluster := op.newCluster("rollout")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		statusWrites := faults.SelectorFunc(func(c faults.Call) bool {
			return c.Verb == faults.Patch && c.Subresource == "status" && c.Key.Name == cluster.Name && c.Outcome == faults.OK
		})
		op.client.Reset()

		// 6 more replicas, one ready every 1.2s: 7.2 seconds of rollout, a new replica count 6 times.
		generation := scale(t, cluster, 9)
		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.CurrentGeneration{}))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), "the new generation is reported at once")
		eventuallyReady(t, cluster)
		Expect(cluster.Status.ObservedGeneration).To(Equal(generation))
		Expect(cluster.Status.ReadyReplicas).To(Equal(int32(9)))

		// At once: the new generation (Ready False) and Ready True; in between, progress at most
		// every 5 seconds.
		writes := op.client.Calls(statusWrites)
		Expect(len(writes)).To(BeNumerically(">=", 2))
		Expect(len(writes)).To(BeNumerically("<=", 4), "one status write per replica count would be 7 or 8: %v", writes)
	})

	It("the reconcile after a stable one writes nothing", func() {
		t := GinkgoT()
		op := startOperator(t, operatorOptions{manual: true})
		cluster := op.newCluster("steady")
		op.create(t, cluster)
		// The reconciler reads through the manager's cache and writes to the API server, as in
		// production; the harness waits for the cache after each reconcile.
		h := &reconciletest.Harness{Reconciler: op.reconciler, Client: op.client, Cache: op.mgr.GetCache(), Reader: env.Client(), MaxSteps: 20}
		req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cluster)}

		// The kubelet reports the replicas ready in the background; in a running controller, the
		// StatefulSet's status change would trigger the next reconcile.
		Eventually(func(g Gomega) {
			g.Expect(h.Reconcile(t, req).Err).NotTo(HaveOccurred())
			g.Expect(env.Client().Get(t.Context(), req.NamespacedName, cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.BeReady())
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())

		h.AssertIdempotent(t, req)

		Expect(op.client.Count(faults.Writes, faults.Failed)).To(BeZero(), "no write failed: %v", op.client.Calls(faults.Failed))
		last := h.Steps()[len(h.Steps())-1]
		Expect(last.Writes()).To(BeEmpty())
		Expect(last.Calls).NotTo(BeEmpty(), "the last reconcile did read everything again")

		// Another writer's change to a child (the StatefulSet controller's status, a person's
		// annotation) touches no field the operator owns: the next reconcile still writes nothing.
		ctx := t.Context()
		sts := &appsv1.StatefulSet{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "steady"}, sts)).To(Succeed())
		sts.Annotations = map[string]string{"example.com/owner": "team-a"}
		Expect(env.Client().Update(ctx, sts)).To(Succeed())
		svc := &corev1.Service{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "steady"}, svc)).To(Succeed())
		svc.Annotations = map[string]string{"example.com/owner": "team-a"}
		Expect(env.Client().Update(ctx, svc)).To(Succeed())
		Expect(env.WaitUntilSeen(ctx, op.mgr.GetCache(), sts)).To(Succeed())
		Expect(env.WaitUntilSeen(ctx, op.mgr.GetCache(), svc)).To(Succeed())

		step := h.Reconcile(t, req)

		Expect(step.Err).NotTo(HaveOccurred())
		Expect(step.Writes()).To(BeEmpty(), "%s", step)
	})

	It("a child edited by hand is restored", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("restored")
		op.create(t, cluster)
		eventuallyReady(t, cluster)

		config := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "restored-config"}, config)).To(Succeed())
		config.Data["version"] = "0.0.1"
		Expect(env.Client().Update(ctx, config)).To(Succeed())
		sts := &appsv1.StatefulSet{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "restored"}, sts)).To(Succeed())
		sts.Spec.Replicas = ptr.To(int32(1))
		Expect(env.Client().Update(ctx, sts)).To(Succeed())
		// The directory entry is in another namespace: only ownership.EnqueueOwner maps its events
		// back to the Cluster.
		entry := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, op.directoryEntry(cluster), entry)).To(Succeed())
		entry.Data["dnsName"] = "hijacked.example.com"
		Expect(env.Client().Update(ctx, entry)).To(Succeed())
		svc := &corev1.Service{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: op.namespace, Name: "restored"}, svc)).To(Succeed())
		Expect(env.Client().Delete(ctx, svc)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(config), config)).To(Succeed())
			g.Expect(config.Data).To(HaveKeyWithValue("version", "1.4.2"))
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(Equal(int32(3)))
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(entry), entry)).To(Succeed())
			g.Expect(entry.Data).To(HaveKeyWithValue("dnsName", "restored.clusters.example.com"))
			recreated := &corev1.Service{}
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(svc), recreated)).To(Succeed())
			g.Expect(recreated.UID).NotTo(Equal(svc.UID))
			g.Expect(recreated).To(matchers.BeControlledBy(cluster))
			// The new Service has a new address: the DNS record follows it.
			record, ok := op.record("restored.clusters.example.com")
			g.Expect(ok).To(BeTrue())
			g.Expect(record.Value).To(Equal(recreated.Spec.ClusterIP))
			g.Expect(record.Status).To(Equal(clouddns.StatusInSync))
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.BeReady())
			g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.DNSReady, metav1.ConditionTrue,
				matchers.WithMessage(recreated.Spec.ClusterIP)))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	})

	It("deleting a cluster cleans up everything", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("doomed")
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		children := []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: op.namespace, Name: "doomed-config"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: op.namespace, Name: "doomed"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: op.namespace, Name: "doomed-peers"}},
			&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: op.namespace, Name: "doomed"}},
		}
		entry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: op.directory, Name: op.directoryEntry(cluster).Name}}
		Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(entry), entry)).To(Succeed())
		_, ok := op.record("doomed.clusters.example.com")
		Expect(ok).To(BeTrue())

		Expect(env.Client().Delete(ctx, cluster)).To(Succeed())

		Eventually(cluster).WithTimeout(timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
		Expect(op.dns.Records()).To(BeEmpty(), "the finalizer deleted the DNS record")
		Expect(entry).To(matchers.BeGone(env.Client()), "the finalizer deleted the tracked directory entry")
		// The garbage collector deletes the children that have owner references.
		for _, child := range children {
			Eventually(child).WithTimeout(timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
		}
	})

	It("deletion waits for the DNS API and says why", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("patient")
		op.create(t, cluster)
		eventuallyReady(t, cluster)

		op.dns.SetFaults(clouddnstest.Faults{Down: true})
		Expect(env.Client().Delete(ctx, cluster)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue, matchers.WithReason(finalizer.ReasonCleanupFailed),
				matchers.WithMessage("step dns-record failed"), matchers.WithMessage("503 service unavailable")))
			g.Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusTerminating))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		// While the API is down, nothing is released: the record (which cannot be deleted) and the
		// directory entry (whose step comes after the record's) stay, and so does the Cluster.
		Consistently(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveFinalizer(controller.FinalizerName))
			g.Expect(env.Client().Get(ctx, op.directoryEntry(cluster), &corev1.ConfigMap{})).To(Succeed())
			g.Expect(op.dns.Records()).To(HaveLen(1))
		}).WithTimeout(3 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		op.dns.SetFaults(clouddnstest.Faults{})

		Eventually(cluster).WithTimeout(2 * timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
		Expect(op.dns.Records()).To(BeEmpty())
		Expect(env.Client().Get(ctx, op.directoryEntry(cluster), &corev1.ConfigMap{})).To(Satisfy(apierrors.IsNotFound))
	})

	It("a person releases a wedged finalizer with the annotation that names the deletion", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("abandoned")
		// Kept in Git with the manifest: the plain name, there before any deletion.
		cluster.Annotations = map[string]string{finalizer.ReleaseAnnotation: controller.FinalizerName}
		op.create(t, cluster)
		eventuallyReady(t, cluster)

		op.dns.SetFaults(clouddnstest.Faults{Down: true})
		Expect(env.Client().Delete(ctx, cluster)).To(Succeed())

		// The annotation was there when the operator first saw the deletion: it releases nothing,
		// and a Warning Event gives the value that would.
		Eventually(func(g Gomega) {
			g.Expect(clusterEvents(g, op, cluster.Name)).To(ContainElement(And(
				ContainSubstring(string(finalizer.ReasonReleaseIgnored)), ContainSubstring(controller.FinalizerName+"@"))))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster).To(matchers.HaveFinalizer(controller.FinalizerName))
		}).WithTimeout(2 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		// kubectl annotate --overwrite with the value for this deletion. The operator's cache
		// strips the Clusters' managedFields; the release works without them.
		before := cluster.DeepCopy()
		cluster.Annotations[finalizer.ReleaseAnnotation] = finalizer.ReleaseValue(cluster, controller.FinalizerName)
		Expect(env.Client().Patch(ctx, cluster, client.MergeFrom(before), client.FieldOwner("kubectl-annotate"))).To(Succeed())

		Eventually(cluster).WithTimeout(timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
		// What the steps would have cleaned up is left behind, and the Event says so.
		Expect(op.dns.Records()).To(HaveLen(1))
		Expect(env.Client().Get(ctx, op.directoryEntry(cluster), &corev1.ConfigMap{})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(clusterEvents(g, op, cluster.Name)).To(ContainElement(And(
				ContainSubstring(string(finalizer.ReasonReleased)), ContainSubstring("steps dns-record"))))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	})

	It("a retained cluster keeps its DNS record and still deletes its directory entry", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{})
		cluster := op.newCluster("kept")
		cluster.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyRetain
		op.create(t, cluster)
		eventuallyReady(t, cluster)
		entry := op.directoryEntry(cluster)
		Expect(env.Client().Get(ctx, entry, &corev1.ConfigMap{})).To(Succeed())

		Expect(env.Client().Delete(ctx, cluster)).To(Succeed())

		Eventually(cluster).WithTimeout(timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()))
		record, ok := op.record("kept.clusters.example.com")
		Expect(ok).To(BeTrue(), "the retained DNS record is kept: %v", op.dns.Records())
		Expect(record.Owner).To(Equal(string(cluster.UID)))
		Expect(env.Client().Get(ctx, entry, &corev1.ConfigMap{})).To(Satisfy(apierrors.IsNotFound),
			"retaining the external record does not leak the tracked directory entry")
		Eventually(func(g Gomega) {
			g.Expect(clusterEvents(g, op, cluster.Name)).To(ContainElement(And(
				ContainSubstring(string(finalizer.ReasonRetained)), ContainSubstring("dns-record"))))
		}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
	})

	It("bad DNS credentials stall the cluster until the secret is fixed", func() {
		t := GinkgoT()
		ctx := t.Context()
		op := startOperator(t, operatorOptions{noSecret: true})
		cluster := op.newCluster("locked")
		op.create(t, cluster)
		stalled := func(message string) {
			t.Helper()
			Eventually(func(g Gomega) {
				g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
				g.Expect(cluster).To(matchers.HaveCondition(conditions.Stalled, metav1.ConditionTrue,
					matchers.WithReason(dns.ReasonInvalidCredentials), matchers.WithMessage(message), matchers.CurrentGeneration{}))
				g.Expect(cluster).To(matchers.HaveCondition(appsv1alpha1.DNSReady, metav1.ConditionFalse,
					matchers.WithReason(dns.ReasonInvalidCredentials), matchers.WithMessage(message)))
				g.Expect(cluster).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.CurrentGeneration{}))
				g.Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusFailed))
				g.Expect(cluster).To(matchers.BeCompliant())
			}).WithTimeout(timeout).WithPolling(interval).Should(Succeed())
		}

		stalled("secret " + op.secret.String() + " does not exist")

		op.writeToken(t, "not-the-token")
		stalled("the DNS provider refused the token in secret " + op.secret.String())
		status, err := json.Marshal(cluster.Status)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(status)).NotTo(ContainSubstring("not-the-token"), "a token never appears in the status")

		op.writeToken(t, op.token)
		eventuallyReady(t, cluster)
		Expect(conditions.Get(cluster, conditions.Stalled)).To(BeNil())
		Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusCurrent))
		Expect(op.dns.Records()).To(HaveLen(1))
	})
})

// clusterEvents returns the reason and note of every Event about the Cluster called name in the
// operator's namespace, as "<reason> <note>".
func clusterEvents(g Gomega, op *operator, name string) []string {
	var events eventsv1.EventList
	g.Expect(env.Client().List(context.Background(), &events, client.InNamespace(op.namespace))).To(Succeed())
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Regarding.Kind == "Cluster" {
			notes = append(notes, e.Reason+" "+e.Note)
		}
	}
	return notes
}
