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

package objects_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/objects"
)

func TestEmptyIsAnEmptyObjectOfTheSameTypeAndKind(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName("w")
	u.Object["spec"] = map[string]any{"a": "b"}
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}}
	meta.SetName("d")
	for _, tt := range []struct {
		name  string
		obj   client.Object
		check func(client.Object) bool
	}{
		{"typed", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "b"}}}, func(o client.Object) bool {
			d, ok := o.(*appsv1.Deployment)
			return ok && d.Name == "" && d.Labels == nil
		}},
		{"unstructured, with its kind", u, func(o client.Object) bool {
			x, ok := o.(*unstructured.Unstructured)
			return ok && x != u && x.GroupVersionKind() == gvk && x.GetName() == "" && x.Object["spec"] == nil
		}},
		{"metadata only, with its TypeMeta", meta, func(o client.Object) bool {
			x, ok := o.(*metav1.PartialObjectMetadata)
			return ok && x != meta && x.TypeMeta == meta.TypeMeta && x.Name == ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := objects.Empty(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(got) {
				t.Fatalf("Empty(%T) = %#v", tt.obj, got)
			}
		})
	}
}

// notAStruct is a client.Object that is not a pointer to a struct.
type notAStruct struct{ *corev1.ConfigMap }

func TestEmptyRefusesWhatIsNotAPointerToAStruct(t *testing.T) {
	_, err := objects.Empty(notAStruct{&corev1.ConfigMap{}})
	if err == nil || !strings.Contains(err.Error(), "not a pointer to a struct") {
		t.Fatalf("err = %v, want one that says it is not a pointer to a struct", err)
	}
}

func TestCopyIntoCopiesOnlyBetweenObjectsOfOneType(t *testing.T) {
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src"}, Data: map[string]string{"k": "v"}}
	dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dst"}}
	if err := objects.CopyInto(dst, src); err != nil {
		t.Fatal(err)
	}
	if dst.Name != "src" || dst.Data["k"] != "v" {
		t.Fatalf("dst = %+v, want src's content", dst)
	}

	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret"}}
	if err := objects.CopyInto(other, src); err == nil || other.Name != "secret" {
		t.Fatalf("CopyInto(Secret, ConfigMap) = %v, leaving %q; want an error and nothing changed", err, other.Name)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
	if err := objects.CopyInto(u, src); err == nil || u.Object["kind"] != "ConfigMap" {
		t.Fatalf("CopyInto(unstructured, typed) = %v, leaving %v; want an error and nothing changed", err, u.Object)
	}

	us := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	ud := &unstructured.Unstructured{}
	if err := objects.CopyInto(ud, us); err != nil || ud.Object["data"] == nil {
		t.Fatalf("CopyInto(unstructured, unstructured) = %v, leaving %v", err, ud.Object)
	}
}

func TestToMapReturnsAnUnstructuredObjectsOwnMap(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
	m, err := objects.ToMap(u)
	if err != nil {
		t.Fatal(err)
	}
	m["x"] = "y"
	if u.Object["x"] != "y" {
		t.Fatal("ToMap of an unstructured object is not its own map")
	}
	m, err = objects.ToMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := m["data"].(map[string]any); data["k"] != "v" {
		t.Fatalf("ToMap = %v, want data.k = v", m)
	}
}
