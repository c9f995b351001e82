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

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/matchers"
)

func podTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "web",
			Image: image,
			Args:  []string{"--port", "8080"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}},
		}}},
	}
}

func desiredDeployment(ns string, replicas int32) client.Object {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate("nginx:1.27"),
		},
	}
}

func desiredStatefulSet(ns string, replicas int32) client.Object {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:    podTemplate("postgres:17"),
		},
	}
}

func desiredConfigMap(ns string, replicas int32) client.Object {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "config", "namespace": ns},
		"data":       map[string]any{"replicas": string(rune('0' + replicas))},
	}}
	return u
}

func TestApplySendsOneWriteThenNone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired func(ns string, replicas int32) client.Object
	}{
		{"a typed Deployment", desiredDeployment},
		{"a typed StatefulSet", desiredStatefulSet},
		{"an unstructured ConfigMap", desiredConfigMap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

			obj := tc.desired(ns, 1)
			changed, err := a.Apply(ctx, obj)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}), "the first apply creates")
			g.Expect(obj.GetResourceVersion()).NotTo(BeEmpty(), "obj holds the live object")
			g.Expect(obj.GetUID()).NotTo(BeEmpty())

			// The server defaulted many fields; the same desired object again is not sent.
			for range 3 {
				changed, err = a.Apply(ctx, tc.desired(ns, 1))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeFalse())
			}
			g.Expect(c.take()).To(Equal(counts{"get": 3}), "no write for an unchanged desired object")

			// A restarted controller (a new Applier, nothing remembered) compares with the live
			// object and its managedFields, and does not send either.
			restarted := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			changed, err = restarted.Apply(ctx, tc.desired(ns, 1))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(c.take()).To(Equal(counts{"get": 1}), "no write after a restart")

			// A change is sent, once.
			for range 2 {
				_, err = a.Apply(ctx, tc.desired(ns, 2))
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(c.take()).To(Equal(counts{"get": 2, "apply": 1}))
			// Another field manager's change to a field we do not set does not trigger an apply.
			live := tc.desired(ns, 2)
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
			live.SetAnnotations(map[string]string{"someone-else": "was here"})
			g.Expect(env.Client().Update(ctx, live)).To(Succeed())
			changed, err = a.Apply(ctx, tc.desired(ns, 2))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(c.take()).To(Equal(counts{"get": 1}))
		})
	}
}

// TestAProofAfterAnApplyReadsTheFieldSetTheServerRecorded: the API server records in the
// manager's entry the field set it computed for an apply from the kind's schema, so that a
// proof of the same apply on an object another writer changed since does not compute it again.
func TestAProofAfterAnApplyReadsTheFieldSetTheServerRecorded(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	reads := patch.CountSchemaReads(a)

	_, err := a.Apply(ctx, desiredDeployment(ns, 1))
	g.Expect(err).NotTo(HaveOccurred())
	live := &appsv1.Deployment{}
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, live)).To(Succeed())
	live.Status.ObservedGeneration = live.Generation
	g.Expect(env.Client().Status().Update(ctx, live, client.FieldOwner("rollout"))).To(Succeed())
	c.take()

	changed, err := a.Apply(ctx, desiredDeployment(ns, 1))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}), "the object changed since the apply, and the proof shows the apply would not change it")
	g.Expect(reads.Load()).To(BeZero(), "the proof read the field set the server recorded for the same apply")

	// Another apply has another field set: the proof computes it from the schema.
	_, err = a.Apply(ctx, desiredDeployment(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}))
	restarted := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	reads = patch.CountSchemaReads(restarted)
	changed, err = restarted.Apply(ctx, desiredDeployment(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(reads.Load()).To(BeNumerically(">", 0), "an Applier that sent nothing computes the field set from the schema")
}

// laggingReader never finds anything, as a cache that has not yet seen an object.
type laggingReader struct{ client.Reader }

func (laggingReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
}

func TestApplyReportsNoChangeWhenTheReaderLagsBehind(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{Reader: laggingReader{}})

	changed, err := a.Apply(ctx, desiredConfigMap(ns, 1))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "created")
	// The reader does not see the object yet: the apply is sent, and changes nothing.
	changed, err = a.Apply(ctx, desiredConfigMap(ns, 1))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	changed, err = a.Apply(ctx, desiredConfigMap(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
}

func TestForceApplyRestoresAFieldAnotherManagerChanged(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
	_, err := a.Apply(ctx, desiredDeployment(ns, 3))
	g.Expect(err).NotTo(HaveOccurred())

	// Someone scales the Deployment by hand.
	live := &appsv1.Deployment{}
	g.Expect(env.Client().Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, live)).To(Succeed())
	live.Spec.Replicas = ptr.To(int32(5))
	g.Expect(env.Client().Update(ctx, live, client.FieldOwner("kubectl-edit"))).To(Succeed())

	// Without force, the apply reports the conflict; with force it wins.
	_, err = a.Apply(ctx, desiredDeployment(ns, 3))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	obj := desiredDeployment(ns, 3)
	changed, err := a.Apply(ctx, obj, patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(obj.(*appsv1.Deployment).Spec.Replicas).To(Equal(ptr.To(int32(3))))
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
	g.Expect(live.Spec.Replicas).To(Equal(ptr.To(int32(3))))
}

// statusOf returns a Widget that carries only the given conditions, as a controller builds its
// desired status from scratch.
func statusOf(w *testtypes.Widget, cs ...metav1.Condition) *testtypes.Widget {
	return &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace},
		Status:     testtypes.WidgetStatus{Conditions: cs},
	}
}

