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

// ApplyStatus against the API server: kinds without a status subresource, condition schemas
// without a transition time, and transition times with a reader that lags.

import (
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

// TestApplyStatusOfAKindWithoutAStatusSubresourceSaysSo applies the status of a Gadget, a
// kind whose CRD has no status subresource, that exists. ApplyStatus documents that "the object
// must exist and have a status subresource (for a CRD without one use Helper)", and the project
// promises a clear error naming what is wrong, classed as invalid. The error must not say that the object is not
// found: apierrors.IsNotFound is what reconcilers ignore (client.IgnoreNotFound), which here
// drops the status silently, on every reconcile.
func TestApplyStatusOfAKindWithoutAStatusSubresourceSaysSo(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	gadget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(testtypes.GroupVersion.String())
		u.SetKind("Gadget")
		u.SetNamespace(ns)
		u.SetName("x")
		return u
	}
	g.Expect(env.Client().Create(ctx, gadget())).To(Succeed())
	desired := gadget()
	g.Expect(unstructured.SetNestedField(desired.Object, "Ready", "status", "phase")).To(Succeed())

	_, err := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{}).ApplyStatus(ctx, desired)

	g.Expect(err).To(HaveOccurred())
	g.Expect(apierrors.IsNotFound(err)).To(BeFalse(), "the object exists; the error says: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("status subresource"))
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassInvalid), "a kind without a status subresource is no race: retrying cannot help")
}
