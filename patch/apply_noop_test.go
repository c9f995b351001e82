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

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

func service(ns string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports},
	}
}

func deploymentWith(ns string, mutate func(*corev1.PodSpec)) *appsv1.Deployment {
	d := desiredDeployment(ns, 1).(*appsv1.Deployment)
	d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	mutate(&d.Spec.Template.Spec)
	return d
}

func newShapeIn(ns string, spec testtypes.ShapeSpec) *testtypes.Shape {
	return &testtypes.Shape{
		TypeMeta:   metav1.TypeMeta{APIVersion: testtypes.GroupVersion.String(), Kind: "Shape"},
		ObjectMeta: metav1.ObjectMeta{Name: "shape", Namespace: ns},
		Spec:       spec,
	}
}

// asUnstructured returns obj as an unstructured object holding only what obj sets.
func asUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("failed to encode %T: %v", obj, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatalf("failed to decode %T: %v", obj, err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

// liveValue returns the value at path of the live object obj names.
func liveValue(t *testing.T, g Gomega, obj client.Object, path ...string) any {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(obj), live)).To(Succeed())
	v, _, err := unstructured.NestedFieldNoCopy(live.Object, path...)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}

// valueOf returns the value at path of obj.
func valueOf(t *testing.T, obj client.Object, path ...string) any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("failed to convert %T: %v", obj, err)
	}
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	return v
}

// A desired object that drops a key or a field inside a value the field manager owns as a whole
// (an atomic map, struct or list) must be applied: the apply replaces the whole value, while the
// live value still contains every desired field.
func TestApplyRemovesWhatDesiredDropsFromAValueOwnedAsAWhole(t *testing.T) {
	toleration := corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	withSeconds := toleration
	withSeconds.TolerationSeconds = ptr.To(int64(30))
	port := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}

	for _, tc := range []struct {
		name          string
		before, after func(ns string) client.Object
		path          []string
	}{{
		name: "a key removed from a Service's selector (an atomic map)",
		before: func(ns string) client.Object {
			return service(ns, map[string]string{"app": "web", "tier": "front"}, port)
		},
		after: func(ns string) client.Object { return service(ns, map[string]string{"app": "web"}, port) },
		path:  []string{"spec", "selector"},
	}, {
		name: "a key removed from a pod's nodeSelector (an atomic map)",
		before: func(ns string) client.Object {
			return deploymentWith(ns, func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"disk": "ssd", "zone": "a"} })
		},
		after: func(ns string) client.Object {
			return deploymentWith(ns, func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"disk": "ssd"} })
		},
		path: []string{"spec", "template", "spec", "nodeSelector"},
	}, {
		name: "tolerationSeconds removed from a toleration (an atomic list)",
		before: func(ns string) client.Object {
			return deploymentWith(ns, func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{withSeconds} })
		},
		after: func(ns string) client.Object {
			return deploymentWith(ns, func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{toleration} })
		},
		path: []string{"spec", "template", "spec", "tolerations"},
	}, {
		name: "a field removed from an element of a CRD list without a list type (atomic)",
		before: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Steps: []testtypes.ShapeStep{{Name: "a", Value: "x", TimeoutSeconds: ptr.To(int64(5))}}})
		},
		after: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Steps: []testtypes.ShapeStep{{Name: "a", Value: "x"}}})
		},
		path: []string{"spec", "steps"},
	}, {
		name: "a key removed from a CRD's atomic map",
		before: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Selector: map[string]string{"a": "1", "b": "2"}})
		},
		after: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Selector: map[string]string{"a": "1"}})
		},
		path: []string{"spec", "selector"},
	}, {
		name: "a field removed from a CRD's atomic struct",
		before: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Atomic: &testtypes.ShapeNested{A: "x", B: "y"}})
		},
		after: func(ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Atomic: &testtypes.ShapeNested{A: "x"}})
		},
		path: []string{"spec", "atomic"},
	}} {
		for _, form := range []string{"typed", "unstructured"} {
			for _, fresh := range []bool{true, false} {
				name := tc.name + ", " + form
				if fresh {
					name += ", a freshly started Applier"
				} else {
					name += ", the Applier that applied before"
				}
				t.Run(name, func(t *testing.T) {
					g := NewWithT(t)
					ctx := t.Context()
					ns := env.Namespace(t)
					build := func(f func(string) client.Object) client.Object {
						obj := f(ns)
						if form == "unstructured" {
							return asUnstructured(t, obj)
						}
						return obj
					}
					a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
					_, err := a.Apply(ctx, build(tc.before))
					g.Expect(err).NotTo(HaveOccurred())
					if fresh {
						a = patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
					}

					after := build(tc.after)
					changed, err := a.Apply(ctx, after)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(changed).To(BeTrue(), "the apply was needed")
					want := valueOf(t, tc.after(ns), tc.path...)
					g.Expect(cmp.Diff(want, liveValue(t, g, after, tc.path...))).To(BeEmpty())
				})
			}
		}
	}
}

