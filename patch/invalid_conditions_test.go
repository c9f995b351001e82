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

// Invalid conditions against the API server: conditions.Set stores them, and Helper.Patch and
// Applier.ApplyStatus refuse to write them, sending nothing.

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

// TestPatchWritesNothingOfAnObjectWithAnInvalidCondition changes a Widget's spec and sets a
// condition the API server would reject, new or in place of the snapshot's: Patch must send
// neither the spec nor the status (no half-written object), say which condition is invalid and
// why, and leave the object as the caller had it, so that once the condition is fixed the next
// Patch writes both.
func TestPatchWritesNothingOfAnObjectWithAnInvalidCondition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		t      conditions.Type
		reason conditions.Reason
		rule   string
	}{
		{"a new condition with an invalid reason", "Synced", "not synced", "status.conditions[Synced].reason"},
		{"the snapshot's condition changed to an invalid reason", conditions.Ready, "scaling up", "status.conditions[Ready].reason"},
		{"a new condition with an invalid type", "Not Synced", "Lagging", "status.conditions[Not Synced].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			w := newWidget(t, g, "invalid")
			c := newCountingClient(t)
			h, err := patch.NewHelper(w, c)
			g.Expect(err).NotTo(HaveOccurred())
			onServer := get(g, w)

			w.Spec.Size = "large"
			conditions.MarkFalse(w, tc.t, tc.reason, "3 changes behind")
			caller := w.DeepCopy()
			err = h.Patch(ctx, w)

			g.Expect(err).To(HaveOccurred())
			g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "the error wraps conditions.ErrInvalid: %v", err)
			g.Expect(err.Error()).To(ContainSubstring("Widget " + client.ObjectKeyFromObject(w).String()))
			g.Expect(err.Error()).To(ContainSubstring(tc.rule))
			g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassInvalid), "a programmer error is not retried")
			g.Expect(c.take()).To(BeEmpty(), "Patch sends nothing")
			g.Expect(get(g, w).ResourceVersion).To(Equal(onServer.ResourceVersion), "the object on the server is unchanged")
			g.Expect(cmp.Diff(caller, w)).To(BeEmpty(), "Patch leaves the object as the caller had it")

			// Fixed, the condition and the spec are written; the snapshot is still the one before
			// the refused Patch.
			conditions.MarkFalse(w, tc.t, conditions.ReasonFrom(string(tc.reason)), "3 changes behind")
			if tc.t == "Not Synced" {
				conditions.Delete(w, tc.t)
				conditions.MarkFalse(w, "NotSynced", "Lagging", "3 changes behind")
			}
			g.Expect(h.Patch(ctx, w)).To(Succeed())
			latest := get(g, w)
			g.Expect(latest.Spec.Size).To(Equal("large"))
			for _, want := range w.Status.Conditions {
				got := conditions.Get(latest, conditions.Type(want.Type))
				g.Expect(got).NotTo(BeNil(), "%s is written", want.Type)
				g.Expect(got.Reason).To(Equal(want.Reason))
			}
			g.Expect(c.take()).To(Equal(counts{"patch": 1, "status patch": 1}))
		})
	}
}

// certificate is the part of a cert-manager Certificate this test reads: its conditions, which
// are metav1.Conditions whose schema sets no rule for their reason. A typed object of it is a
// conditions.Getter.
type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

func (c *certificate) GetConditions() []metav1.Condition  { return c.Status.Conditions }
func (c *certificate) SetConditions(l []metav1.Condition) { c.Status.Conditions = l }

func (c *certificate) DeepCopyObject() runtime.Object {
	out := *c
	c.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = slices.Clone(c.Status.Conditions)
	return &out
}

