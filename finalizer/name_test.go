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

package finalizer_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/finalizer"
)

func TestEnsureValidatesTheName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"example.com/cleanup", ""},
		{"apps.tenon.dev/dns-record", ""},
		{"cleanup", `use a domain-qualified name such as "example.com/cleanup"`},
		{"", "name part must be non-empty"},
		{"Example.COM/cleanup", "prefix part"},
		{"example.com/has space", "name part must consist of alphanumeric characters"},
		{"a/b/c", "a valid label key must consist of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
			c := fake.NewClientBuilder().WithObjects(cm).Build()
			_, err := finalizer.Ensure(t.Context(), c, cm, tt.name)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(finalizer.ErrInvalidName))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
		})
	}
}

func TestRemoveAcceptsALegacyNameWithoutAPrefix(t *testing.T) {
	g := NewWithT(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "default", Finalizers: []string{"cleanup", "example.com/cleanup"}}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()

	removed, err := finalizer.Remove(t.Context(), c, cm, "cleanup")

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeTrue())
	g.Expect(cm.Finalizers).To(Equal([]string{"example.com/cleanup"}))
	_, err = finalizer.Remove(t.Context(), c, cm, "Not Valid")
	g.Expect(err).To(MatchError(finalizer.ErrInvalidName))
}