// ownedFields returns the fieldsV1 of manager's apply entry in obj's managedFields.
func ownedFields(obj client.Object, manager string) string {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil {
			return e.FieldsV1.GetRawString()
		}
	}
	return ""
}

// A typed object's struct-typed field with omitempty that holds its zero value (a Service port's
// targetPort, an intstr.IntOrString) is not sent, so the API server's default for it does not
// make every restart and every change of the live object cost an apply.
func TestApplyDoesNotSendZeroStructFieldsOfTypedObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	desired := func() client.Object {
		return service(ns, map[string]string{"app": "web"}, corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP})
	}
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	obj := desired()
	_, err := a.Apply(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(obj.(*corev1.Service).Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(80)), "the server defaulted it")
	g.Expect(ownedFields(obj, "tenon-test")).NotTo(ContainSubstring("targetPort"))
	c.take()

	restarted := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	changed, err := restarted.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}), "no write after a restart")

	// Another writer changes something this manager does not own.
	live := &corev1.Service{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	live.Annotations = map[string]string{"someone-else": "was here"}
	g.Expect(env.Client().Update(ctx, live)).To(Succeed())
	for _, applier := range []*patch.Applier{a, restarted} {
		changed, err = applier.Apply(ctx, desired())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
	}
	g.Expect(c.take()).To(Equal(counts{"get": 2}), "no write after a change of the live object")
}

