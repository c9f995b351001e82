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

// Rivals at two edges of the Applier, each checked against the API server: a status apply whose
// conditions lack a field (left to its owner, or to the kind's schema), and an empty map the
// stored form omits that another managedFields entry owns too, this manager's own Update entry
// and another Applier of its name among them (no fixed point while they own it).

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// ---------------------------------------------------------------------------------------------
// Helpers.

// edgeWidget creates a Widget and returns it.
func edgeWidget(t *testing.T, g Gomega, name string) *testtypes.Widget {
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: env.Namespace(t)}}
	g.Expect(env.Client().Create(t.Context(), w)).To(Succeed())
	return w
}

// edgeStatus is an apply configuration of a Widget's status with the one condition c, as given
// (fields absent from c are absent from the request).
func edgeStatus(w *testtypes.Widget, c map[string]any) runtime.ApplyConfiguration {
	return client.ApplyConfigurationFromUnstructured(edgeStatusObject(w, c))
}

func edgeStatusObject(w *testtypes.Widget, c map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testtypes.GroupVersion.String(),
		"kind":       "Widget",
		"metadata":   map[string]any{"name": w.Name, "namespace": w.Namespace},
		"status":     map[string]any{"conditions": []any{runtime.DeepCopyJSONValue(c)}},
	}}
}

// edgeLive reads the live object of u's kind and name, unstructured.
func edgeLive(t *testing.T, g Gomega, like *unstructured.Unstructured) *unstructured.Unstructured {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(like.GroupVersionKind())
	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(like), live)).To(Succeed())
	return live
}

// edgeDryRun sends body (an apply request's body, as is) as a dry-run apply by manager, on
// subresource ("" for the object), and returns how the object would change (content or
// managedFields; "" for not at all) or the server's error.
func edgeDryRun(t *testing.T, g Gomega, body *unstructured.Unstructured, manager, subresource string, force bool) (string, error) {
	ctx := t.Context()
	live := edgeLive(t, g, body)
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(body.Object)}
	ac := client.ApplyConfigurationFromUnstructured(u)
	var err error
	if subresource == "status" {
		opts := []client.SubResourceApplyOption{client.FieldOwner(manager), client.DryRunAll}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		err = env.Client().Status().Apply(ctx, ac, opts...)
	} else {
		opts := []client.ApplyOption{client.FieldOwner(manager), client.DryRunAll}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		err = env.Client().Apply(ctx, ac, opts...)
	}
	if err != nil {
		return "", err
	}
	data, merr := json.Marshal(ac)
	g.Expect(merr).NotTo(HaveOccurred())
	after := &unstructured.Unstructured{}
	g.Expect(after.UnmarshalJSON(data)).To(Succeed())
	return cmp.Diff(withoutFieldsMetadata(live), withoutFieldsMetadata(after)) + cmp.Diff(fieldSets(live), fieldSets(after)), nil
}

// edgeMergePatch writes patch (a JSON merge patch) to obj as manager, an Update in managedFields.
func edgeMergePatch(t *testing.T, g Gomega, obj *unstructured.Unstructured, manager string, patchJSON string) {
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(obj.GroupVersionKind())
	target.SetName(obj.GetName())
	target.SetNamespace(obj.GetNamespace())
	g.Expect(env.Client().Patch(t.Context(), target, client.RawPatch(types.MergePatchType, []byte(patchJSON)), client.FieldOwner(manager))).To(Succeed())
}

// ---------------------------------------------------------------------------------------------
// Fix 1: conditions.

