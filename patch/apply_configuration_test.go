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
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// deploymentConfiguration is desiredDeployment as an apply configuration.
func deploymentConfiguration(ns string, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment("web", ns).WithLabels(map[string]string{"app": "web"}).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).WithSpec(corev1ac.PodSpec().WithContainers(
			corev1ac.Container().WithName("web").WithImage("nginx:1.27").WithArgs("--port", "8080").
				WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(8080).WithProtocol(corev1.ProtocolTCP)).
				WithEnv(corev1ac.EnvVar().WithName("MODE").WithValue("production")),
		))))
}

// shapeConfiguration is an apply configuration of the Shape custom resource, which has no
// generated apply configurations.
func shapeConfiguration(ns string, replicas int32) runtime.ApplyConfiguration {
	return client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testtypes.GroupVersion.String(),
		"kind":       "Shape",
		"metadata":   map[string]any{"name": "shape", "namespace": ns, "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"count": int64(replicas),
			"ports": []any{map[string]any{"name": "http", "port": int64(80)}},
			"tags":  []any{"a", "b"},
		},
	}})
}

// identityOf returns the resourceVersion and UID an apply configuration holds.
func identityOf(g Gomega, ac runtime.ApplyConfiguration) (resourceVersion, uid string) {
	data, err := json.Marshal(ac)
	g.Expect(err).NotTo(HaveOccurred())
	var m struct {
		Metadata struct{ ResourceVersion, UID string }
	}
	g.Expect(json.Unmarshal(data, &m)).To(Succeed())
	return m.Metadata.ResourceVersion, m.Metadata.UID
}

func TestApplyConfigurationSendsOneWriteThenNone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired func(ns string, replicas int32) runtime.ApplyConfiguration
	}{
		{"a client-go ConfigMap", func(ns string, r int32) runtime.ApplyConfiguration {
			return corev1ac.ConfigMap("config", ns).WithData(map[string]string{"replicas": string(rune('0' + r))})
		}},
		{"a client-go Deployment", func(ns string, r int32) runtime.ApplyConfiguration { return deploymentConfiguration(ns, r) }},
		{"an unstructured custom resource", shapeConfiguration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

			ac := tc.desired(ns, 1)
			changed, err := a.ApplyConfiguration(ctx, ac)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}), "the first apply creates")
			rv, uid := identityOf(g, ac)
			g.Expect(rv).NotTo(BeEmpty(), "ac holds the live object")
			g.Expect(uid).NotTo(BeEmpty())

			for range 3 {
				ac = tc.desired(ns, 1)
				changed, err = a.ApplyConfiguration(ctx, ac)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeFalse())
				got, _ := identityOf(g, ac)
				g.Expect(got).To(Equal(rv), "a skipped apply leaves ac holding the live object")
			}
			g.Expect(c.take()).To(Equal(counts{"get": 3}), "no write for an unchanged apply configuration")

			restarted := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			changed, err = restarted.ApplyConfiguration(ctx, tc.desired(ns, 1))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(c.take()).To(Equal(counts{"get": 1}), "no write after a restart")

			for range 2 {
				_, err = a.ApplyConfiguration(ctx, tc.desired(ns, 2))
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(c.take()).To(Equal(counts{"get": 2, "apply": 1}), "a change is sent once")
		})
	}
}

func TestAnApplyConfigurationAfterATypedApplyOfTheSameFieldsSendsNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	_, err := a.Apply(ctx, desiredDeployment(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	c.take()

	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		changed, err := applier.ApplyConfiguration(ctx, deploymentConfiguration(ns, 2))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(c.take()).To(Equal(counts{"get": 1}), "the same request, remembered or proved")
	}
	// And back.
	changed, err := a.Apply(ctx, desiredDeployment(ns, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}))
}

func TestAnApplyConfigurationDeclaresNoZeroValues(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	// A typed NetworkPolicy sends its podSelector, a struct without omitempty, even unset: the
	// manager owns it, as an empty selector (every pod).
	typed := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: ns},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}
	_, err := a.Apply(ctx, typed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ownedFields(typed, "tenon-test")).To(ContainSubstring(`"f:podSelector"`))
	c.take()

	// The apply configuration sets only the policy types: the manager lets go of the selector.
	desired := func() *networkingv1ac.NetworkPolicyApplyConfiguration {
		return networkingv1ac.NetworkPolicy("deny", ns).WithSpec(networkingv1ac.NetworkPolicySpec().WithPolicyTypes(networkingv1.PolicyTypeIngress))
	}
	changed, err := a.ApplyConfiguration(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}), "a different request: sent")
	live := &networkingv1.NetworkPolicy{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(typed), live)).To(Succeed())
	g.Expect(ownedFields(live, "tenon-test")).NotTo(ContainSubstring(`"f:podSelector"`))
	g.Expect(ownedFields(live, "tenon-test")).To(ContainSubstring(`"f:policyTypes"`))

	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		changed, err = applier.ApplyConfiguration(ctx, desired())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(c.take()).To(Equal(counts{"get": 1}))
	}
}

// widgetStatusConfiguration is an apply configuration of a Widget's status with one condition,
// without a transition time.
func widgetStatusConfiguration(w *testtypes.Widget, status metav1.ConditionStatus, reason, message string) runtime.ApplyConfiguration {
	return client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testtypes.GroupVersion.String(),
		"kind":       "Widget",
		"metadata":   map[string]any{"name": w.Name, "namespace": w.Namespace},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": string(conditions.Ready), "status": string(status), "reason": reason, "message": message,
		}}},
	}})
}