// TestPatchIsNotStoppedByAnInvalidConditionItDidNotChange puts a condition with a reason
// conditions.Validate refuses on a cert-manager Certificate, whose schema accepts any reason, as
// another writer would; a Patch that changes a label and adds a valid condition must write them,
// and keep the other writer's condition as it is.
func TestPatchIsNotStoppedByAnInvalidConditionItDidNotChange(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	gvk := schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	seeded := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{"secretName": "web-tls", "dnsNames": []any{"web.example.com"},
			"issuerRef": map[string]any{"name": "letsencrypt", "kind": "ClusterIssuer"}},
	}}
	seeded.SetGroupVersionKind(gvk)
	g.Expect(env.Client().Create(ctx, seeded)).To(Succeed())
	theirs := map[string]any{"type": "Issuing", "status": "True", "reason": "issuing a new certificate",
		"message": "the private key changed", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	g.Expect(unstructured.SetNestedSlice(seeded.Object, []any{theirs}, "status", "conditions")).To(Succeed())
	g.Expect(env.Client().Status().Update(ctx, seeded)).To(Succeed())

	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gvk, &certificate{})
	metav1.AddToGroupVersion(scheme, gvk.GroupVersion())
	c, err := client.New(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	cert := &certificate{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(seeded), cert)).To(Succeed())
	invalid := conditions.Get(cert, "Issuing")
	g.Expect(invalid).NotTo(BeNil())
	g.Expect(conditions.Validate(*invalid)).To(MatchError(conditions.ErrInvalid), "the server holds a condition Validate refuses")
	h, err := patch.NewHelper(cert, c)
	g.Expect(err).NotTo(HaveOccurred())

	cert.Labels = map[string]string{"team": "web"}
	conditions.MarkTrue(cert, conditions.Ready, conditions.ReasonSucceeded, "")
	g.Expect(h.Patch(ctx, cert)).To(Succeed())

	latest := &certificate{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(seeded), latest)).To(Succeed())
	g.Expect(latest.Labels).To(HaveKeyWithValue("team", "web"))
	g.Expect(conditions.IsTrue(latest, conditions.Ready)).To(BeTrue())
	g.Expect(conditions.Get(latest, "Issuing")).To(Equal(invalid), "the other writer's condition is kept as it is")
}

// TestApplyStatusSendsNothingForAnInvalidCondition applies a Widget's status with a condition
// the API server would reject: ApplyStatus and ApplyStatusConfiguration must send nothing (not
// even read the object) and say which condition is invalid and why. A condition that is not
// applied, of a type not in OwnedConditions, is not checked.
func TestApplyStatusSendsNothingForAnInvalidCondition(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	desired := func() *testtypes.Widget {
		d := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: w.Namespace}}
		d.Status.Conditions = []metav1.Condition{
			{Type: string(conditions.Ready), Status: metav1.ConditionFalse, Reason: "scaling up", Message: "1 of 3 replicas"},
			{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"},
		}
		return d
	}
	onServer := get(g, w)

	d := desired()
	_, err := a.ApplyStatus(ctx, d)
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "the error wraps conditions.ErrInvalid: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("the status of Widget " + client.ObjectKeyFromObject(w).String()))
	g.Expect(err.Error()).To(ContainSubstring("status.conditions[Ready].reason"))
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassInvalid))
	g.Expect(cmp.Diff(desired(), d)).To(BeEmpty(), "on error obj is not modified")

	_, err = a.ApplyStatusConfiguration(ctx, widgetStatusConfiguration(w, metav1.ConditionFalse, "scaling up", ""))
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "the error wraps conditions.ErrInvalid: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("status.conditions[Ready].reason"))
	g.Expect(c.take()).To(BeEmpty(), "nothing is sent")
	g.Expect(get(g, w).ResourceVersion).To(Equal(onServer.ResourceVersion))

	// With OwnedConditions{Synced}, Ready is not applied: the apply goes ahead.
	changed, err := a.ApplyStatus(ctx, desired(), patch.OwnedConditions{"Synced"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	latest := get(g, w)
	g.Expect(conditions.IsTrue(latest, "Synced")).To(BeTrue())
	g.Expect(conditions.Get(latest, conditions.Ready)).To(BeNil())
}

// A condition an apply configuration (or an unstructured object) sends without a reason leaves
// the reason to its owner: the API server keeps another writer's value there and accepts the
// apply, so the Applier does not refuse it as invalid. A typed object's condition without a reason
// sends an empty one, which the server rejects, and is refused (the test above). Found by
// TestApplySkipsOnlyWhatTheAPIServerConfirms (TENON_APPLY_SEED=3416598429427990460
// TENON_APPLY_CASE=776).
func TestApplyStatusConfigurationLeavesAnAbsentReasonToItsOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "absent-reason", Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	other := get(g, w)
	conditions.MarkTrue(other, conditions.Ready, "Running", "set by another writer")
	g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())

	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testtypes.GroupVersion.String(),
		"kind":       "Widget",
		"metadata":   map[string]any{"name": w.Name, "namespace": w.Namespace},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": string(conditions.Ready), "status": string(metav1.ConditionFalse), "message": "ours",
		}}},
	}})
	changed, err := a.ApplyStatusConfiguration(ctx, ac, patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred(), "the reason the request lacks is the other writer's")
	g.Expect(changed).To(BeTrue())
	g.Expect(get(g, w)).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse,
		matchers.WithReason("Running"), matchers.WithMessage("ours")))

	// Sent with an empty reason, the condition is refused before anything is sent.
	_, err = a.ApplyStatusConfiguration(ctx, widgetStatusConfiguration(w, metav1.ConditionFalse, "", "ours"))
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "an empty reason is invalid: %v", err)
}