// A condition sent without a status leaves the status to its owner, and so its transition: the
// Applier adds no lastTransitionTime of its own (it read the absent status as a flip and stamped
// the current time, a field the caller did not set, which conflicted with the owner's without
// force and moved the time with it). Found by an attack on the check of absent condition fields.
func TestAConditionWithoutItsStatusKeepsItsTransitionTime(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "absent-status-time")
	past := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	other := get(g, w)
	other.Status.Conditions = []metav1.Condition{{Type: string(conditions.Ready), Status: metav1.ConditionTrue,
		Reason: "Running", Message: "theirs", LastTransitionTime: past}}
	g.Expect(env.Client().Status().Update(ctx, other, client.FieldOwner("other-writer"))).To(Succeed())

	noStatus := map[string]any{"type": string(conditions.Ready), "reason": "Running", "message": "theirs"}
	a := patch.NewApplier(newCountingClient(t), "tenon-test", patch.ApplierOptions{})
	for i := range 2 {
		_, err := a.ApplyStatusConfiguration(ctx, edgeStatus(w, noStatus))
		g.Expect(err).NotTo(HaveOccurred(), "apply %d: the same values as the owner's, no conflict", i)
		ready := conditions.Get(get(g, w), conditions.Ready)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "the status was left to its owner")
		g.Expect(ready.LastTransitionTime.Time).To(BeTemporally("==", past.Time), "apply %d: the status did not change, nor the time", i)
	}
}

// The same where another manager applied only the status: this manager's apply without a status
// does not give its condition a new transition time.
func TestAConditionWithoutItsStatusCoOwnedKeepsItsTransitionTime(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "absent-status-coowned")
	a := patch.NewApplier(newCountingClient(t), "tenon-test", patch.ApplierOptions{})
	full := map[string]any{"type": string(conditions.Ready), "status": "True", "reason": "Running", "message": "ours",
		"lastTransitionTime": "2020-01-01T00:00:00Z"}
	_, err := a.ApplyStatusConfiguration(ctx, edgeStatus(w, full))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Status().Apply(ctx, edgeStatus(w, map[string]any{"type": string(conditions.Ready), "status": "True"}),
		client.FieldOwner("status-owner"))).To(Succeed())
	before := conditions.Get(get(g, w), conditions.Ready).LastTransitionTime

	noStatus := map[string]any{"type": string(conditions.Ready), "reason": "Running", "message": "ours"}
	_, err = a.ApplyStatusConfiguration(ctx, edgeStatus(w, noStatus))
	g.Expect(err).NotTo(HaveOccurred())
	after := conditions.Get(get(g, w), conditions.Ready)
	g.Expect(after.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(after.LastTransitionTime).To(Equal(before), "the status did not change, nor the time")
}

// Not a bug: "reason": null (or "status": null) in an unstructured condition is refused as
// invalid before anything is sent. The Applier prunes nulls from the body it sends (statusBody),
// so the request would have gone without the field, which the API server accepts, keeping the
// owner's value; but the API server refuses the caller's request as it is ("must be of type
// string: null"), so refusing it agrees with the server.
func TestANullReasonIsRefusedAsTheServerRefusesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "null-reason")
	other := get(g, w)
	conditions.MarkTrue(other, conditions.Ready, "Running", "theirs")
	g.Expect(env.Client().Status().Update(ctx, other, client.FieldOwner("other-writer"))).To(Succeed())
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	for _, field := range []string{"reason", "status"} {
		withNull := map[string]any{"type": string(conditions.Ready), "status": "False", "reason": "Stopped", "message": "ours",
			"lastTransitionTime": "2020-01-01T00:00:00Z"}
		withNull[field] = nil
		_, err := a.ApplyStatusConfiguration(ctx, edgeStatus(w, withNull), patch.ForceConflicts(true))
		g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "%s null is refused: %v", field, err)
		g.Expect(c.take()).To(Equal(counts{}), "nothing read or sent")
		_, serverErr := edgeDryRun(t, g, edgeStatusObject(w, withNull), "tenon-test", "status", true)
		g.Expect(apierrors.IsInvalid(serverErr)).To(BeTrue(), "the API server refuses %s: null too: %v", field, serverErr)
	}
}

// A field a condition's request lacks is the API server's to decide: for a kind whose schema does
// not require a reason (a cert-manager Certificate, whose conditions its Go type reads as
// metav1.Conditions), an apply configuration's condition without one is sent and stored as the
// schema allows. The Applier does not write the field: a typed object's condition, which sends
// its empty reason, is refused before anything is sent.
func TestAnAbsentReasonIsLeftToTheKindsSchema(t *testing.T) {
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
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gvk, &certificate{})
	metav1.AddToGroupVersion(scheme, gvk.GroupVersion())
	c, err := client.New(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})

	// Typed, the empty reason is refused.
	typed := &certificate{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	typed.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Message: "issued"}}
	_, err = a.ApplyStatus(ctx, typed)
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "%v", err)

	// As an apply configuration without a reason, it is written.
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": map[string]any{"name": "web", "namespace": ns},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "message": "issued"}}},
	}})
	_, err = a.ApplyStatusConfiguration(ctx, ac)
	g.Expect(err).NotTo(HaveOccurred(), "sent, and the server accepts it")
	latest := &certificate{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(seeded), latest)).To(Succeed())
	ready := conditions.Get(latest, "Ready")
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Reason).To(BeEmpty())
}

