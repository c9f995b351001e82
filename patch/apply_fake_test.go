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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/patch"
)

func configMap(value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}, Data: map[string]string{"k": value}}
}

func TestApplyRejectsWhatItCannotApply(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	for _, tc := range []struct {
		name    string
		applier *patch.Applier
		obj     client.Object
		opts    []patch.ApplyCallOption
		want    string
	}{
		{"a nil object", patch.NewApplier(c, "me", patch.ApplierOptions{}), nil, nil, "the object is nil"},
		{"no field manager", patch.NewApplier(c, "", patch.ApplierOptions{}), configMap("v"), nil, "no field manager"},
		{"no client", patch.NewApplier(nil, "me", patch.ApplierOptions{}), configMap("v"), nil, "has no client"},
		{"a type the scheme does not know", patch.NewApplier(fake.NewClientBuilder().WithScheme(testScheme()).Build(), "me", patch.ApplierOptions{}), configMap("v"), nil, "failed to apply *v1.ConfigMap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changed, err := tc.applier.Apply(t.Context(), tc.obj, tc.opts...)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(changed).To(BeFalse())
			_, err = tc.applier.ApplyStatus(t.Context(), tc.obj, tc.opts...)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestApplyStatusOfAMissingObjectIsNotFound(t *testing.T) {
	g := NewWithT(t)
	a := patch.NewApplier(fake.NewClientBuilder().Build(), "me", patch.ApplierOptions{})
	_, err := a.ApplyStatus(t.Context(), configMap("v"))
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}

func TestEachApplierAppliesUnderItsOwnFieldManager(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithReturnManagedFields().Build()
	managers := func(obj client.Object) []string {
		var out []string
		for _, e := range obj.GetManagedFields() {
			out = append(out, e.Manager)
		}
		return out
	}
	cm := configMap("v")
	_, err := patch.NewApplier(c, "someone-else", patch.ApplierOptions{}).Apply(t.Context(), cm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(managers(cm)).To(Equal([]string{"someone-else"}))

	// What an Applier remembers and compares is its own field manager's: "me" has not applied
	// the object yet, so it does.
	cm = configMap("v")
	changed, err := patch.NewApplier(c, "me", patch.ApplierOptions{}).Apply(t.Context(), cm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "managedFields changed")
	g.Expect(managers(cm)).To(ConsistOf("someone-else", "me"))
}

func TestApplyConfigurationRejectsWhatItCannotApply(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	me := patch.NewApplier(c, "me", patch.ApplierOptions{})
	for _, tc := range []struct {
		name    string
		applier *patch.Applier
		ac      runtime.ApplyConfiguration
		want    string
	}{
		{"a nil apply configuration", me, nil, "the apply configuration is nil"},
		{"a nil pointer", me, (*corev1ac.ConfigMapApplyConfiguration)(nil), "the apply configuration is nil"},
		{"no kind", me, &corev1ac.ConfigMapApplyConfiguration{ObjectMetaApplyConfiguration: metav1ac.ObjectMeta().WithName("x")}, "needs an apiVersion and a kind"},
		{"no name", me, corev1ac.ConfigMap("", "default"), "ConfigMap: the apply configuration needs a name"},
		{"no field manager", patch.NewApplier(c, "", patch.ApplierOptions{}), corev1ac.ConfigMap("x", "default"), "no field manager"},
		{"no client", patch.NewApplier(nil, "me", patch.ApplierOptions{}), corev1ac.ConfigMap("x", "default"), "has no client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var before []byte
			if tc.ac != nil {
				before, _ = json.Marshal(tc.ac)
			}
			changed, err := tc.applier.ApplyConfiguration(t.Context(), tc.ac)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(changed).To(BeFalse())
			_, err = tc.applier.ApplyStatusConfiguration(t.Context(), tc.ac)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			if tc.ac != nil {
				after, _ := json.Marshal(tc.ac)
				g.Expect(string(after)).To(Equal(string(before)), "on error ac is not modified")
			}
		})
	}
}

func TestApplyStatusConfigurationOfAMissingObjectIsNotFound(t *testing.T) {
	g := NewWithT(t)
	a := patch.NewApplier(fake.NewClientBuilder().Build(), "me", patch.ApplierOptions{})
	_, err := a.ApplyStatusConfiguration(t.Context(), corev1ac.ConfigMap("x", "default"))
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}

// TestApplyOfAnObjectBeingDeletedWithTheFakeClient applies a typed object that is being deleted
// through controller-runtime's fake client, as users' unit tests do: the apply changes the
// object, and the apply that drops its last finalizer lets it go, as on an API server.
func TestApplyOfAnObjectBeingDeletedWithTheFakeClient(t *testing.T) {
	for _, managedFields := range []bool{false, true} {
		t.Run(fmt.Sprintf("managedFields returned: %v", managedFields), func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			b := fake.NewClientBuilder()
			if managedFields {
				b = b.WithReturnManagedFields()
			}
			c := b.Build()
			a := patch.NewApplier(c, "me", patch.ApplierOptions{})
			withFinalizer := func(value string, finalizers ...string) *corev1.ConfigMap {
				cm := configMap(value)
				cm.Finalizers = finalizers
				return cm
			}
			_, err := a.Apply(ctx, withFinalizer("v", "example.com/cleanup"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Delete(ctx, configMap("v"))).To(Succeed())

			cm := withFinalizer("v2", "example.com/cleanup")
			changed, err := a.Apply(ctx, cm)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(cm.DeletionTimestamp).NotTo(BeNil(), "still being deleted")
			g.Expect(cm.Data).To(HaveKeyWithValue("k", "v2"))

			_, err = a.Apply(ctx, withFinalizer("v2"))
			g.Expect(err).NotTo(HaveOccurred())
			err = c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the last finalizer dropped, the object is gone: %v", err)
		})
	}
}
