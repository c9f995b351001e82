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

// The Applier against mutating admission: what a policy changes as the object is applied is
// the manager's, and the Applier's memory of an apply skips the next one only where a dry run of
// it would change nothing.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// mutateIn installs a MutatingAdmissionPolicy that applies the JSON Patch expression patch to
// the resource (group "" or "apps") in namespace ns on the given operations, to objects with the
// label tenon-test-policy=<name> only, and waits until the API server applies it to probe (a dry run).
func mutateIn(t *testing.T, ns, name, group, resource string, ops []admissionv1.OperationType, patchExpr string, probe client.Object, applied func(client.Object) bool) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	full := name + "-" + ns
	policy := &admissionv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: full},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: ops,
					Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "labelled",
				Expression: "has(object.metadata.labels) && 'tenon-test-policy' in object.metadata.labels && object.metadata.labels['tenon-test-policy'] == '" + name + "'",
			}},
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1.JSONPatch{Expression: patchExpr},
			}},
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: full},
		Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: full,
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		g.Expect(env.Client().Create(ctx, obj)).To(Succeed())
		t.Cleanup(func() { _ = client.IgnoreNotFound(env.Client().Delete(context.Background(), obj)) })
	}
	g.Eventually(func() bool {
		p := probe.DeepCopyObject().(client.Object)
		if err := env.Client().Create(ctx, p, client.DryRunAll); err != nil {
			t.Logf("probe: %v", err)
			return false
		}
		return applied(p)
	}).WithTimeout(2*time.Minute).Should(BeTrue(), "the API server applies the mutating policy")
}

// dryRunDiff applies desired as a new Applier of manager would (one that remembers nothing and
// reads no managedFields, so it sends), as a dry run, and returns how the object would change
// (content or managedFields), "" for not at all.
func dryRunDiff(t *testing.T, desired client.Object, manager string, opts ...patch.ApplyCallOption) string {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	base, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	var response []byte
	dryRun := dryRunApplies(base, func(_, answer []byte) { response = answer })
	live := &unstructured.Unstructured{}
	gvk, err := apiutil.GVKForObject(desired, env.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	live.SetGroupVersionKind(gvk)
	g.Expect(base.Get(ctx, client.ObjectKeyFromObject(desired), live)).To(Succeed())
	probe := patch.NewApplier(dryRun, manager, patch.ApplierOptions{Reader: withoutManagedFields{base}})
	_, err = probe.Apply(ctx, desired.DeepCopyObject().(client.Object), opts...)
	g.Expect(err).NotTo(HaveOccurred())
	after := &unstructured.Unstructured{}
	g.Expect(after.UnmarshalJSON(response)).To(Succeed())
	return cmp.Diff(withoutFieldsMetadata(live), withoutFieldsMetadata(after)) + cmp.Diff(fieldSets(live), fieldSets(after))
}

// mutatedDeployment is a desired Deployment labelled for the mutating policy named policy, built
// from scratch as a controller does.
func mutatedDeployment(ns, policy string) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tenon-test-policy": policy}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{
					Containers:   []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
					NodeSelector: map[string]string{"disk": "ssd"},
					Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				},
			},
		},
	}
}

// mutatedConfigMap is a desired ConfigMap labelled for the mutating policy named policy.
func mutatedConfigMap(ns, policy string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: map[string]string{"app": "web", "tenon-test-policy": policy}},
		Data:       map[string]string{"value": "ours"},
	}
}

// mutationCase is a mutating admission policy's case: the desired object a controller applies,
// and the JSON Patch expression the policy applies to objects of group and resource labelled for
// it, which applied tells from the object.
type mutationCase struct {
	name            string
	policy          string
	group, resource string
	desired         func(ns, policy string) client.Object
	patch           string
	applied         func(client.Object) bool
}