// Not a bug: a condition of a new type without a status, a reason or a message is sent (the
// fields are left to the server), and the API server rejects it, with an error that names the
// missing field; nothing is written.
func TestAbsentConditionFieldsNoOneOwnsAreRejectedByTheServer(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "absent-no-owner")
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	rv := get(g, w).ResourceVersion
	for _, field := range []string{"status", "reason", "message"} {
		cond := map[string]any{"type": string(conditions.Ready), "status": "True", "reason": "Running", "message": "m"}
		delete(cond, field)
		_, err := a.ApplyStatusConfiguration(ctx, edgeStatus(w, cond))
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s absent: %v", field, err)
		g.Expect(err.Error()).To(ContainSubstring("status.conditions[0]." + field + ": Required value"))
		g.Expect(c.take()["status apply"]).To(Equal(1))
		g.Expect(get(g, w).ResourceVersion).To(Equal(rv), "nothing written")
	}
}

// Not a bug: a field this manager owned alone and no longer sends is removed by the server,
// which then rejects the condition; nothing is written, and the old condition stays.
func TestAConditionFieldOnlyWeOwnedLeftOutIsRejected(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "absent-we-owned")
	a := patch.NewApplier(env.Client(), "tenon-test", patch.ApplierOptions{})
	_, err := a.ApplyStatusConfiguration(ctx, edgeStatus(w, map[string]any{"type": "Ready", "status": "True", "reason": "Running", "message": "m"}))
	g.Expect(err).NotTo(HaveOccurred())
	before := get(g, w)
	for _, field := range []string{"status", "reason"} {
		cond := map[string]any{"type": "Ready", "status": "True", "reason": "Running", "message": "m2"}
		delete(cond, field)
		for _, force := range []bool{false, true} {
			_, err = a.ApplyStatusConfiguration(ctx, edgeStatus(w, cond), patch.ForceConflicts(force))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", field, err)
			g.Expect(err.Error()).To(ContainSubstring(field + ": Required value"))
			after := get(g, w)
			g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing written")
		}
	}
}

// Not a bug: with OwnedConditions, an invalid condition of another type is neither checked nor
// sent; an invalid one of an owned type is refused before anything is sent, also typed.
func TestOwnedConditionsFilterTheConditionCheck(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "owned-filter")
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	typed := statusOf(w, condition(conditions.Ready, metav1.ConditionTrue, "Running", ""), condition("Synced", metav1.ConditionTrue, "", ""))
	_, err := a.ApplyStatus(ctx, typed, patch.OwnedConditions{conditions.Ready})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conditions.Get(get(g, w), "Synced")).To(BeNil())
	c.take()
	_, err = a.ApplyStatus(ctx, statusOf(w, condition(conditions.Ready, metav1.ConditionTrue, "Running", ""), condition("Synced", metav1.ConditionTrue, "", "")),
		patch.OwnedConditions{"Synced"})
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "%v", err)
	g.Expect(c.take()).To(Equal(counts{}))
	// Unstructured, a reason of the wrong type: not a metav1.Condition, left to the server,
	// which refuses it; nothing written.
	rv := get(g, w).ResourceVersion
	_, err = a.ApplyStatusConfiguration(ctx, edgeStatus(w, map[string]any{"type": "Ready", "status": "True", "reason": int64(3), "message": ""}))
	g.Expect(err).To(HaveOccurred())
	g.Expect(get(g, w).ResourceVersion).To(Equal(rv))
}

