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

package patch_test

// Conditions that carry more than metav1.Condition: a Node's lastHeartbeatTime, a Pod's
// lastProbeTime, any field a CRD's condition type adds. The Helper and the Applier must keep every
// field of every condition: ours as we set them, and theirs as they are.

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"
)

// at returns a time on a whole second, as the API server keeps it.
func at(s string) metav1.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return metav1.NewTime(t.Local()) // as metav1.Time decodes it
}

// newNode creates a Node whose status has a kubelet-like Ready condition with a heartbeat and a
// condition of ours, and deletes it when the test ends.
func newNode(t *testing.T, g Gomega) *corev1.Node {
	t.Helper()
	ctx := t.Context()
	c := env.Client()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + rand.String(8)}}
	g.Expect(c.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, node) })
	node.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
			LastHeartbeatTime: at("2026-01-01T00:00:10Z"), LastTransitionTime: at("2026-01-01T00:00:00Z")},
		{Type: "example.com/Ours", Status: corev1.ConditionTrue, Reason: "Checked", Message: "first",
			LastHeartbeatTime: at("2026-01-01T00:00:20Z"), LastTransitionTime: at("2026-01-01T00:00:00Z")},
	}
	g.Expect(c.Status().Update(ctx, node)).To(Succeed())
	return node
}

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func TestPatchKeepsEveryFieldOfConditionsThatCarryMoreThanMetav1Condition(t *testing.T) {
	ours := corev1.NodeConditionType("example.com/Ours")
	for _, tc := range []struct {
		name string
		// theirs is another writer's change on the server after the snapshot, or nil.
		theirs func(*corev1.Node)
		// change is the reconcile's change.
		change func(*corev1.Node)
		want   func(g Gomega, got *corev1.Node)
	}{{
		name: "a condition appended with a heartbeat is written with it",
		change: func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
				Type: "example.com/Added", Status: corev1.ConditionFalse, Reason: "Probed",
				LastHeartbeatTime: at("2026-01-01T00:01:00Z"), LastTransitionTime: at("2026-01-01T00:01:00Z")})
		},
		want: func(g Gomega, got *corev1.Node) {
			g.Expect(nodeCondition(got, "example.com/Added")).NotTo(BeNil())
			g.Expect(nodeCondition(got, "example.com/Added").LastHeartbeatTime).To(Equal(at("2026-01-01T00:01:00Z")))
		},
	}, {
		name: "a change of the heartbeat alone is written, not dropped",
		change: func(n *corev1.Node) {
			nodeCondition(n, ours).LastHeartbeatTime = at("2026-01-01T00:02:00Z")
		},
		want: func(g Gomega, got *corev1.Node) {
			g.Expect(nodeCondition(got, ours).LastHeartbeatTime).To(Equal(at("2026-01-01T00:02:00Z")))
		},
	}, {
		name: "a change of our condition's message keeps the heartbeat of a condition it did not touch",
		change: func(n *corev1.Node) {
			nodeCondition(n, ours).Message = "second"
		},
		want: func(g Gomega, got *corev1.Node) {
			g.Expect(nodeCondition(got, ours).Message).To(Equal("second"))
			g.Expect(nodeCondition(got, ours).LastHeartbeatTime).To(Equal(at("2026-01-01T00:00:20Z")))
			g.Expect(nodeCondition(got, corev1.NodeReady).LastHeartbeatTime).To(Equal(at("2026-01-01T00:00:10Z")))
		},
	}, {
		name: "another writer's new heartbeat survives a change of our condition",
		theirs: func(n *corev1.Node) {
			nodeCondition(n, corev1.NodeReady).LastHeartbeatTime = at("2026-01-01T00:05:00Z")
		},
		change: func(n *corev1.Node) {
			nodeCondition(n, ours).Message = "second"
		},
		want: func(g Gomega, got *corev1.Node) {
			g.Expect(nodeCondition(got, ours).Message).To(Equal("second"))
			g.Expect(nodeCondition(got, corev1.NodeReady).LastHeartbeatTime).To(Equal(at("2026-01-01T00:05:00Z")))
		},
	}, {
		name: "an owned condition is written whole, as the guarantee table says: ours wins over another writer's heartbeat of it",
		theirs: func(n *corev1.Node) {
			nodeCondition(n, ours).LastHeartbeatTime = at("2026-01-01T00:06:00Z")
		},
		change: func(n *corev1.Node) {
			nodeCondition(n, ours).Message = "second"
		},
		want: func(g Gomega, got *corev1.Node) {
			// The condition is owned: ours wins whole, as the guarantee table says.
			g.Expect(nodeCondition(got, ours).Message).To(Equal("second"))
			g.Expect(nodeCondition(got, ours).LastHeartbeatTime).To(Equal(at("2026-01-01T00:00:20Z")))
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			c := env.Client()
			node := newNode(t, g)
			h, err := patch.NewHelper(node, c)
			g.Expect(err).NotTo(HaveOccurred())
			if tc.theirs != nil {
				theirs := node.DeepCopy()
				tc.theirs(theirs)
				g.Expect(c.Status().Update(ctx, theirs)).To(Succeed())
			}
			tc.change(node)

			g.Expect(h.Patch(ctx, node, patch.OwnedConditions{conditions.Type(ours)})).To(Succeed())

			got := &corev1.Node{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
			tc.want(g, got)
			g.Expect(node.Status.Conditions).To(Equal(got.Status.Conditions), "Patch leaves obj as the server has it")
		})
	}
}