// setUp installs the case's policy on ops in a namespace of its own, and returns the namespace,
// a client that counts requests and an Applier of the field manager "controller" on it.
func (tc mutationCase) setUp(t *testing.T, ops []admissionv1.OperationType) (string, *countingClient, *patch.Applier) {
	t.Helper()
	ns := env.Namespace(t)
	probe := tc.desired(ns, tc.policy)
	probe.SetName("probe")
	mutateIn(t, ns, tc.policy, tc.group, tc.resource, ops, tc.patch, probe, tc.applied)
	c := newCountingClient(t)
	return ns, c, patch.NewApplier(c, "controller", patch.ApplierOptions{})
}

// TestApplyOfWhatACreateOnlyMutationChangedIsNotSkipped has a mutating admission policy change,
// as the object is created only, a value the field manager owns: a scalar, a key of an atomic
// map, an element of an atomic list. Applying the same object again sets the value back (the
// policy does not run on updates), so the Applier must not skip that apply: a skip is promised
// only where the answer proves it, and a steady state then sends nothing.
func TestApplyOfWhatACreateOnlyMutationChangedIsNotSkipped(t *testing.T) {
	create := []admissionv1.OperationType{admissionv1.Create}
	for _, tc := range []mutationCase{{
		name:   "a scalar the manager owns (a ConfigMap's data value)",
		policy: "scalar", resource: "configmaps",
		desired: func(ns, p string) client.Object { return mutatedConfigMap(ns, p) },
		patch:   `[JSONPatch{op: "replace", path: "/data/value", value: "mutated"}]`,
		applied: func(o client.Object) bool { return o.(*corev1.ConfigMap).Data["value"] == "mutated" },
	}, {
		name:   "a key added to an atomic map (a pod template's nodeSelector)",
		policy: "atomicmap", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object { return mutatedDeployment(ns, p) },
		patch:   `[JSONPatch{op: "add", path: "/spec/template/spec/nodeSelector/zone", value: "a"}]`,
		applied: func(o client.Object) bool {
			return o.(*appsv1.Deployment).Spec.Template.Spec.NodeSelector["zone"] == "a"
		},
	}, {
		name:   "a string that reads as the same quantity (a ConfigMap's \"1\" made \"1.0\")",
		policy: "quantity", resource: "configmaps",
		desired: func(ns, p string) client.Object {
			cm := mutatedConfigMap(ns, p)
			cm.Data["value"] = "1"
			return cm
		},
		patch:   `[JSONPatch{op: "replace", path: "/data/value", value: "1.0"}]`,
		applied: func(o client.Object) bool { return o.(*corev1.ConfigMap).Data["value"] == "1.0" },
	}, {
		name:   "an empty value removed from an atomic map (a nodeSelector's gpu: \"\")",
		policy: "emptyvalue", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object {
			d := mutatedDeployment(ns, p)
			d.Spec.Template.Spec.NodeSelector["gpu"] = ""
			return d
		},
		patch: `[JSONPatch{op: "remove", path: "/spec/template/spec/nodeSelector/gpu"}]`,
		applied: func(o client.Object) bool {
			_, ok := o.(*appsv1.Deployment).Spec.Template.Spec.NodeSelector["gpu"]
			return !ok
		},
	}, {
		name:   "a zero removed from an atomic list's element (a toleration's tolerationSeconds: 0)",
		policy: "zero", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object {
			d := mutatedDeployment(ns, p)
			d.Spec.Template.Spec.Tolerations[0].Effect = corev1.TaintEffectNoExecute
			d.Spec.Template.Spec.Tolerations[0].TolerationSeconds = ptr.To[int64](0)
			return d
		},
		patch: `[JSONPatch{op: "remove", path: "/spec/template/spec/tolerations/0/tolerationSeconds"}]`,
		applied: func(o client.Object) bool {
			return o.(*appsv1.Deployment).Spec.Template.Spec.Tolerations[0].TolerationSeconds == nil
		},
	}, {
		name:   "an empty atomic map applied, filled (a nodeSelector applied as {})",
		policy: "emptymap", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object {
			u := &unstructured.Unstructured{}
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mutatedDeployment(ns, p))
			if err != nil {
				panic(err)
			}
			u.Object = obj
			u.SetAPIVersion("apps/v1")
			u.SetKind("Deployment")
			// The converter writes strategy: {}, which the server fills with defaults that no
			// manager owns: that costs one more apply after each change, not what is tested here.
			unstructured.RemoveNestedField(u.Object, "spec", "strategy")
			if err := unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "template", "spec", "nodeSelector"); err != nil {
				panic(err)
			}
			return u
		},
		patch: `[JSONPatch{op: "add", path: "/spec/template/spec/nodeSelector", value: {"zone": "a"}}]`,
		applied: func(o client.Object) bool {
			zone, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "template", "spec", "nodeSelector", "zone")
			return zone == "a"
		},
	}, {
		name:   "elements of a list of type map reordered (a pod template's containers)",
		policy: "reorder", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object {
			d := mutatedDeployment(ns, p)
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36"})
			return d
		},
		patch: `[JSONPatch{op: "move", from: "/spec/template/spec/containers/1", path: "/spec/template/spec/containers/0"}]`,
		applied: func(o client.Object) bool {
			return o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Name == "side"
		},
	}, {
		name:   "a second element of one key added (a container's env)",
		policy: "duplicate", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object {
			d := mutatedDeployment(ns, p)
			d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "ours"}}
			return d
		},
		patch: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/env/-", value: {"name": "A", "value": "theirs"}}]`,
		applied: func(o client.Object) bool {
			return len(o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env) == 2
		},
	}, {
		name:   "an element of an atomic list changed in place (a pod template's tolerations)",
		policy: "atomiclist", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object { return mutatedDeployment(ns, p) },
		patch:   `[JSONPatch{op: "replace", path: "/spec/template/spec/tolerations/0/effect", value: "NoExecute"}]`,
		applied: func(o client.Object) bool {
			return o.(*appsv1.Deployment).Spec.Template.Spec.Tolerations[0].Effect == corev1.TaintEffectNoExecute
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns, c, a := tc.setUp(t, create)

			_, err := a.Apply(ctx, tc.desired(ns, tc.policy))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(tc.applied(liveOf(g, tc.desired(ns, tc.policy)))).To(BeTrue(), "the policy changed the object as it was created")
			c.take()

			g.Expect(dryRunDiff(t, tc.desired(ns, tc.policy), "controller")).NotTo(BeEmpty(), "applying again sets the value back")
			_, err = a.Apply(ctx, tc.desired(ns, tc.policy))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.take()["apply"]).To(Equal(1), "the apply that sets the value back is sent")
			g.Expect(tc.applied(liveOf(g, tc.desired(ns, tc.policy)))).To(BeFalse(), "the apply set the value back")
			g.Expect(dryRunDiff(t, tc.desired(ns, tc.policy), "controller")).To(BeEmpty(), "applying again changes nothing")

			_, err = a.Apply(ctx, tc.desired(ns, tc.policy))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.take()["apply"]).To(BeZero(), "at steady state nothing is sent")
		})
	}
}