// Not a bug: the Shape CRD's conditions are metav1.Conditions and Shape is a conditions.Getter:
// an empty reason is refused before anything is sent; an absent one that only this manager
// owned is refused by the server.
func TestAShapesAbsentConditionFieldsAreLeftToTheServer(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	s := &testtypes.Shape{ObjectMeta: metav1.ObjectMeta{Name: "shape-cond", Namespace: ns}, Spec: testtypes.ShapeSpec{Text: "x"}}
	g.Expect(env.Client().Create(ctx, s)).To(Succeed())
	shape := func(c map[string]any) runtime.ApplyConfiguration {
		return client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": testtypes.GroupVersion.String(), "kind": "Shape",
			"metadata": map[string]any{"name": s.Name, "namespace": ns},
			"status":   map[string]any{"conditions": []any{c}},
		}})
	}
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	_, err := a.ApplyStatusConfiguration(ctx, shape(map[string]any{"type": "Ready", "status": "True", "reason": "", "message": ""}))
	g.Expect(errors.Is(err, conditions.ErrInvalid)).To(BeTrue(), "%v", err)
	g.Expect(c.take()).To(Equal(counts{}))
	_, err = a.ApplyStatusConfiguration(ctx, shape(map[string]any{"type": "Ready", "status": "True", "reason": "Ok", "message": ""}))
	g.Expect(err).NotTo(HaveOccurred())
	// A reason only this manager owned, left out: the API server refuses the condition without one.
	_, err = a.ApplyStatusConfiguration(ctx, shape(map[string]any{"type": "Ready", "status": "False", "message": "x"}))
	g.Expect(err.Error()).To(ContainSubstring("reason: Required value"))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
}

// ---------------------------------------------------------------------------------------------
// Fix 2: the no-op proof of omitted empty maps.

// edgeAttempt applies desired with applier and, when the Applier sent nothing, checks with a dry
// run that the API server agrees nothing would change. It returns whether the apply was sent
// and the Applier's error.
func edgeAttempt(t *testing.T, g Gomega, c *countingClient, applier *patch.Applier, desired *unstructured.Unstructured, force bool, what string) (bool, error) {
	t.Helper()
	c.take()
	_, err := applier.Apply(t.Context(), &unstructured.Unstructured{Object: runtime.DeepCopyJSON(desired.Object)}, patch.ForceConflicts(force))
	sent := c.take()["apply"] > 0
	if !sent {
		g.Expect(err).NotTo(HaveOccurred())
		live := edgeLive(t, g, desired)
		body := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(desired.Object)}
		diff, derr := edgeDryRun(t, g, body, "tenon-test", "", force)
		if derr != nil || diff != "" {
			t.Errorf("BUG %s: the Applier skipped an apply the API server answers with %v, changing %s\nmanagedFields: %s",
				what, derr, diff, edgeFields(live))
		}
	}
	return sent, err
}

func edgeFields(u *unstructured.Unstructured) string {
	var out string
	for _, e := range u.GetManagedFields() {
		out += fmt.Sprintf("\n  %s/%s/%s %s", e.Manager, e.Operation, e.Subresource, e.FieldsV1.GetRawString())
	}
	return out
}

// edgePlace is an empty map place in a built-in kind, with how to build an object that sets it.
type edgePlace struct {
	name  string
	base  func(ns, name string) map[string]any // the desired object without the place
	path  []string                             // where the map is
	key   string                               // a key to put in it ("" for none: the value)
	value string                               // a value of the key
}

func edgeSet(m map[string]any, v any, path ...string) map[string]any {
	m = runtime.DeepCopyJSON(m)
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
	return m
}

// edgeMergeOf returns a merge patch that sets path to v.
func edgeMergeOf(v any, path ...string) string {
	m := edgeSet(map[string]any{}, v, path...)
	data, _ := json.Marshal(m)
	return string(data)
}

func edgeDeployment(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		}}
}

func edgePlaces() []edgePlace {
	cm := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "immutable": false}
	}
	secret := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": ns}, "immutable": false}
	}
	svc := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}}}
	}
	return []edgePlace{
		{"configmap-data", cm, []string{"data"}, "k", "v"},
		{"configmap-binarydata", cm, []string{"binaryData"}, "k", "dg=="},
		{"configmap-labels", cm, []string{"metadata", "labels"}, "k", "v"},
		{"configmap-annotations", cm, []string{"metadata", "annotations"}, "k", "v"},
		{"secret-data", secret, []string{"data"}, "k", "dg=="},
		{"service-selector", svc, []string{"spec", "selector"}, "k", "v"},
		{"deployment-nodeselector", edgeDeployment, []string{"spec", "template", "spec", "nodeSelector"}, "k", "v"},
		{"deployment-template-annotations", edgeDeployment, []string{"spec", "template", "metadata", "annotations"}, "k", "v"},
		{"deployment-labels", edgeDeployment, []string{"metadata", "labels"}, "k", "v"},
	}
}

