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

package patch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch/internal/managed"
)

func TestApplyBodyLeavesOutOnlyZeroStructFieldsWithOmitempty(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Namespace: "ns"}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want map[string]any
	}{{
		name: "a Service port's unset targetPort is left out, a named one is sent",
		obj: &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "a", Port: 80},
			{Name: "b", Port: 81, TargetPort: intstr.FromString("http")},
			{Name: "c", Port: 82, TargetPort: intstr.FromInt32(8080)},
		}}},
		want: map[string]any{"spec": map[string]any{"ports": []any{
			map[string]any{"name": "a", "port": int64(80)},
			map[string]any{"name": "b", "port": int64(81), "targetPort": "http"},
			map[string]any{"name": "c", "port": int64(82), "targetPort": int64(8080)},
		}}},
	}, {
		name: "a Deployment's empty strategy, template metadata and resources are left out, replicas 0 is sent",
		obj: &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "a",
				Env: []corev1.EnvVar{{Name: "CPU", ValueFrom: &corev1.EnvVarSource{
					ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"},
				}}},
			}}}},
		}},
		want: map[string]any{"spec": map[string]any{
			"replicas": int64(0),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "a",
				"env": []any{map[string]any{"name": "CPU", "valueFrom": map[string]any{
					"resourceFieldRef": map[string]any{"resource": "limits.cpu"}, // divisor, a zero Quantity, left out
				}}},
			}}}},
		}},
	}, {
		name: "a non-zero Quantity and a pointer to an empty struct are sent",
		obj: &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:            "a",
			SecurityContext: &corev1.SecurityContext{},
			Env: []corev1.EnvVar{{Name: "CPU", ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1m")},
			}}},
		}}}},
		want: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name":            "a",
			"securityContext": map[string]any{},
			"env": []any{map[string]any{"name": "CPU", "valueFrom": map[string]any{
				"resourceFieldRef": map[string]any{"resource": "limits.cpu", "divisor": "1m"},
			}}},
		}}}},
	}, {
		name: "zero structs in a map or a list are sent: the entry or element is set on purpose",
		obj: &testtypes.Shape{ObjectMeta: meta, Spec: testtypes.ShapeSpec{
			Groups: map[string]testtypes.ShapeNested{"g": {}},
			Steps:  []testtypes.ShapeStep{{}},
			Nested: &testtypes.ShapeNested{},
		}},
		want: map[string]any{"spec": map[string]any{
			"groups": map[string]any{"g": map[string]any{}},
			"steps":  []any{map[string]any{}},
			"nested": map[string]any{},
		}},
	}, {
		name: "a zero spec is left out",
		obj:  &testtypes.Shape{ObjectMeta: meta},
		want: map[string]any{},
	}, {
		name: "an unstructured object is sent as it is",
		obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "x", "namespace": "ns"},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(0)}}, "selector": map[string]any{}},
		}},
		want: map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(0)}}, "selector": map[string]any{}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m, err := requestMap(tc.obj)
			g.Expect(err).NotTo(HaveOccurred())
			got := managed.DesiredFields(applyBody(m, tc.obj.GetObjectKind().GroupVersionKind()))
			g.Expect(cmp.Diff(tc.want, got)).To(BeEmpty())
		})
	}
}

func TestDeclaredFieldsComeFromTheSchemaOfBuiltInKinds(t *testing.T) {
	g := NewWithT(t)
	a := NewApplier(nil, "me", ApplierOptions{})
	service := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "x", "namespace": "ns", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"selector": map[string]any{"app": "web"},
			"ports":    []any{map[string]any{"port": int64(80), "protocol": "TCP"}},
		},
	}
	want := map[string]any{
		"f:metadata": map[string]any{"f:labels": map[string]any{"f:app": map[string]any{}}},
		"f:spec": map[string]any{
			"f:selector": map[string]any{}, // atomic: owned as a whole
			"f:ports": map[string]any{`k:{"port":80,"protocol":"TCP"}`: map[string]any{
				".": map[string]any{}, "f:port": map[string]any{}, "f:protocol": map[string]any{},
			}},
		},
	}
	g.Expect(cmp.Diff(want, managed.DeclaredFields(a.types(), service))).To(BeEmpty())

	shape := map[string]any{
		"apiVersion": "test.tenon.dev/v1", "kind": "Shape",
		"metadata": map[string]any{"name": "x", "namespace": "ns"},
		"spec":     map[string]any{"selector": map[string]any{"a": "1"}},
	}
	g.Expect(managed.DeclaredFields(a.types(), shape)).To(BeNil(), "a custom resource's schema is not known")
	service["spec"].(map[string]any)["bogus"] = "x"
	g.Expect(managed.DeclaredFields(a.types(), service)).To(BeNil(), "an object that does not match its schema")
}

func TestApplyOptionsAddUp(t *testing.T) {
	g := NewWithT(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "ns", UID: "uid-owner"}}
	o := newApplyOptions([]ApplyCallOption{
		OwnedConditions{conditions.Ready}, nil, OwnedConditions{"Synced"}, ForceConflicts(true),
		OwnedBy(owner, ownership.AdoptNever),
	})
	g.Expect(o.ownedConditions).To(Equal([]conditions.Type{conditions.Ready, "Synced"}))
	g.Expect(o.force).To(BeTrue())
	g.Expect(o.owned).To(BeTrue())
	g.Expect(o.owner).To(BeIdenticalTo(owner))
	g.Expect(o.ownerOpts).To(Equal([]ownership.SetOption{ownership.AdoptNever}))

	g.Expect(newApplyOptions(nil)).To(Equal(applyOptions{}), "the zero value is the default")
	g.Expect(newApplyOptions([]ApplyCallOption{OwnedBy(nil)}).owned).To(BeTrue(), "OwnedBy(nil) is not ignored")
}