// TestAMutationOnEveryWriteLeavesASteadyStateThatSendsNothing has a mutating admission
// policy add to every create and update of the object (a label, as policy engines commonly
// inject; an element of an atomic list the manager owns). Applying the same object again is
// then a fixed point: the policy adds the same again, and a dry run changes nothing. A steady
// state must send nothing: after the apply the Applier sends once more to find out, the next
// ones are skipped.
func TestAMutationOnEveryWriteLeavesASteadyStateThatSendsNothing(t *testing.T) {
	always := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	for _, tc := range []mutationCase{{
		name:   "a label added to every write",
		policy: "label", resource: "configmaps",
		desired: func(ns, p string) client.Object { return mutatedConfigMap(ns, p) },
		patch:   `has(object.metadata.labels.injected) ? [] : [JSONPatch{op: "add", path: "/metadata/labels/injected", value: "true"}]`,
		applied: func(o client.Object) bool { return o.GetLabels()["injected"] == "true" },
	}, {
		name:   "a key added to an atomic map on every write (a pod template's nodeSelector)",
		policy: "atomicmap", group: "apps", resource: "deployments",
		desired: func(ns, p string) client.Object { return mutatedDeployment(ns, p) },
		patch:   `has(object.spec.template.spec.nodeSelector.zone) ? [] : [JSONPatch{op: "add", path: "/spec/template/spec/nodeSelector/zone", value: "a"}]`,
		applied: func(o client.Object) bool {
			return o.(*appsv1.Deployment).Spec.Template.Spec.NodeSelector["zone"] == "a"
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns, c, a := tc.setUp(t, always)

			var sent []int
			for range 4 {
				_, err := a.Apply(ctx, tc.desired(ns, tc.policy))
				g.Expect(err).NotTo(HaveOccurred())
				sent = append(sent, c.take()["apply"])
			}
			g.Expect(tc.applied(liveOf(g, tc.desired(ns, tc.policy)))).To(BeTrue())
			g.Expect(dryRunDiff(t, tc.desired(ns, tc.policy), "controller")).To(BeEmpty(), "applying again changes nothing")
			g.Expect(sent[2:]).To(Equal([]int{0, 0}), "applies sent by each of 4 reconciles: %v", sent)
		})
	}
}

