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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// A metadata-only object (*metav1.PartialObjectMetadata, what a metadata-only watch caches) is
// an object like any other to the Helper and the Applier: they write its metadata and leave the
// rest of the object as it is.
func TestMetadataOnlyObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := env.Client()
	configMapMeta := func(name string) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		m.SetNamespace(ns)
		m.SetName(name)
		return m
	}

	// The Applier: the annotation is applied once, the same apply again is skipped, and the
	// data another writer set is kept.
	g.Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: ns},
		Data: map[string]string{"a": "1"}})).To(Succeed())
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	desired := configMapMeta("applied")
	desired.SetAnnotations(map[string]string{"tenon.dev/test": "applied"})
	changed, err := a.Apply(ctx, desired)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	changed, err = a.Apply(ctx, desired.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse(), "the same apply again changes nothing")
	var live corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(desired), &live)).To(Succeed())
	g.Expect(live.Annotations).To(HaveKeyWithValue("tenon.dev/test", "applied"))
	g.Expect(live.Data).To(Equal(map[string]string{"a": "1"}))

	// The Helper: a label added to the metadata read is patched, and the data is kept.
	g.Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "patched", Namespace: ns},
		Data: map[string]string{"b": "2"}})).To(Succeed())
	read := configMapMeta("patched")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(read), read)).To(Succeed())
	h, err := patch.NewHelper(read, c)
	g.Expect(err).NotTo(HaveOccurred())
	read.SetLabels(map[string]string{"tenon.dev/test": "patched"})
	g.Expect(h.Patch(ctx, read)).To(Succeed())
	g.Expect(read.Kind).To(Equal("ConfigMap"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(read), &live)).To(Succeed())
	g.Expect(live.Labels).To(HaveKeyWithValue("tenon.dev/test", "patched"))
	g.Expect(live.Data).To(Equal(map[string]string{"b": "2"}))
}
