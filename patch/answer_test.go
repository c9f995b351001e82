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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// probeKind is a Go type a program registers, as its custom resources' types, in client-go's
// shared scheme.
type probeKind struct{ corev1.ConfigMap }

// TestOnlyClientGosOwnTypesGetATypedAnswer checks which applies read the API server's answer
// into the caller's Go type: only a built-in kind's, in client-go's type for it. A type a
// program registers in client-go's shared scheme (controller-runtime's default scheme, where
// kubebuilder's test suite adds the operator's types) may lack fields the server returns, so it
// gets the whole answer, unstructured.
func TestOnlyClientGosOwnTypesGetATypedAnswer(t *testing.T) {
	g := NewWithT(t)
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	registered := schema.GroupVersionKind{Group: "answer.test.tenon.dev", Version: "v1", Kind: "Probe"}
	clientgoscheme.Scheme.AddKnownTypeWithName(registered, &probeKind{})

	cm := &corev1.ConfigMap{}
	g.Expect(builtIn(cm, configMaps)).To(BeIdenticalTo(cm), "a ConfigMap in client-go's type")
	g.Expect(builtIn(&unstructured.Unstructured{}, configMaps)).To(BeNil(), "an unstructured ConfigMap")
	g.Expect(builtIn(&probeKind{}, configMaps)).To(BeNil(), "another Go type for a ConfigMap")
	g.Expect(builtIn(&probeKind{}, registered)).To(BeNil(), "a type registered in client-go's shared scheme")
}