// shapeWithoutB is a Go type for test.tenon.dev/v1 Shape that knows fewer fields than the CRD,
// as a hand-written type for a third-party CRD, or one older than the CRD installed, does: its
// atomic struct lacks b.
type shapeWithoutB struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Atomic *struct {
			A string `json:"a,omitempty"`
		} `json:"atomic,omitempty"`
	} `json:"spec,omitempty"`
}

// DeepCopyObject copies s through its JSON form.
func (s *shapeWithoutB) DeepCopyObject() runtime.Object {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	out := &shapeWithoutB{}
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}

// TestApplyOfAGoTypeThatLacksTheFieldAMutationAddsIsNotSkipped has a mutating admission policy
// add a field, as the object is created, to a struct the manager owns as a whole, and the
// controller apply the object with a Go type that lacks that field. The answer to the first
// apply, read into that type, cannot show the field; the API server's answer does, and applying
// again removes it, so that apply must be sent, and the next skipped.
func TestApplyOfAGoTypeThatLacksTheFieldAMutationAddsIsNotSkipped(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	const policy = "lackedfield"
	labels := map[string]string{"tenon-test-policy": policy}
	probe := newShapeIn(ns, testtypes.ShapeSpec{Atomic: &testtypes.ShapeNested{A: "a"}})
	probe.Name, probe.Labels = "probe", labels
	mutateIn(t, ns, policy, testtypes.GroupVersion.Group, "shapes", []admissionv1.OperationType{admissionv1.Create},
		`[JSONPatch{op: "add", path: "/spec/atomic/b", value: "added"}]`, asUnstructured(t, probe),
		func(o client.Object) bool {
			b, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "atomic", "b")
			return b == "added"
		})

	s := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(s)).To(Succeed())
	s.AddKnownTypeWithName(testtypes.GroupVersion.WithKind("Shape"), &shapeWithoutB{})
	metav1.AddToGroupVersion(s, testtypes.GroupVersion)
	base, err := client.NewWithWatch(env.Config(), client.Options{Scheme: s})
	g.Expect(err).NotTo(HaveOccurred())
	var applies int
	c := interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			applies++
			return cl.Apply(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if isApply(p) {
				applies++
			}
			return cl.Patch(ctx, obj, p, opts...)
		},
	})
	a := patch.NewApplier(c, "controller", patch.ApplierOptions{})
	desired := func() *shapeWithoutB {
		d := &shapeWithoutB{ObjectMeta: metav1.ObjectMeta{Name: "shape", Namespace: ns, Labels: labels}}
		d.Spec.Atomic = &struct {
			A string `json:"a,omitempty"`
		}{A: "a"}
		return d
	}
	live := func() *testtypes.Shape {
		l := &testtypes.Shape{}
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "shape"}, l)).To(Succeed())
		return l
	}

	_, err = a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live().Spec.Atomic.B).To(Equal("added"), "the policy added b as the object was created")
	_, err = a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(applies).To(Equal(2), "the apply that removes b is sent")
	g.Expect(live().Spec.Atomic.B).To(BeEmpty(), "the apply removed b")
	_, err = a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(applies).To(Equal(2), "at steady state nothing is sent")
}
