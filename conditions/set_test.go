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

package conditions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// widget returns a Widget at generation gen with the given conditions.
func widget(gen int64, cs ...metav1.Condition) *testtypes.Widget {
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: gen}}
	w.Status.Conditions = cs
	return w
}

// at returns a metav1.Time for a fixed instant plus offset seconds.
func at(offset int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 11, 29, 12, 0, offset, 0, time.Local))
}

func cond(t conditions.Type, status metav1.ConditionStatus, reason conditions.Reason, message string, gen int64, ltt metav1.Time) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: string(reason), Message: message, ObservedGeneration: gen, LastTransitionTime: ltt}
}

func types(list []metav1.Condition) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].Type
	}
	return out
}

func TestSetStampsObservedGenerationAndTruncatedTransitionTime(t *testing.T) {
	g := NewWithT(t)
	w := widget(7)
	before := time.Now().Truncate(time.Second)

	changed := conditions.Set(w, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded", ObservedGeneration: 3})

	g.Expect(changed).To(BeTrue())
	got := w.Status.Conditions[0]
	g.Expect(got.ObservedGeneration).To(BeEquivalentTo(7), "observedGeneration comes from the object, not the caller")
	g.Expect(got.LastTransitionTime.Nanosecond()).To(BeZero(), "truncated to whole seconds")
	g.Expect(got.LastTransitionTime.Time).To(BeTemporally(">=", before))
	g.Expect(got.LastTransitionTime.Time).To(BeTemporally("<=", time.Now()))
}

func TestSetTransitionTimeRules(t *testing.T) {
	tests := []struct {
		name        string
		existing    []metav1.Condition
		set         metav1.Condition
		wantChanged bool
		wantLTT     metav1.Time // zero: expect "now"
	}{
		{
			name:        "same status with a new message keeps the transition time",
			existing:    []metav1.Condition{cond("Ready", "False", "Waiting", "old", 1, at(0))},
			set:         cond("Ready", "False", "Waiting", "new", 0, metav1.Time{}),
			wantChanged: true,
			wantLTT:     at(0),
		},
		{
			name:        "same status with a new reason keeps the transition time",
			existing:    []metav1.Condition{cond("Ready", "False", "Waiting", "m", 1, at(0))},
			set:         cond("Ready", "False", "Failed", "m", 0, metav1.Time{}),
			wantChanged: true,
			wantLTT:     at(0),
		},
		{
			name:        "same status ignores a transition time given by the caller",
			existing:    []metav1.Condition{cond("Ready", "False", "Waiting", "m", 1, at(0))},
			set:         cond("Ready", "False", "Waiting", "m2", 0, at(30)),
			wantChanged: true,
			wantLTT:     at(0),
		},
		{
			name:        "the same condition again is not a change",
			existing:    []metav1.Condition{cond("Ready", "True", "Succeeded", "m", 1, at(0))},
			set:         cond("Ready", "True", "Succeeded", "m", 0, metav1.Time{}),
			wantChanged: false,
			wantLTT:     at(0),
		},
		{
			name:        "a status flip takes the caller's transition time, truncated",
			existing:    []metav1.Condition{cond("Ready", "False", "Waiting", "m", 1, at(0))},
			set:         cond("Ready", "True", "Succeeded", "m", 0, metav1.NewTime(at(10).Add(700*time.Millisecond))),
			wantChanged: true,
			wantLTT:     at(10),
		},
		{
			name:        "a status flip without a caller's time takes now",
			existing:    []metav1.Condition{cond("Ready", "False", "Waiting", "m", 1, at(0))},
			set:         cond("Ready", "Unknown", "Waiting", "m", 0, metav1.Time{}),
			wantChanged: true,
		},
		{
			name:        "a new condition takes the caller's transition time, truncated",
			set:         cond("Ready", "True", "Succeeded", "", 0, metav1.NewTime(at(5).Add(time.Millisecond))),
			wantChanged: true,
			wantLTT:     at(5),
		},
		{
			name:        "only a new observed generation is a change that keeps the transition time",
			existing:    []metav1.Condition{cond("Ready", "True", "Succeeded", "m", 0, at(0))},
			set:         cond("Ready", "True", "Succeeded", "m", 0, metav1.Time{}),
			wantChanged: true,
			wantLTT:     at(0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := widget(1, tt.existing...)
			start := time.Now().Truncate(time.Second)

			changed := conditions.Set(w, tt.set)

			g.Expect(changed).To(Equal(tt.wantChanged))
			g.Expect(w.Status.Conditions).To(HaveLen(1))
			got := w.Status.Conditions[0]
			if tt.wantLTT.IsZero() {
				g.Expect(got.LastTransitionTime.Time).To(BeTemporally(">=", start))
				g.Expect(got.LastTransitionTime.Nanosecond()).To(BeZero())
			} else {
				g.Expect(got.LastTransitionTime.Time).To(BeTemporally("==", tt.wantLTT.Time))
			}
			g.Expect(got.Status).To(Equal(tt.set.Status))
			g.Expect(got.Message).To(Equal(tt.set.Message))
			g.Expect(got.ObservedGeneration).To(BeEquivalentTo(1))
		})
	}
}

func TestSetStoresAnInvalidConditionAndPatchRefusesToWriteIt(t *testing.T) {
	valid := cond("Ready", "True", "Succeeded", "fine", 0, metav1.Time{})
	tests := []struct {
		name      string
		mutate    func(*metav1.Condition)
		wantField string
		wantRule  string
	}{
		{"an empty type", func(c *metav1.Condition) { c.Type = "" }, "type", "Required value"},
		{"a type with a space", func(c *metav1.Condition) { c.Type = "Not Ready" }, "type", "name part must consist of alphanumeric characters"},
		{"a type longer than 63 characters", func(c *metav1.Condition) { c.Type = strings.Repeat("a", 64) }, "type", "must be no more than 63 bytes"},
		{"a type with an invalid prefix", func(c *metav1.Condition) { c.Type = "Example.COM/Ready" }, "type", "prefix part"},
		{"a type with two slashes", func(c *metav1.Condition) { c.Type = "a/b/c" }, "type", "a valid label key must consist of"},
		{"an empty reason", func(c *metav1.Condition) { c.Reason = "" }, "reason", "Required value"},
		{"a reason with spaces", func(c *metav1.Condition) { c.Reason = "connection refused" }, "reason", "a condition reason must start with alphabetic character"},
		{"a reason starting with a digit", func(c *metav1.Condition) { c.Reason = "404NotFound" }, "reason", "a condition reason must start with alphabetic character"},
		{"a reason ending in a colon", func(c *metav1.Condition) { c.Reason = "Failed:" }, "reason", "must end with an alphanumeric character or '_'"},
		{"a reason longer than 1024 characters", func(c *metav1.Condition) { c.Reason = strings.Repeat("A", 1025) }, "reason", "may not be more than 1024 bytes"},
		{"a message longer than 32768 bytes", func(c *metav1.Condition) { c.Message = strings.Repeat("x", 32769) }, "message", "may not be more than 32768 bytes"},
		{"an empty status", func(c *metav1.Condition) { c.Status = "" }, "status", "Required value"},
		{"a status that is not True, False or Unknown", func(c *metav1.Condition) { c.Status = "Yes" }, "status", `supported values: "False", "True", "Unknown"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			existing := cond("Available", "True", "Succeeded", "", 1, at(0))
			w := widget(1, existing)
			c := valid
			tt.mutate(&c)
			server, writes := fakeServer(t, w.DeepCopy())
			g.Expect(server.Get(t.Context(), client.ObjectKeyFromObject(w), w)).To(Succeed())
			h, err := patch.NewHelper(w, server)
			g.Expect(err).NotTo(HaveOccurred())

			changed := conditions.Set(w, c)

			g.Expect(changed).To(BeTrue())
			got := conditions.Get(w, conditions.Type(c.Type))
			g.Expect(got).NotTo(BeNil(), "the invalid condition is stored")
			g.Expect(got.Status).To(Equal(c.Status))
			g.Expect(got.Reason).To(Equal(c.Reason))
			g.Expect(got.Message).To(Equal(c.Message))
			g.Expect(conditions.Get(w, "Available")).To(Equal(&existing), "the other conditions are kept")

			caller := w.DeepCopy()
			err = h.Patch(t.Context(), w)

			g.Expect(err).To(MatchError(conditions.ErrInvalid))
			g.Expect(err.Error()).To(ContainSubstring("status.conditions[" + c.Type + "]." + tt.wantField))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantRule))
			g.Expect(*writes).To(BeZero(), "Patch sends nothing")
			g.Expect(cmp.Diff(caller, w)).To(BeEmpty(), "Patch leaves the object as the caller had it")
		})
	}
}

func TestSetStoresAnInvalidReplacement(t *testing.T) {
	g := NewWithT(t)
	w := widget(2, cond("Ready", "True", "Succeeded", "", 2, at(0)))

	changed := conditions.MarkFalse(w, conditions.Ready, "not valid", "boom")

	g.Expect(changed).To(BeTrue())
	g.Expect(w.Status.Conditions).To(HaveLen(1))
	got := w.Status.Conditions[0]
	g.Expect(got.Reason).To(Equal("not valid"))
	g.Expect(got.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(got.LastTransitionTime.Time).NotTo(BeTemporally("==", at(0).Time), "a flip is a transition, valid or not")
	g.Expect(conditions.Validate(got)).To(MatchError(ContainSubstring("status.conditions[Ready].reason")))
}

// fakeServer returns a fake client holding obj, and the number of writes sent to it.
func fakeServer(t *testing.T, obj client.Object) (client.Client, *int) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := testtypes.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	writes := new(int)
	count := func() { *writes++ }
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(obj).WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, p, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			count()
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}).Build()
	return c, writes
}

func TestSetInsertsNewConditionsInOrderAndNeverReorders(t *testing.T) {
	g := NewWithT(t)
	w := widget(1)
	for _, ct := range []conditions.Type{"Zeta", "Alpha", conditions.Ready, "Mid", "Beta"} {
		conditions.MarkTrue(w, ct, conditions.ReasonSucceeded, "")
	}
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Ready", "Alpha", "Beta", "Mid", "Zeta"}))

	// A list someone else wrote in another order keeps its order; new types go before the first
	// condition that sorts after them.
	w = widget(1, cond("Zeta", "True", "R", "", 1, at(0)), cond("Alpha", "True", "R", "", 1, at(0)))
	conditions.MarkFalse(w, "Zeta", "R", "changed")
	conditions.MarkTrue(w, "Beta", "R", "")
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Beta", "Zeta", "Alpha"}))
}

// ordered is a Widget with an order of its own.
type ordered struct{ testtypes.Widget }

func (*ordered) ConditionOrder() []conditions.Type {
	return []conditions.Type{conditions.Ready, "Available", "Progressing"}
}

func TestSetUsesTheObjectsOrder(t *testing.T) {
	g := NewWithT(t)
	o := &ordered{}
	for _, ct := range []conditions.Type{"Zeta", "Progressing", "Alpha", "Available", conditions.Ready} {
		conditions.MarkTrue(o, ct, conditions.ReasonSucceeded, "")
	}
	g.Expect(types(o.Status.Conditions)).To(Equal([]string{"Ready", "Available", "Progressing", "Alpha", "Zeta"}))

	// Set in the order's own order, after the first of it: each goes after those before it.
	o = &ordered{}
	for _, ct := range []conditions.Type{conditions.Ready, "Progressing", "Available", "Alpha"} {
		conditions.MarkTrue(o, ct, conditions.ReasonSucceeded, "")
	}
	g.Expect(types(o.Status.Conditions)).To(Equal([]string{"Ready", "Available", "Progressing", "Alpha"}))
}

func TestSetCopiesTheListItChanges(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, cond("Ready", "False", "Waiting", "", 1, at(0)))
	before := w.Status.Conditions

	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")

	g.Expect(before[0].Status).To(BeEquivalentTo("False"), "the slice read before Set is unchanged")
	g.Expect(w.Status.Conditions[0].Status).To(BeEquivalentTo("True"))
}

func TestSetReplacesInvalidUTF8AsTheAPIServerWould(t *testing.T) {
	g := NewWithT(t)
	w := widget(1)

	conditions.MarkFalse(w, conditions.Ready, conditions.ReasonFailed, "bad \xff byte")
	g.Expect(w.Status.Conditions[0].Message).To(Equal("bad \uFFFD byte"))

	// Setting the same text again must not be a change (no hot loop after a round trip).
	changed := conditions.MarkFalse(w, conditions.Ready, conditions.ReasonFailed, "bad \xff byte")
	g.Expect(changed).To(BeFalse())
}

func TestMarkTruncatesLongMessages(t *testing.T) {
	g := NewWithT(t)
	w := widget(1)

	conditions.MarkFalse(w, conditions.Ready, conditions.ReasonFailed, strings.Repeat("é", 20000))

	msg := w.Status.Conditions[0].Message
	g.Expect(len(msg)).To(BeNumerically("<=", 32768))
	g.Expect(msg).To(HaveSuffix("…"))
	g.Expect(strings.ToValidUTF8(msg, "?")).To(Equal(msg), "cut at a rune boundary")
}

func TestDelete(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, cond("Ready", "True", "R", "", 1, at(0)), cond("Zeta", "True", "R", "", 1, at(0)))
	shared := w.Status.Conditions

	g.Expect(conditions.Delete(w, "Zeta")).To(BeTrue())
	g.Expect(conditions.Delete(w, "Zeta")).To(BeFalse())
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Ready"}))
	g.Expect(types(shared)).To(Equal([]string{"Ready", "Zeta"}), "a slice shared with another copy is not modified")
}

func TestDeleteRemovesEveryConditionOfTheType(t *testing.T) {
	g := NewWithT(t)
	// Written by hand or by another tool: the API server accepts duplicates in a list that is not
	// a map list.
	w := widget(1, cond("Zeta", "True", "R", "", 1, at(0)), cond("Ready", "True", "R", "", 1, at(0)), cond("Zeta", "False", "R", "", 1, at(0)))

	g.Expect(conditions.Delete(w, "Zeta")).To(BeTrue())

	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Ready"}))
	g.Expect(conditions.Get(w, "Zeta")).To(BeNil())
	g.Expect(conditions.Delete(w, "Zeta")).To(BeFalse())
}

func TestSetGivesAConditionWithoutTransitionTimeOne(t *testing.T) {
	tests := []struct {
		name string
		set  metav1.Condition
		want metav1.Time // zero: expect now
	}{
		{name: "the same condition again", set: cond("Ready", "True", "Succeeded", "built in memory", 0, metav1.Time{})},
		{name: "a new message", set: cond("Ready", "True", "Succeeded", "a new message", 0, metav1.Time{})},
		{name: "a time given by the caller", set: cond("Ready", "True", "Succeeded", "built in memory", 0, at(20)), want: at(20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// A condition built in memory, as a literal or by apimachinery's meta helpers, without
			// lastTransitionTime.
			w := widget(1, cond("Ready", "True", "Succeeded", "built in memory", 1, metav1.Time{}))
			start := time.Now().Truncate(time.Second)

			changed := conditions.Set(w, tt.set)

			g.Expect(changed).To(BeTrue())
			got := w.Status.Conditions[0]
			g.Expect(got.Message).To(Equal(tt.set.Message))
			if tt.want.IsZero() {
				g.Expect(got.LastTransitionTime.Time).To(BeTemporally(">=", start))
				g.Expect(got.LastTransitionTime.Nanosecond()).To(BeZero())
			} else {
				g.Expect(got.LastTransitionTime.Time).To(BeTemporally("==", tt.want.Time))
			}
			g.Expect(conditions.Validate(got)).To(Succeed())
		})
	}
}

func TestForSlice(t *testing.T) {
	g := NewWithT(t)
	var list []metav1.Condition

	conditions.Set(conditions.ForSlice(&list, 0), cond("Ready", "True", "R", "", 4, metav1.Time{}))
	g.Expect(list).To(HaveLen(1))
	g.Expect(list[0].ObservedGeneration).To(BeEquivalentTo(4), "generation 0 keeps the caller's observedGeneration")

	conditions.MarkFalse(conditions.ForSlice(&list, 9), conditions.Ready, "R", "")
	g.Expect(list[0].ObservedGeneration).To(BeEquivalentTo(9))
}

func TestSetOfAnUnchangedConditionDoesNotAllocate(t *testing.T) {
	w := widget(3)
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "all good")
	c := w.Status.Conditions[0]
	c.LastTransitionTime = metav1.Time{}

	allocs := testing.AllocsPerRun(100, func() {
		if conditions.Set(w, c) {
			t.Fatal("setting the same condition again was a change")
		}
	})

	NewWithT(t).Expect(allocs).To(BeZero())
}