// TestAnEmptyMapARivalOwnsIsAppliedWhileTheyOwnIt: for each place and each rival (another manager's Update, this
// manager's own Update, another manager's Apply of the key, another manager's Apply of the empty
// map), the sequence
//
//  1. this manager applies the object without the place (creating it);
//  2. the rival writes the place ({k: theirs});
//  3. this manager applies {k: ours} with force;
//  4. this manager applies {} (giving the key up), with and without force;
//  5. this manager applies {} again, by the same Applier and a fresh one, with and without force,
//     twice;
//
// and every skipped apply is checked with a dry run.
func TestAnEmptyMapARivalOwnsIsAppliedWhileTheyOwnIt(t *testing.T) {
	type rival struct {
		name  string
		write func(t *testing.T, g Gomega, obj *unstructured.Unstructured, p edgePlace, v any)
	}
	update := func(manager string) func(t *testing.T, g Gomega, obj *unstructured.Unstructured, p edgePlace, v any) {
		return func(t *testing.T, g Gomega, obj *unstructured.Unstructured, p edgePlace, v any) {
			edgeMergePatch(t, g, obj, manager, edgeMergeOf(v, p.path...))
		}
	}
	apply := func(manager string) func(t *testing.T, g Gomega, obj *unstructured.Unstructured, p edgePlace, v any) {
		return func(t *testing.T, g Gomega, obj *unstructured.Unstructured, p edgePlace, v any) {
			body := &unstructured.Unstructured{Object: edgeSet(p.base(obj.GetNamespace(), obj.GetName()), v, p.path...)}
			g.Expect(env.Client().Apply(t.Context(), client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(manager), client.ForceOwnership)).To(Succeed())
		}
	}
	rivals := []rival{
		{"other-update", update("other-writer")},
		{"own-update", update("tenon-test")},
		{"other-apply", apply("other-applier")},
	}
	for _, p := range edgePlaces() {
		for _, r := range rivals {
			for _, giveUpForce := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/giveup-force=%v", p.name, r.name, giveUpForce)
				t.Run(name, func(t *testing.T) {
					g := NewWithT(t)
					ns := env.Namespace(t)
					objName := "m"
					c := newCountingClient(t)
					a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
					base := &unstructured.Unstructured{Object: p.base(ns, objName)}
					with := func(v any) *unstructured.Unstructured {
						return &unstructured.Unstructured{Object: edgeSet(base.Object, v, p.path...)}
					}
					_, err := edgeAttempt(t, g, c, a, base, false, name+" create")
					g.Expect(err).NotTo(HaveOccurred())
					r.write(t, g, base, p, map[string]any{p.key: p.value})
					_, err = edgeAttempt(t, g, c, a, with(map[string]any{p.key: p.value + "x"}), true, name+" take")
					if p.name == "configmap-binarydata" || p.name == "secret-data" {
						g.Expect(err).To(HaveOccurred()) // not base64
						_, err = edgeAttempt(t, g, c, a, with(map[string]any{p.key: "eHg="}), true, name+" take")
					}
					g.Expect(err).NotTo(HaveOccurred())
					_, err = edgeAttempt(t, g, c, a, with(map[string]any{}), giveUpForce, name+" give up")
					t.Logf("give up: %v", err)
					for round := range 2 {
						for _, force := range []bool{false, true} {
							for _, ap := range []struct {
								name string
								a    *patch.Applier
							}{{"same", a}, {"fresh", patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})}} {
								sent, err := edgeAttempt(t, g, c, ap.a, with(map[string]any{}), force, fmt.Sprintf("%s round %d force=%v %s", name, round, force, ap.name))
								t.Logf("round %d force=%v %s Applier: sent=%v err=%v", round, force, ap.name, sent, err)
							}
						}
					}
				})
			}
		}
	}
}