// What a user sets on purpose is sent even when it is empty or zero: a pointer to an empty
// struct, a pointer to zero, an empty object in an unstructured object.
func TestApplySendsEmptyValuesSetOnPurpose(t *testing.T) {
	for _, tc := range []struct {
		name  string
		obj   func(t *testing.T, ns string) client.Object
		owned []string
	}{{
		name: "a typed pointer to an empty struct",
		obj: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Nested: &testtypes.ShapeNested{}})
		},
		owned: []string{`"f:nested":{}`},
	}, {
		name: "a typed Deployment scaled to zero",
		obj: func(_ *testing.T, ns string) client.Object {
			return desiredDeployment(ns, 0)
		},
		owned: []string{`"f:replicas":{}`},
	}, {
		name: "an unstructured empty object and a zero",
		obj: func(t *testing.T, ns string) client.Object {
			u := asUnstructured(t, newShapeIn(ns, testtypes.ShapeSpec{Text: "x"}))
			g := NewWithT(t)
			g.Expect(unstructured.SetNestedField(u.Object, map[string]any{}, "spec", "atomic")).To(Succeed())
			g.Expect(unstructured.SetNestedField(u.Object, int64(0), "spec", "count")).To(Succeed())
			return u
		},
		owned: []string{`"f:atomic":{}`, `"f:count":{}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := tc.obj(t, env.Namespace(t))
			_, err := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{}).Apply(t.Context(), obj)
			g.Expect(err).NotTo(HaveOccurred())
			owned := ownedFields(obj, "tenon-test")
			for _, f := range tc.owned {
				g.Expect(strings.Contains(owned, f)).To(BeTrue(), "%s in %s", f, owned)
			}
		})
	}
}

// What the no-op proof cannot decide is sent, and changes nothing: once by an Applier that
// remembers it, after each restart (or change of the live object) by a fresh one. Each case is
// a limitation [patch.Applier.Apply] documents.
func TestApplySendsWhatItCannotProveChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired func(t *testing.T, ns string) client.Object
		// other, when set, is applied by another field manager after the first apply.
		other func(t *testing.T, ns string) client.Object
		// unproven is set when the answer to the first apply cannot prove it a fixed point
		// either (the server changed a value the manager owns as a whole, as a mutating
		// admission plugin could have on a creation only): the Applier that applied it sends
		// it once more, which writes nothing and proves it.
		unproven bool
	}{{
		name: "a Service port without the protocol the server fills in",
		desired: func(_ *testing.T, ns string) client.Object {
			return service(ns, map[string]string{"app": "web"}, corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)})
		},
	}, {
		name: "a cpu request the server normalises",
		desired: func(t *testing.T, ns string) client.Object {
			u := asUnstructured(t, deploymentWith(ns, func(*corev1.PodSpec) {}))
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			containers[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.1"}}
			NewWithT(t).Expect(unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
			return u
		},
		unproven: true,
	}, {
		name: "a zero the server drops, in an unstructured object",
		desired: func(t *testing.T, ns string) client.Object {
			u := asUnstructured(t, deploymentWith(ns, func(*corev1.PodSpec) {}))
			NewWithT(t).Expect(unstructured.SetNestedField(u.Object, int64(0), "spec", "minReadySeconds")).To(Succeed())
			return u
		},
		unproven: true,
	}, {
		name: "an env fieldRef, owned as a whole, into which the server writes its apiVersion",
		desired: func(_ *testing.T, ns string) client.Object {
			return deploymentWith(ns, func(p *corev1.PodSpec) {
				p.Containers[0].Env = append(p.Containers[0].Env, corev1.EnvVar{Name: "POD", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
				}})
			})
		},
		unproven: true,
	}, {
		name: "an atomic map in a custom resource, whose schema the Applier does not know",
		desired: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Selector: map[string]string{"a": "1"}})
		},
	}, {
		name: "a list another manager added an element to",
		desired: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Ports: []testtypes.ShapePort{{Name: "a", Port: 80}}})
		},
		other: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Ports: []testtypes.ShapePort{{Name: "b", Port: 81}}})
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			_, err := a.Apply(ctx, tc.desired(t, ns))
			g.Expect(err).NotTo(HaveOccurred())
			if tc.other != nil {
				_, err = patch.NewApplier(c, "someone-else", patch.ApplierOptions{}).Apply(ctx, tc.other(t, ns))
				g.Expect(err).NotTo(HaveOccurred())
			}
			c.take()

			changed, err := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{}).Apply(ctx, tc.desired(t, ns))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}), "a fresh Applier cannot prove it and sends it")

			// The Applier that applied it remembers: it sends nothing while the object does not
			// change, and once after it changed.
			want := counts{"get": 2}
			if tc.other != nil || tc.unproven {
				want["apply"] = 1
			}
			for range 2 {
				changed, err = a.Apply(ctx, tc.desired(t, ns))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeFalse())
			}
			g.Expect(c.take()).To(Equal(want))
		})
	}
}

// A value the manager applied empty, and that was filled since (by another manager, or by the
// server's defaults), is owned as a whole, as an atomic value is: a desired object that now sets
// exactly what it holds must be applied, to own its fields.
func TestApplyTakesOwnershipOfWhatFilledAValueItAppliedEmpty(t *testing.T) {
	for _, tc := range []struct {
		name         string
		empty, full  func(t *testing.T, ns string) client.Object
		other        func(t *testing.T, ns string) client.Object
		wantOwnedSub string
	}{{
		name: "a ConfigMap's binaryData, filled by another manager",
		empty: func(_ *testing.T, ns string) client.Object {
			// Unstructured: a typed object leaves out an empty map.
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata":   map[string]any{"name": "config", "namespace": ns},
				"binaryData": map[string]any{},
			}}
		},
		other: func(_ *testing.T, ns string) client.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns}, BinaryData: map[string][]byte{"bin": []byte("x")}}
		},
		full: func(_ *testing.T, ns string) client.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns}, BinaryData: map[string][]byte{"bin": []byte("x")}}
		},
		wantOwnedSub: `"f:binaryData":{"f:bin":{}}`,
	}, {
		name: "a Deployment's strategy, filled by the server's defaults",
		empty: func(t *testing.T, ns string) client.Object {
			u := asUnstructured(t, deploymentWith(ns, func(*corev1.PodSpec) {}))
			NewWithT(t).Expect(unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "strategy")).To(Succeed())
			return u
		},
		full: func(t *testing.T, ns string) client.Object {
			u := asUnstructured(t, deploymentWith(ns, func(*corev1.PodSpec) {}))
			NewWithT(t).Expect(unstructured.SetNestedMap(u.Object, map[string]any{
				"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"},
			}, "spec", "strategy")).To(Succeed())
			return u
		},
		wantOwnedSub: `"f:strategy":{"f:rollingUpdate":{"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}}`,
	}, {
		name: "a custom resource's granular struct, filled by another manager",
		empty: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Nested: &testtypes.ShapeNested{}})
		},
		other: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Nested: &testtypes.ShapeNested{A: "x"}})
		},
		full: func(_ *testing.T, ns string) client.Object {
			return newShapeIn(ns, testtypes.ShapeSpec{Nested: &testtypes.ShapeNested{A: "x"}})
		},
		wantOwnedSub: `"f:nested":{"f:a":{}}`,
	}} {
		for _, fresh := range []bool{true, false} {
			name := tc.name + ", the Applier that applied before"
			if fresh {
				name = tc.name + ", a freshly started Applier"
			}
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				ctx := t.Context()
				ns := env.Namespace(t)
				a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
				_, err := a.Apply(ctx, tc.empty(t, ns))
				g.Expect(err).NotTo(HaveOccurred())
				if tc.other != nil {
					// Forced, the other manager takes the value over; applied empty once more, it
					// is owned by this manager as a whole again, its content by the other.
					_, err = patch.NewApplier(env.Client(), "someone-else", patch.ApplierOptions{}).Apply(ctx, tc.other(t, ns), patch.ForceConflicts(true))
					g.Expect(err).NotTo(HaveOccurred())
					_, err = a.Apply(ctx, tc.empty(t, ns))
					g.Expect(err).NotTo(HaveOccurred())
				}
				if fresh {
					a = patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
				}

				obj := tc.full(t, ns)
				changed, err := a.Apply(ctx, obj)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(changed).To(BeTrue(), "the apply was needed: it changes managedFields")
				g.Expect(ownedFields(obj, "tenon-test")).To(ContainSubstring(tc.wantOwnedSub))
			})
		}
	}
}
