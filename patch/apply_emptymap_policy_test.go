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
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// TestAnOmissionAnAdmissionPolicyMadeForOneObjectIsNotTheKinds has a mutating admission policy
// remove an empty spec.atomic from the objects a user opted in with a label (policy engines
// select what they mutate by label or namespace). An apply to an opted-in object writes nothing,
// yet the object lacks the empty map it sets: that is no property of the kind's stored form. The
// user then removes the label: the object still lacks spec.atomic, the manager still owns it,
// and applying the same desired object now sets it (a dry run shows the change), so the apply
// must be sent. (An Applier that learned omissions per kind from applies that wrote nothing
// skipped it.)
func TestAnOmissionAnAdmissionPolicyMadeForOneObjectIsNotTheKinds(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	const policy = "optin"
	desired := func() *unstructured.Unstructured {
		u := asUnstructured(t, newShapeIn(ns, testtypes.ShapeSpec{Text: "x"}))
		g.Expect(unstructured.SetNestedField(u.Object, map[string]any{}, "spec", "atomic")).To(Succeed())
		return u
	}
	probe := desired()
	probe.SetName("probe")
	probe.SetLabels(map[string]string{"tenon-test-policy": policy})
	mutateIn(t, ns, policy, testtypes.GroupVersion.Group, "shapes",
		[]admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		`has(object.spec.atomic) && size(object.spec.atomic) == 0 ? [JSONPatch{op: "remove", path: "/spec/atomic"}] : []`,
		probe, func(o client.Object) bool {
			_, found, _ := unstructured.NestedFieldNoCopy(o.(*unstructured.Unstructured).Object, "spec", "atomic")
			return !found
		})
	c := newCountingClient(t)
	a := patch.NewApplier(c, "shaper", patch.ApplierOptions{})
	apply := func() counts {
		_, err := a.Apply(ctx, desired())
		g.Expect(err).NotTo(HaveOccurred())
		return c.take()
	}
	label := func(value string) {
		patchBody := `{"metadata":{"labels":{"tenon-test-policy":null}}}`
		if value != "" {
			patchBody = `{"metadata":{"labels":{"tenon-test-policy":"` + value + `"}}}`
		}
		g.Expect(env.Client().Patch(ctx, newShapeIn(ns, testtypes.ShapeSpec{}), client.RawPatch(types.MergePatchType, []byte(patchBody)),
			client.FieldOwner("user"))).To(Succeed())
	}
	atomic := func() any {
		live := desired()
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
		v, found, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "atomic")
		if !found {
			return "absent"
		}
		return v
	}

	g.Expect(apply()["apply"]).To(Equal(1), "created, with spec.atomic: {}")
	g.Expect(atomic()).To(Equal(map[string]any{}))
	label(policy) // the user opts the object in: the policy removes spec.atomic
	g.Expect(atomic()).To(Equal("absent"))
	for range 3 {
		apply()
	}
	g.Expect(apply()["apply"]).To(BeZero(), "steady state while the policy applies")
	g.Expect(dryRunDiff(t, desired(), "shaper")).To(BeEmpty())

	label("") // the user opts the object out: nothing removes spec.atomic any more
	g.Expect(atomic()).To(Equal("absent"))
	g.Expect(dryRunDiff(t, desired(), "shaper")).NotTo(BeEmpty(), "applying now sets spec.atomic: {}")
	g.Expect(apply()["apply"]).To(Equal(1), "the apply that sets spec.atomic is sent")
	g.Expect(atomic()).To(Equal(map[string]any{}))
}
