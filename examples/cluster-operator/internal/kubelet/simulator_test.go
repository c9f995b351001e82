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

package kubelet_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"
)

// The simulator only computes a status from the spec: the fake client is enough here. Its
// behaviour against a real API server is exercised by the controller's envtest suite.

func statefulSet(replicas int32, image string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", Generation: 1, Labels: map[string]string{"app": "db"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: image}}}},
		},
	}
}

func setup(t *testing.T, sts *appsv1.StatefulSet, delay time.Duration) (*kubelet.Simulator, client.Client, *clocktesting.FakePassiveClock) {
	t.Helper()
	c := fake.NewClientBuilder().WithObjects(sts).WithStatusSubresource(sts).Build()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	return &kubelet.Simulator{Client: c, ReplicaDelay: delay, Clock: clock, Selector: labels.SelectorFromSet(labels.Set{"app": "db"})}, c, clock
}

func TestWithoutDelayARolloutCompletesAtOnce(t *testing.T) {
	g := NewWithT(t)
	s, c, _ := setup(t, statefulSet(3, "db:1"), 0)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "db"}}

	res, err := s.Reconcile(t.Context(), req)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.IsZero()).To(BeTrue())
	var got appsv1.StatefulSet
	g.Expect(c.Get(t.Context(), req.NamespacedName, &got)).To(Succeed())
	g.Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
	g.Expect(got.Status.Replicas).To(Equal(int32(3)))
	g.Expect(got.Status.ReadyReplicas).To(Equal(int32(3)))
	g.Expect(got.Status.UpdatedReplicas).To(Equal(int32(3)))
	g.Expect(got.Status.AvailableReplicas).To(Equal(int32(3)))
	g.Expect(got.Status.CurrentRevision).To(HavePrefix("db-"))
	g.Expect(got.Status.CurrentRevision).To(Equal(got.Status.UpdateRevision))
	rv := got.ResourceVersion

	_, err = s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Get(t.Context(), req.NamespacedName, &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(rv), "a rolled-out StatefulSet is not written again")
}

func TestReplicasBecomeReadyOneAfterTheOther(t *testing.T) {
	g := NewWithT(t)
	s, c, clock := setup(t, statefulSet(3, "db:1"), 2*time.Second)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "db"}}
	var got appsv1.StatefulSet
	ready := func() int32 {
		g.Expect(c.Get(t.Context(), req.NamespacedName, &got)).To(Succeed())
		return got.Status.ReadyReplicas
	}

	res, err := s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(2 * time.Second))
	g.Expect(ready()).To(BeZero())
	g.Expect(got.Status.ObservedGeneration).To(Equal(int64(1)), "the controller observes the spec at once")

	clock.SetTime(clock.Now().Add(2500 * time.Millisecond))
	res, err = s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(1500 * time.Millisecond))
	g.Expect(ready()).To(Equal(int32(1)))

	clock.SetTime(clock.Now().Add(4 * time.Second))
	res, err = s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(ready()).To(Equal(int32(3)))
	revision := got.Status.UpdateRevision

	// Scaling up keeps the ready replicas and waits for the new ones only.
	got.Spec.Replicas = ptr.To(int32(5))
	got.Generation = 2
	g.Expect(c.Update(t.Context(), &got)).To(Succeed())
	_, err = s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(Equal(int32(3)))
	g.Expect(got.Status.Replicas).To(Equal(int32(5)))
	g.Expect(got.Status.UpdateRevision).To(Equal(revision), "the pod template did not change")

	// A new pod template is a new revision, rolled out from scratch.
	got.Spec.Template.Spec.Containers[0].Image = "db:2"
	got.Generation = 3
	g.Expect(c.Update(t.Context(), &got)).To(Succeed())
	_, err = s.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(BeZero())
	g.Expect(got.Status.UpdateRevision).NotTo(Equal(revision))
	g.Expect(got.Status.CurrentRevision).To(Equal(revision), "the old pods run the old revision until the rollout ends")
	g.Expect(got.Status.CurrentReplicas).To(Equal(int32(5)))
}

func TestStatefulSetsOutsideTheSelectorAreLeftAlone(t *testing.T) {
	g := NewWithT(t)
	sts := statefulSet(1, "db:1")
	sts.Labels = map[string]string{"app": "other"}
	s, c, _ := setup(t, sts, 0)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sts)}

	_, err := s.Reconcile(t.Context(), req)

	g.Expect(err).NotTo(HaveOccurred())
	var got appsv1.StatefulSet
	g.Expect(c.Get(t.Context(), req.NamespacedName, &got)).To(Succeed())
	g.Expect(got.Status).To(Equal(appsv1.StatefulSetStatus{}))
}