// TestAnEmptyMapOneManagerAppliesIsSteady: one manager alone applying an empty map the stored form
// omits sends once, then nothing, for the same and a fresh Applier.
func TestAnEmptyMapOneManagerAppliesIsSteady(t *testing.T) {
	for _, p := range edgePlaces() {
		t.Run(p.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			desired := &unstructured.Unstructured{Object: edgeSet(p.base(ns, "alone"), map[string]any{}, p.path...)}
			sent, err := edgeAttempt(t, g, c, a, &unstructured.Unstructured{Object: p.base(ns, "alone")}, false, p.name+" create")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sent).To(BeTrue())
			var sends []bool
			for range 3 {
				sent, err = edgeAttempt(t, g, c, a, desired, false, p.name)
				g.Expect(err).NotTo(HaveOccurred())
				sends = append(sends, sent)
			}
			sent, err = edgeAttempt(t, g, c, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{}), desired, false, p.name+" fresh")
			g.Expect(err).NotTo(HaveOccurred())
			sends = append(sends, sent)
			g.Expect(sends).To(Equal([]bool{true, false, false, false}), "sent once, then skipped")
		})
	}
}

// TestAnEmptyMapAnotherApplierSharesIsApplied: another Applier applies the same empty map the
// stored form omits. The API server does not let two managers share it (a conflict for the same
// value); with force the other takes it, and every apply of ours is sent (a conflict); taken
// back with force, ours is steady. Every skip is checked with a dry run.
func TestAnEmptyMapAnotherApplierSharesIsApplied(t *testing.T) {
	for _, p := range edgePlaces() {
		t.Run(p.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			other := patch.NewApplier(env.Client(), "other-applier", patch.ApplierOptions{})
			desired := &unstructured.Unstructured{Object: edgeSet(p.base(ns, "shared"), map[string]any{}, p.path...)}
			_, err := edgeAttempt(t, g, c, a, desired, false, p.name+" create")
			g.Expect(err).NotTo(HaveOccurred())
			// Two managers cannot share an empty map the stored form omits: the API server reports
			// a conflict for the same (empty) value.
			_, err = other.Apply(t.Context(), &unstructured.Unstructured{Object: runtime.DeepCopyJSON(desired.Object)})
			g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
			// Taken with force, every apply of ours is sent, and is a conflict.
			_, err = other.Apply(t.Context(), &unstructured.Unstructured{Object: runtime.DeepCopyJSON(desired.Object)}, patch.ForceConflicts(true))
			g.Expect(err).NotTo(HaveOccurred())
			for i := range 3 {
				applier := a
				if i == 2 {
					applier = patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
				}
				sent, err := edgeAttempt(t, g, c, applier, desired, false, fmt.Sprintf("%s call %d", p.name, i))
				g.Expect(sent).To(BeTrue())
				g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
			}
			// Taken back with force: then steady.
			g.Expect(edgeSteady(t, g, c, a, desired, true, p.name+" forced")).To(Equal([]bool{true, false, false, false}))
		})
	}
}

// TestEmptyLabelsBesideOurStatusEntry: a status apply of a Widget's labels by this
// manager writes no entry (a custom resource's status subresource ignores metadata), so this
// manager's status entry cannot be a rival at metadata.labels: the empty labels are steady.
func TestEmptyLabelsBesideOurStatusEntry(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := edgeWidget(t, g, "status-labels")
	body := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": testtypes.GroupVersion.String(), "kind": "Widget",
			"metadata": map[string]any{"name": w.Name, "namespace": w.Namespace, "labels": labels}}}
	}
	g.Expect(env.Client().Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(body(map[string]any{"k": "v"})),
		client.FieldOwner("tenon-test"))).To(Succeed())
	t.Logf("after a status apply of labels:%s", edgeFields(edgeLive(t, g, body(nil))))
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	g.Expect(edgeSteady(t, g, c, a, body(map[string]any{}), false, "")).To(Equal([]bool{true, false, false, false}))
}