func condition(t conditions.Type, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message}
}

func TestApplyStatusKeepsTheTransitionTimeOfUnchangedConditions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	_, err := a.ApplyStatus(ctx, statusOf(w, condition(conditions.Ready, metav1.ConditionFalse, "Starting", "")))
	g.Expect(err).NotTo(HaveOccurred())
	live := get(g, w)
	started := conditions.Get(live, conditions.Ready).LastTransitionTime
	g.Expect(started.IsZero()).To(BeFalse())

	// A new message, the same status, rebuilt from scratch a while later: the time stays.
	later := condition(conditions.Ready, metav1.ConditionFalse, "Starting", "pulling images")
	later.LastTransitionTime = metav1.NewTime(started.Add(time.Hour))
	obj := statusOf(w, later)
	c.take()
	changed, err := a.ApplyStatus(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "status apply": 1}))
	got := conditions.Get(obj, conditions.Ready)
	g.Expect(got.Message).To(Equal("pulling images"))
	g.Expect(got.LastTransitionTime).To(Equal(started), "obj holds the live object, with the time carried over")
	g.Expect(cmp.Diff(obj.Status, get(g, w).Status)).To(BeEmpty())

	// Applying it again sends nothing, with or without the Applier's memory.
	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		changed, err = applier.ApplyStatus(ctx, statusOf(w, later))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
	}
	g.Expect(c.take()).To(Equal(counts{"get": 2}))

	// A flip moves the time.
	flipped := condition(conditions.Ready, metav1.ConditionTrue, "Running", "")
	_, err = a.ApplyStatus(ctx, statusOf(w, flipped))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conditions.Get(get(g, w), conditions.Ready).LastTransitionTime.Before(&started)).To(BeFalse())
	g.Expect(conditions.Get(get(g, w), conditions.Ready).Status).To(Equal(metav1.ConditionTrue))
}

func TestTwoFieldManagersOwnTwoConditions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "shared-status", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	const network, storage conditions.Type = "NetworkReady", "StorageReady"
	netCtrl := patch.NewApplier(env.Client(), "network-controller", patch.ApplierOptions{})
	storCtrl := patch.NewApplier(env.Client(), "storage-controller", patch.ApplierOptions{})

	// Each applies its own condition.
	_, err := netCtrl.ApplyStatus(ctx, statusOf(w, condition(network, metav1.ConditionFalse, "Allocating", "")))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = storCtrl.ApplyStatus(ctx, statusOf(w, condition(storage, metav1.ConditionTrue, "Bound", "")))
	g.Expect(err).NotTo(HaveOccurred())

	// The network controller reconciles from the object it read, which has both conditions, and
	// changes its own; OwnedConditions keeps it from claiming the other's.
	mine := get(g, w)
	conditions.MarkTrue(mine, network, "Allocated", "")
	// Meanwhile the storage controller changes its condition.
	_, err = storCtrl.ApplyStatus(ctx, statusOf(w, condition(storage, metav1.ConditionFalse, "Detached", "")))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = netCtrl.ApplyStatus(ctx, mine, patch.OwnedConditions{network})
	g.Expect(err).NotTo(HaveOccurred())

	latest := get(g, w)
	g.Expect(latest).To(matchers.HaveCondition(network, metav1.ConditionTrue, matchers.WithReason("Allocated")))
	g.Expect(latest).To(matchers.HaveCondition(storage, metav1.ConditionFalse, matchers.WithReason("Detached")), "the stale copy did not clobber it")

	// Each manager owns exactly its condition.
	owners := map[string]string{}
	for _, e := range latest.ManagedFields {
		if e.Subresource != "status" || e.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		for _, ct := range []conditions.Type{network, storage} {
			if e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `k:{\"type\":\"`+string(ct)+`\"}`) {
				owners[string(ct)] += e.Manager
			}
		}
	}
	g.Expect(owners).To(Equal(map[string]string{string(network): "network-controller", string(storage): "storage-controller"}))

	// A controller that stops reporting its condition removes it, and only it.
	_, err = storCtrl.ApplyStatus(ctx, statusOf(w))
	g.Expect(err).NotTo(HaveOccurred())
	latest = get(g, w)
	g.Expect(conditions.Get(latest, storage)).To(BeNil())
	g.Expect(latest).To(matchers.HaveCondition(network, metav1.ConditionTrue, matchers.WithReason("Allocated")))
}

// staleReader returns a fixed, older copy of one object, as a cache that has not seen the latest
// write yet.
type staleReader struct {
	client.Reader
	stale client.Object
}

func (r staleReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if key != client.ObjectKeyFromObject(r.stale) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.stale)
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj)
}

func TestApplySkipsWhenTheReaderHasNotCaughtUpWithItsLastApply(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	reader := &staleReader{}
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{Reader: reader})

	// Version 1, read back as the cache will keep it for a while.
	first := desiredConfigMap(ns, 1)
	reader.stale = first
	reader.Reader = c
	_, err := a.Apply(ctx, first)
	g.Expect(err).NotTo(HaveOccurred())
	stale := first.DeepCopyObject().(client.Object)
	reader.stale = stale
	// Version 2 is applied; the cache still shows version 1.
	changed, err := a.Apply(ctx, desiredConfigMap(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	c.take()

	changed, err = a.Apply(ctx, desiredConfigMap(ns, 2))

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(BeEmpty(), "the stale cache shows an older version than the last apply: nothing to send")
}