func TestApplyStatusConfigurationKeepsTheTransitionTimeOfUnchangedConditions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	changed, err := a.ApplyStatusConfiguration(ctx, widgetStatusConfiguration(w, metav1.ConditionFalse, "Starting", ""))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "status apply": 1}))
	started := conditions.Get(get(g, w), conditions.Ready).LastTransitionTime
	g.Expect(started.IsZero()).To(BeFalse(), "a new condition gets the current time")

	// A new message, the same status: the time stays.
	ac := widgetStatusConfiguration(w, metav1.ConditionFalse, "Starting", "pulling images")
	changed, err = a.ApplyStatusConfiguration(ctx, ac)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()).To(Equal(counts{"get": 1, "status apply": 1}))
	live := get(g, w)
	g.Expect(conditions.Get(live, conditions.Ready).Message).To(Equal("pulling images"))
	g.Expect(conditions.Get(live, conditions.Ready).LastTransitionTime).To(Equal(started))
	rv, _ := identityOf(g, ac)
	g.Expect(rv).To(Equal(live.ResourceVersion), "ac holds the live object")

	// Again, rebuilt from scratch, by this Applier, a restarted one, and as a typed object with
	// the same condition: the same request each time, not sent.
	for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		changed, err = applier.ApplyStatusConfiguration(ctx, widgetStatusConfiguration(w, metav1.ConditionFalse, "Starting", "pulling images"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
	}
	changed, err = a.ApplyStatus(ctx, statusOf(w, condition(conditions.Ready, metav1.ConditionFalse, "Starting", "pulling images")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 3}))
}

func TestApplyStatusConfigurationTakesClientGoConditions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrToIntOrString(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	g.Expect(env.Client().Create(ctx, pdb)).To(Succeed())
	c := newCountingClient(t)
	network := patch.NewApplier(c, "network-controller", patch.ApplierOptions{})
	storage := patch.NewApplier(c, "storage-controller", patch.ApplierOptions{})
	status := func(t, reason, message string) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
		return policyv1ac.PodDisruptionBudget("web", ns).WithStatus(policyv1ac.PodDisruptionBudgetStatus().WithConditions(
			metav1ac.Condition().WithType(t).WithStatus(metav1.ConditionTrue).WithReason(reason).WithMessage(message),
		))
	}

	_, err := network.ApplyStatusConfiguration(ctx, status("NetworkReady", "Allocated", "1 address"), patch.OwnedConditions{"NetworkReady"})
	g.Expect(err).NotTo(HaveOccurred())
	ac := status("StorageReady", "Attached", "")
	_, err = storage.ApplyStatusConfiguration(ctx, ac, patch.OwnedConditions{"StorageReady"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ac.Status.Conditions).To(HaveLen(2), "ac holds the live object, with both conditions")
	for _, cond := range ac.Status.Conditions {
		g.Expect(cond.LastTransitionTime).NotTo(BeNil(), "%s has a transition time", *cond.Type)
	}
	c.take()

	// The other controller's condition moved the object on: the list the network controller shares
	// cannot be proved unchanged, so its next apply is sent once and changes nothing; the one
	// after that is not sent.
	for _, want := range []counts{{"get": 1, "status apply": 1}, {"get": 1}} {
		changed, err := network.ApplyStatusConfiguration(ctx, status("NetworkReady", "Allocated", "1 address"), patch.OwnedConditions{"NetworkReady"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(c.take()).To(Equal(want))
	}
	var live policyv1.PodDisruptionBudget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(pdb), &live)).To(Succeed())
	g.Expect(strings.Contains(ownedFields(&live, "storage-controller"), `k:{\"type\":\"StorageReady\"}`)).To(BeTrue())
	g.Expect(strings.Contains(ownedFields(&live, "storage-controller"), "NetworkReady")).To(BeFalse(), "each manager owns its condition")
}

func TestAStatusApplyConfigurationDeclaresNoZeroValues(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	for _, name := range []string{"typed", "configured"} {
		g.Expect(env.Client().Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrToIntOrString(intstr.FromInt32(1))},
		})).To(Succeed())
	}
	a := patch.NewApplier(env.Client(), "network-controller", patch.ApplierOptions{})
	ready := metav1.Condition{Type: "NetworkReady", Status: metav1.ConditionTrue, Reason: "Allocated"}
	live := func(name string) *policyv1.PodDisruptionBudget {
		var pdb policyv1.PodDisruptionBudget
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pdb)).To(Succeed())
		return &pdb
	}

	// A typed status declares the counters the disruption controller maintains, as 0: the
	// controller that only means to set its condition owns them.
	_, err := a.ApplyStatus(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns},
		Status:     policyv1.PodDisruptionBudgetStatus{Conditions: []metav1.Condition{ready}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ownedFields(live("typed"), "network-controller")).To(ContainSubstring(`"f:disruptionsAllowed"`))

	// An apply configuration declares its condition only.
	_, err = a.ApplyStatusConfiguration(ctx, policyv1ac.PodDisruptionBudget("configured", ns).WithStatus(
		policyv1ac.PodDisruptionBudgetStatus().WithConditions(
			metav1ac.Condition().WithType(ready.Type).WithStatus(ready.Status).WithReason(ready.Reason),
		)))
	g.Expect(err).NotTo(HaveOccurred())
	owned := ownedFields(live("configured"), "network-controller")
	g.Expect(owned).To(ContainSubstring(`k:{\"type\":\"NetworkReady\"}`))
	g.Expect(owned).NotTo(ContainSubstring(`"f:disruptionsAllowed"`))
}

func ptrToIntOrString(v intstr.IntOrString) *intstr.IntOrString { return &v }
