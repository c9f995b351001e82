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
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/conditions"
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

// TestApplyStatusTakesNoTransitionTimeFromAReaderOlderThanItsLastApply applies Ready
// True (with an old transition time), then False, then True again while the reader still holds
// the object from before the False: on the server the condition flips from False to True, so
// its transition time must be the time of that flip, not the one of the first True, which the
// lagging reader shows.
func TestApplyStatusTakesNoTransitionTimeFromAReaderOlderThanItsLastApply(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	reader := &frozenReader{Reader: env.Client()}
	a := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{Reader: reader})
	long := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := func(status metav1.ConditionStatus, at *metav1.Time) *testtypes.Widget {
		d := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
		c := metav1.Condition{Type: string(conditions.Ready), Status: status, Reason: "Checked"}
		if at != nil {
			c.LastTransitionTime = *at
		}
		d.Status.Conditions = []metav1.Condition{c}
		return d
	}

	_, err := a.ApplyStatus(ctx, ready(metav1.ConditionTrue, &long))
	g.Expect(err).NotTo(HaveOccurred())
	reader.hold(liveOf(g, w)) // True since 2020, from now on
	_, err = a.ApplyStatus(ctx, ready(metav1.ConditionFalse, nil))
	g.Expect(err).NotTo(HaveOccurred())
	flipped := conditions.Get(liveOf(g, w).(*testtypes.Widget), conditions.Ready)
	g.Expect(flipped.Status).To(Equal(metav1.ConditionFalse))
	_, err = a.ApplyStatus(ctx, ready(metav1.ConditionTrue, nil))
	g.Expect(err).NotTo(HaveOccurred())

	live := conditions.Get(liveOf(g, w).(*testtypes.Widget), conditions.Ready)
	g.Expect(live.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(live.LastTransitionTime.Time).NotTo(BeTemporally("<", flipped.LastTransitionTime.Time),
		"Ready became True after it was False since %s, yet its transition time is %s", flipped.LastTransitionTime, live.LastTransitionTime)
}

// TestApplyStatusOfConditionsWithoutATransitionTimeInTheSchemaIsSteady applies, as KEDA's
// operator would with an Applier, the conditions of a ScaledObject: KEDA's schema gives its
// conditions type, status, reason and message, and no lastTransitionTime. The desired status is
// valid for the schema, so the apply must succeed (the Applier must not add a field the schema
// does not declare: server-side apply refuses the request with a 500, "field not declared in
// schema"); and a reconcile that applies the same conditions again, in a later second, changes
// nothing, so it must send nothing: "a steady-state reconcile sends no write".
func TestApplyStatusOfConditionsWithoutATransitionTimeInTheSchemaIsSteady(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	so := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"namespace": ns, "name": "web"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"name": "web"},
			"triggers": []any{map[string]any{"type": "cpu", "metricType": "Utilization", "metadata": map[string]any{"value": "50"}}}},
	}}
	g.Expect(env.Client().Create(ctx, so)).To(Succeed())
	c := newCountingClient(t)
	a := patch.NewApplier(c, "keda-operator", patch.ApplierOptions{})
	desired := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
			"metadata": map[string]any{"namespace": ns, "name": "web"},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ready"},
			}},
		}}
	}
	_, err := a.ApplyStatus(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred(), "conditions valid for KEDA's schema are applied")
	first := time.Now().Unix()
	c.take()

	g.Eventually(func() int64 { return time.Now().Unix() }).WithTimeout(3*time.Second).Should(BeNumerically(">", first), "the next second")
	var sent []counts
	for range 3 {
		_, err := a.ApplyStatus(ctx, desired())
		g.Expect(err).NotTo(HaveOccurred())
		sent = append(sent, c.take())
	}
	g.Expect(sent).To(HaveEach(Not(HaveKey("status apply"))), "requests of three steady-state reconciles: %v", sent)
}