func TestPatchKeepsAnotherWritersConditionFieldsInAnUnstructuredObject(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	node := newNode(t, g)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), u)).To(Succeed())
	h, err := patch.NewHelper(u, c)
	g.Expect(err).NotTo(HaveOccurred())

	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, e := range list {
		if m := e.(map[string]any); m["type"] == "example.com/Ours" {
			m["message"] = "second"
		}
	}
	g.Expect(unstructured.SetNestedSlice(u.Object, list, "status", "conditions")).To(Succeed())
	g.Expect(h.Patch(ctx, u, patch.OwnedConditions{"example.com/Ours"})).To(Succeed())

	got := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	want := node.Status.Conditions
	nodeCondition(node, "example.com/Ours").Message = "second"
	g.Expect(cmp.Diff(want, got.Status.Conditions)).To(BeEmpty())
}

func TestPatchKeepsAPodConditionsProbeTime(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: env.Namespace(t)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastProbeTime: at("2026-01-01T00:00:30Z"), LastTransitionTime: at("2026-01-01T00:00:00Z")},
	}
	g.Expect(c.Status().Update(ctx, pod)).To(Succeed())
	h, err := patch.NewHelper(pod, c)
	g.Expect(err).NotTo(HaveOccurred())

	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: "example.com/Gate", Status: corev1.ConditionTrue, LastProbeTime: at("2026-01-01T00:01:30Z"), LastTransitionTime: at("2026-01-01T00:01:00Z")})
	g.Expect(h.Patch(ctx, pod, patch.OwnedConditions{"example.com/Gate"})).To(Succeed())

	got := &corev1.Pod{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	g.Expect(got.Status.Conditions).To(HaveLen(2))
	g.Expect(got.Status.Conditions[0].LastProbeTime).To(Equal(at("2026-01-01T00:00:30Z")))
	g.Expect(got.Status.Conditions[1].LastProbeTime).To(Equal(at("2026-01-01T00:01:30Z")))
}

func TestApplyStatusKeepsEveryFieldOfConditionsThatCarryMoreThanMetav1Condition(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	node := newNode(t, g)
	a := patch.NewApplier(c, "node-checker", patch.ApplierOptions{})

	desired := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name}}
	desired.Status.Conditions = []corev1.NodeCondition{{
		Type: "example.com/Checked", Status: corev1.ConditionTrue, Reason: "Probed", Message: "ok",
		LastHeartbeatTime: at("2026-01-01T00:03:00Z"),
	}}
	_, err := a.ApplyStatus(ctx, desired, patch.OwnedConditions{"example.com/Checked"})
	g.Expect(err).NotTo(HaveOccurred())

	got := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	checked := nodeCondition(got, "example.com/Checked")
	g.Expect(checked).NotTo(BeNil())
	g.Expect(checked.LastHeartbeatTime).To(Equal(at("2026-01-01T00:03:00Z")))
	g.Expect(checked.LastTransitionTime.IsZero()).To(BeFalse())
	g.Expect(nodeCondition(got, corev1.NodeReady).LastHeartbeatTime).To(Equal(at("2026-01-01T00:00:10Z")))

	// A new heartbeat alone is applied; the transition time stays.
	transition := checked.LastTransitionTime
	desired = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name}}
	desired.Status.Conditions = []corev1.NodeCondition{{
		Type: "example.com/Checked", Status: corev1.ConditionTrue, Reason: "Probed", Message: "ok",
		LastHeartbeatTime: at("2026-01-01T00:04:00Z"),
	}}
	changed, err := a.ApplyStatus(ctx, desired, patch.OwnedConditions{"example.com/Checked"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	g.Expect(nodeCondition(got, "example.com/Checked").LastHeartbeatTime).To(Equal(at("2026-01-01T00:04:00Z")))
	g.Expect(nodeCondition(got, "example.com/Checked").LastTransitionTime).To(Equal(transition))
}

// TestApplyStatusOfAConditionWithoutAStatusSendsNothingInTheNextSecond applies, to a StatefulSet,
// a condition without a status: the API server returns it with the status "" (the Go type
// requires the field). A later apply of the same condition, in another second, must find the
// status unchanged and keep the transition time, and so send nothing; it used to take "" for a
// new status and stamp the current time, a write each second.
func TestApplyStatusOfAConditionWithoutAStatusSendsNothingInTheNextSecond(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db:1"}}},
			},
		},
	}
	g.Expect(env.Client().Create(ctx, sts)).To(Succeed())
	c := newCountingClient(t)
	a := patch.NewApplier(c, "sts-checker", patch.ApplierOptions{})
	desired := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db", "namespace": ns},
			"status": map[string]any{"replicas": int64(1), "conditions": []any{map[string]any{"type": "Progressing"}}},
		}}
	}
	_, err := a.ApplyStatus(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	first := time.Now().Unix()
	c.take()

	g.Eventually(func() int64 { return time.Now().Unix() }).WithTimeout(3*time.Second).Should(BeNumerically(">", first), "the next second")
	fresh := patch.NewApplier(c, "sts-checker", patch.ApplierOptions{}) // proves from managedFields, as after a restart
	changed, err := fresh.ApplyStatus(ctx, desired())

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}), "a read, no write")
}