// edgeSteady applies desired four times, the last by a fresh Applier of a's manager, and
// returns whether each call was sent; each must succeed.
func edgeSteady(t *testing.T, g Gomega, c *countingClient, a *patch.Applier, desired *unstructured.Unstructured, force bool, what string) []bool {
	var sends []bool
	for i := range 4 {
		applier := a
		if i == 3 {
			applier = patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
		}
		sent, err := edgeAttempt(t, g, c, applier, desired, force, fmt.Sprintf("%s call %d", what, i))
		g.Expect(err).NotTo(HaveOccurred())
		sends = append(sends, sent)
	}
	return sends
}

// TestAnOmittedEmptyMapThroughAnApplyConfiguration: the fixed case (a ConfigMap's binaryData
// another writer created, taken and given up) through ApplyConfiguration with an unstructured
// apply configuration (client-go's generated apply configurations cannot express an empty map:
// their maps are omitempty and With* leaves them nil).
func TestAnOmittedEmptyMapThroughAnApplyConfiguration(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	cm := func(bin map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "bin", "namespace": ns}, "binaryData": bin}}
	}
	created := cm(map[string]any{"b": "dg=="})
	g.Expect(env.Client().Create(ctx, created, client.FieldOwner("other-writer"))).To(Succeed())
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	_, err := a.ApplyConfiguration(ctx, client.ApplyConfigurationFromUnstructured(cm(map[string]any{"b": "eHg="})), patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = a.ApplyConfiguration(ctx, client.ApplyConfigurationFromUnstructured(cm(map[string]any{})))
	g.Expect(err).NotTo(HaveOccurred())
	c.take()
	for _, ap := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		_, err = ap.ApplyConfiguration(ctx, client.ApplyConfigurationFromUnstructured(cm(map[string]any{})))
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		g.Expect(c.take()["apply"]).To(Equal(1))
	}
}

// TestAnEmptyMapInAListElementARivalOwns: the omitted empty map is below a list element (a
// container's resources.limits, keyed by name): a rival's Update of the container owns limits
// too, and after this manager takes its key with force and gives it up, applying `limits: {}`
// again is a conflict that must be sent (same and fresh Applier); with force, then steady.
func TestAnEmptyMapInAListElementARivalOwns(t *testing.T) {
	for _, rivalName := range []string{"other-writer", "tenon-test"} {
		t.Run(rivalName, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
			dep := func(limits map[string]any) *unstructured.Unstructured {
				u := &unstructured.Unstructured{Object: edgeDeployment(ns, "limits")}
				container := map[string]any{"name": "c", "image": "nginx"}
				if limits != nil {
					container["resources"] = map[string]any{"limits": limits}
				}
				g.Expect(unstructured.SetNestedSlice(u.Object, []any{container}, "spec", "template", "spec", "containers")).To(Succeed())
				return u
			}
			_, err := edgeAttempt(t, g, c, a, dep(nil), false, "create")
			g.Expect(err).NotTo(HaveOccurred())
			target := dep(nil)
			g.Expect(env.Client().Patch(t.Context(), target, client.RawPatch(types.StrategicMergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}}}]}}}}`)), client.FieldOwner(rivalName))).To(Succeed())
			_, err = edgeAttempt(t, g, c, a, dep(map[string]any{"cpu": "2"}), true, "take")
			g.Expect(err).NotTo(HaveOccurred())
			_, err = edgeAttempt(t, g, c, a, dep(map[string]any{}), false, "give up")
			g.Expect(err).NotTo(HaveOccurred())
			t.Logf("after giving up:%s", edgeFields(edgeLive(t, g, dep(nil))))
			for i, ap := range []*patch.Applier{a, patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
				sent, err := edgeAttempt(t, g, c, ap, dep(map[string]any{}), false, fmt.Sprintf("again %d", i))
				t.Logf("again %d: sent=%v err=%v", i, sent, err)
			}
			var sends []bool
			for i := range 3 {
				applier := a
				if i == 2 {
					applier = patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
				}
				sent, err := edgeAttempt(t, g, c, applier, dep(map[string]any{}), true, fmt.Sprintf("forced %d", i))
				g.Expect(err).NotTo(HaveOccurred())
				sends = append(sends, sent)
			}
			t.Logf("forced: %v", sends)
			g.Expect(sends[1:]).To(Equal([]bool{false, false}))
		})
	}
}
