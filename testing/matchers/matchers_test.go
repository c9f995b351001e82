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

package matchers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/testing/matchers"
)

var ownershipScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(testtypes.AddToScheme(s))
	return s
}()

var transition = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func cond(t conditions.Type, status metav1.ConditionStatus, reason, message string, observed int64) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: message,
		ObservedGeneration: observed, LastTransitionTime: transition}
}

func widget(generation, observed int64, cs ...metav1.Condition) *testtypes.Widget {
	return &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default", Generation: generation, UID: "w-uid"},
		Status:     testtypes.WidgetStatus{ObservedGeneration: observed, Conditions: cs},
	}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(testtypes.GroupVersion.String())
	u.SetKind("Widget")
	return u
}

// outcome runs m on actual and returns whether it matched and the message a failure of the
// assertion would print: the failure message when it did not match, the negated one when it did.
func outcome(t *testing.T, m types.GomegaMatcher, actual any) (bool, string) {
	t.Helper()
	ok, err := m.Match(actual)
	if err != nil {
		t.Fatalf("Match returned an error: %v", err)
	}
	if ok {
		return true, m.NegatedFailureMessage(actual)
	}
	return false, m.FailureMessage(actual)
}

func TestHaveConditionFailureShowsWhatDiffersAndTheConditions(t *testing.T) {
	w := widget(2, 2,
		cond(conditions.Ready, metav1.ConditionFalse, "QuotaExceeded", "cpu quota exceeded", 2),
		cond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "waiting for\nquota", 1),
	)

	ok, msg := outcome(t, matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue), w)

	NewWithT(t).Expect(ok).To(BeFalse())
	want := `Expected Widget default/w to have condition Ready=True
but Ready is False (QuotaExceeded: cpu quota exceeded)
Conditions of Widget default/w (generation 2, status.observedGeneration 2):
  TYPE         STATUS  REASON         OBSERVED   LAST TRANSITION       MESSAGE
  Ready        False   QuotaExceeded  2          2026-01-02T03:04:05Z  cpu quota exceeded
  Reconciling  True    Progressing    1 (stale)  2026-01-02T03:04:05Z  waiting for quota
`
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("failure message (-want +got):\n%s", diff)
	}
}

func TestHaveCondition(t *testing.T) {
	w := widget(3, 3,
		cond(conditions.Ready, metav1.ConditionFalse, "QuotaExceeded", "cpu quota exceeded", 3),
		cond(conditions.Available, metav1.ConditionTrue, "Serving", "", 2),
	)
	tests := []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		match   bool
		message string // the first two lines of the message
	}{
		{"type and status match", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse), w, true,
			"Expected Widget default/w not to have condition Ready=False\nbut it does"},
		{"a missing condition", matchers.HaveCondition(conditions.Degraded, metav1.ConditionFalse), w, false,
			"Expected Widget default/w to have condition Degraded=False\nbut it has no Degraded condition"},
		{"the reason matches", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("QuotaExceeded")), w, true,
			"Expected Widget default/w not to have condition Ready=False with reason QuotaExceeded\nbut it does"},
		{"another reason", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason(conditions.ReasonFailed)), w, false,
			"Expected Widget default/w to have condition Ready=False with reason Failed\nbut Ready has reason QuotaExceeded"},
		{"the message contains the text", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithMessage("cpu")), w, true,
			"Expected Widget default/w not to have condition Ready=False with a message containing \"cpu\"\nbut it does"},
		{"the message lacks the text", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("QuotaExceeded"), matchers.WithMessage("memory")), w, false,
			"Expected Widget default/w to have condition Ready=False with reason QuotaExceeded and a message containing \"memory\"\nbut Ready has message \"cpu quota exceeded\""},
		{"the message contains every text", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithMessage("cpu"), matchers.WithMessage("exceeded")), w, true,
			"Expected Widget default/w not to have condition Ready=False with a message containing \"cpu\" and a message containing \"exceeded\"\nbut it does"},
		{"the message lacks one of the texts", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithMessage("memory"), matchers.WithMessage("cpu")), w, false,
			"Expected Widget default/w to have condition Ready=False with a message containing \"memory\" and a message containing \"cpu\"\nbut Ready has message \"cpu quota exceeded\""},
		{"observed at the current generation", matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.CurrentGeneration{}), w, true,
			"Expected Widget default/w not to have condition Ready=False, observed at the current generation\nbut it does"},
		{"observed at an older generation", matchers.HaveCondition(conditions.Available, metav1.ConditionTrue, matchers.CurrentGeneration{}), w, false,
			"Expected Widget default/w to have condition Available=True, observed at the current generation\nbut Available was observed at generation 2, and the object is at generation 3"},
		{"an unstructured object", matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue), toUnstructured(t, w), false,
			"Expected Widget default/w to have condition Ready=True\nbut Ready is False (QuotaExceeded: cpu quota exceeded)"},
		{"a bare condition list", matchers.HaveCondition(conditions.Available, metav1.ConditionTrue), w.Status.Conditions, true,
			"Expected the condition list not to have condition Available=True\nbut it does"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, msg := outcome(t, tt.matcher, tt.actual)
			g.Expect(ok).To(Equal(tt.match))
			g.Expect(msg).To(HavePrefix(tt.message + "\n"))
			g.Expect(msg).To(ContainSubstring("QuotaExceeded  3"), "the message shows the conditions")
		})
	}
}

func TestMatchersRefuseValuesTheyCannotRead(t *testing.T) {
	tests := []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		err     string
	}{
		{"nil", matchers.BeReady(), nil, "failed to check whether the value can be Ready: expected an object, got nil"},
		{"a nil object", matchers.BeReady(), (*testtypes.Widget)(nil), "failed to check whether the value can be Ready: expected an object, got a nil *testtypes.Widget"},
		{"an object without conditions", matchers.BeReady(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}},
			"failed to check whether ConfigMap cm can be Ready: *v1.ConfigMap has no conditions: it needs a GetConditions() []metav1.Condition method (see conditions.Getter)"},
		{"not an object", matchers.HaveFinalizer("f"), "w", "failed to check whether the value can have finalizer \"f\": expected an object, got string"},
		{"finalizers of a bare list", matchers.HaveFinalizer("f"), []metav1.Condition{},
			"failed to check whether the condition list can have finalizer \"f\": the condition list is not an object: it has no finalizers"},
		{"a generation check on a bare list", matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue, matchers.CurrentGeneration{}), []metav1.Condition{},
			"failed to check whether the condition list can have condition Ready=True, observed at the current generation: a bare condition list has no generation to compare observedGeneration with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.matcher.Match(tt.actual)
			NewWithT(t).Expect(err).To(MatchError(tt.err))
		})
	}
}

func TestConditionMatchersReadAGetterThatIsNotAnObject(t *testing.T) {
	g := NewWithT(t)
	list := []metav1.Condition{cond(conditions.Ready, metav1.ConditionTrue, "Succeeded", "", 1)}
	adapter := conditions.ForSlice(&list, 2)

	ok, msg := outcome(t, matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue, matchers.CurrentGeneration{}), adapter)

	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(HavePrefix("Expected the conditions.sliceAdapter to have condition Ready=True, observed at the current generation\n" +
		"but Ready was observed at generation 1, and the object is at generation 2\n"))
}

func TestBeReady(t *testing.T) {
	ready := cond(conditions.Ready, metav1.ConditionTrue, "Succeeded", "", 2)
	tests := []struct {
		name   string
		actual any
		match  bool
		why    string
	}{
		{"Ready True at the current generation", widget(2, 2, ready), true, "but it does"},
		{"no Ready condition", widget(2, 2), false, "but it has no Ready condition"},
		{"Ready False", widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "Failed", "boom", 2)), false, "but Ready is False (Failed: boom)"},
		{"Ready True for an older generation", widget(3, 3, ready), false, "but Ready is True for generation 2, not for the current generation 3"},
		{"status.observedGeneration lags", widget(2, 1, ready), false, "but status.observedGeneration 1 lags metadata.generation 2"},
		{"status.observedGeneration lags on an unstructured object", toUnstructured(t, widget(2, 1, ready)), false,
			"but status.observedGeneration 1 lags metadata.generation 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, msg := outcome(t, matchers.BeReady(), tt.actual)
			g.Expect(ok).To(Equal(tt.match))
			g.Expect(msg).To(ContainSubstring("be Ready\n" + tt.why + "\nConditions of Widget default/w"))
		})
	}
}

func TestHaveKStatus(t *testing.T) {
	g := NewWithT(t)
	current := widget(2, 2, cond(conditions.Ready, metav1.ConditionTrue, "Succeeded", "", 2))
	reconciling := widget(2, 2, cond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "scaling to 3", 2))
	behind := widget(3, 2, cond(conditions.Ready, metav1.ConditionTrue, "Succeeded", "", 2))

	ok, msg := outcome(t, matchers.HaveKStatus(conditions.KStatusCurrent), current)
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w not to be Current by kstatus\nbut it does\n"))

	ok, msg = outcome(t, matchers.HaveKStatus(conditions.KStatusCurrent), reconciling)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w to be Current by kstatus\nbut kstatus computes InProgress: scaling to 3\n"))

	ok, msg = outcome(t, matchers.HaveKStatus(conditions.KStatusCurrent), toUnstructured(t, behind))
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(ContainSubstring("but kstatus computes InProgress: Widget generation is 3, but latest observed generation is 2\n"))

	ok, _ = outcome(t, matchers.HaveKStatus(conditions.KStatusInProgress), reconciling)
	g.Expect(ok).To(BeTrue())

	// kstatus falls back to Ready when neither Reconciling nor Stalled is True.
	notReady := widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "QuotaExceeded", "cpu quota exceeded", 2))
	ok, msg = outcome(t, matchers.HaveKStatus(conditions.KStatusCurrent), notReady)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w to be Current by kstatus\nbut kstatus computes InProgress: cpu quota exceeded\n"))
	ok, _ = outcome(t, matchers.HaveKStatus(conditions.KStatusInProgress), toUnstructured(t, notReady))
	g.Expect(ok).To(BeTrue())

	// Stalled before Reconciling in the list: kstatus takes the first True one.
	stalledFirst := widget(2, 2, cond(conditions.Stalled, metav1.ConditionTrue, "InvalidSpec", "size must be small", 2),
		cond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "scaling to 3", 2))
	ok, msg = outcome(t, matchers.HaveKStatus(conditions.KStatusFailed), stalledFirst)
	g.Expect(ok).To(BeTrue(), msg)

	_, err := matchers.HaveKStatus(conditions.KStatusCurrent).Match([]metav1.Condition{})
	g.Expect(err).To(MatchError(ContainSubstring("kstatus needs an object")))
}

func TestBeCompliant(t *testing.T) {
	g := NewWithT(t)
	compliant := widget(2, 2, cond(conditions.Ready, metav1.ConditionTrue, "Succeeded", "", 2))
	broken := widget(2, 0, cond(conditions.Ready, metav1.ConditionFalse, "Failed", "", 3))
	broken.Status.ObservedGeneration = 0

	ok, msg := outcome(t, matchers.BeCompliant(), compliant)
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w not to follow the status condition convention\nbut it does\n"))

	ok, msg = outcome(t, matchers.BeCompliant(), broken)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w to follow the status condition convention\nbut it breaks it:\n" +
		"  - rule 3: no status.observedGeneration: kstatus cannot tell whether the status describes the current spec\n" +
		"  - rule 3: condition Ready observed generation 3, newer than metadata.generation 2\n" +
		"  - rule 4: Ready is False but neither Reconciling nor Stalled is True: kstatus falls back to Ready and reports the object InProgress, and can never report it Failed\n" +
		"Conditions of Widget default/w (generation 2, status.observedGeneration 0):\n"))
}

// The rules of BeCompliant, one case at least per rule; these are the cases of the
// conditions.Check it replaces.
func TestBeCompliantRules(t *testing.T) {
	ready := func(observed int64) metav1.Condition {
		return cond(conditions.Ready, metav1.ConditionTrue, "R", "", observed)
	}
	tests := []struct {
		name      string
		obj       func() client.Object
		wantRules []string // each is part of the message of one broken rule, in order
	}{
		{
			name: "a compliant ready object",
			obj:  func() client.Object { return widget(2, 2, ready(2)) },
		},
		{
			name: "a compliant object in progress",
			obj: func() client.Object {
				return widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "R", "", 2), cond(conditions.Reconciling, metav1.ConditionTrue, "R", "", 2))
			},
		},
		{
			name: "a ready object that is reconciling again",
			obj: func() client.Object {
				return widget(2, 2, ready(2), cond(conditions.Reconciling, metav1.ConditionTrue, "RetryingAfterError", "dns api: 503", 2))
			},
		},
		{
			name:      "Ready False without Reconciling or Stalled",
			obj:       func() client.Object { return widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "R", "", 2)) },
			wantRules: []string{"rule 4: Ready is False but neither Reconciling nor Stalled is True: kstatus falls back to Ready and reports the object InProgress, and can never report it Failed"},
		},
		{
			name: "Ready False without Reconciling or Stalled while being deleted",
			obj: func() client.Object {
				w := widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "R", "", 2))
				w.DeletionTimestamp, w.Finalizers = &transition, []string{"test.tenon.dev/hold"}
				return w
			},
		},
		{
			name:      "Ready True at the current generation while status.observedGeneration lags",
			obj:       func() client.Object { return widget(3, 2, ready(3)) },
			wantRules: []string{"rule 3: Ready is True at generation 3 but status.observedGeneration 2 lags metadata.generation 3: kstatus reports the object InProgress"},
		},
		{
			name: "a spec change the controller has not seen yet is not a violation",
			obj:  func() client.Object { return widget(3, 2, ready(2)) },
		},
		{
			name: "no Ready condition and no observedGeneration",
			obj: func() client.Object {
				return widget(1, 0, cond(conditions.Reconciling, metav1.ConditionTrue, "R", "", 1))
			},
			wantRules: []string{
				"rule 2: no Ready condition",
				"rule 3: no status.observedGeneration",
			},
		},
		{
			name:      "no conditions at all",
			obj:       func() client.Object { return widget(1, 1) },
			wantRules: []string{"rule 2: no Ready condition", "rule 4: Ready is missing and neither Reconciling nor Stalled is True: kstatus reports the object Current"},
		},
		{
			name: "contradictions and impossible generations",
			obj: func() client.Object {
				return widget(2, 5, ready(3), cond(conditions.Reconciling, metav1.ConditionTrue, "R", "", 2), cond(conditions.Stalled, metav1.ConditionTrue, "R", "", 2))
			},
			wantRules: []string{
				"rule 3: status.observedGeneration 5 is newer than metadata.generation 2",
				"rule 3: condition Ready observed generation 3",
				"rule 5: Ready is True while Stalled is True",
				"rule 5: Reconciling and Stalled are both True: kstatus reports whichever comes first in the list",
			},
		},
		{
			name: "invalid and duplicate conditions",
			obj: func() client.Object {
				return widget(1, 1, cond(conditions.Ready, metav1.ConditionTrue, "bad reason", "", 1), ready(1))
			},
			wantRules: []string{"rule 1: invalid condition \"Ready\"", "rule 1: condition Ready appears more than once"},
		},
		{
			name: "an unstructured object",
			obj: func() client.Object {
				return toUnstructured(t, widget(2, 2, cond(conditions.Ready, metav1.ConditionFalse, "R", "", 2)))
			},
			wantRules: []string{"rule 4: Ready is False"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, msg := outcome(t, matchers.BeCompliant(), tt.obj())
			g.Expect(ok).To(Equal(len(tt.wantRules) == 0), msg)
			if ok {
				return
			}
			// The broken rules, one a line, between the "but" line and the conditions table.
			_, rest, _ := strings.Cut(msg, "but it breaks it:\n")
			rest, _, _ = strings.Cut(rest, "Conditions of ")
			lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
			g.Expect(lines).To(HaveLen(len(tt.wantRules)), msg)
			for i, rule := range tt.wantRules {
				g.Expect(lines[i]).To(HavePrefix("  - "+rule), msg)
			}
		})
	}
}

func TestTheDeletingConditionIsAConditionLikeAnyOther(t *testing.T) {
	g := NewWithT(t)
	deleting := widget(2, 2, cond(conditions.Deleting, metav1.ConditionTrue, "WaitingForDNS", "deleting record www", 2))
	notDeleted := deleting.DeepCopy()
	deleting.DeletionTimestamp = &transition
	deleting.Finalizers = []string{"test.tenon.dev/dns"}

	ok, msg := outcome(t, matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue, matchers.WithReason("WaitingForDNS")), deleting)
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(HavePrefix("Expected Widget default/w not to have condition Deleting=True with reason WaitingForDNS\nbut it does\n"))

	ok, msg = outcome(t, matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue, matchers.WithMessage("www2")), deleting)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(ContainSubstring("but Deleting has message \"deleting record www\"\n"))

	// The condition says nothing about the deletionTimestamp; HaveField does, as the doc says.
	beingDeleted := And(matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue), HaveField("DeletionTimestamp", Not(BeNil())))
	g.Expect(deleting).To(beingDeleted)
	g.Expect(notDeleted).NotTo(beingDeleted)
}

func TestHaveFinalizer(t *testing.T) {
	g := NewWithT(t)
	w := widget(1, 1)
	w.Finalizers = []string{"a.tenon.dev/one", "b.tenon.dev/two"}

	ok, msg := outcome(t, matchers.HaveFinalizer("b.tenon.dev/two"), w)
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(Equal("Expected Widget default/w not to have finalizer \"b.tenon.dev/two\"\nbut it does\n" +
		"Finalizers: [\"a.tenon.dev/one\" \"b.tenon.dev/two\"]\n"))

	ok, msg = outcome(t, matchers.HaveFinalizer("c.tenon.dev/three"), w)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(Equal("Expected Widget default/w to have finalizer \"c.tenon.dev/three\"\nbut it does not\n" +
		"Finalizers: [\"a.tenon.dev/one\" \"b.tenon.dev/two\"]\n"))

	ok, msg = outcome(t, matchers.HaveFinalizer("c.tenon.dev/three"), widget(1, 1))
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(HaveSuffix("Finalizers: none\n"))
}

func TestBeControlledByAndBeOwnedBy(t *testing.T) {
	owner := widget(1, 1)
	other := widget(1, 1)
	other.UID = "other-uid"
	sameNameNewUID := widget(1, 1)
	sameNameNewUID.UID = "recreated-uid"
	unfetched := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default"}}
	unfetchedWithKind := unfetched.DeepCopy()
	unfetchedWithKind.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Gadget"))
	ref := func(controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: testtypes.GroupVersion.String(), Kind: "Widget", Name: "w", UID: "w-uid", Controller: ptr.To(controller)}
	}
	child := func(refs ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: "default", OwnerReferences: refs}}
	}
	unfetchedElsewhere := unfetched.DeepCopy()
	unfetchedElsewhere.Namespace = "elsewhere"
	unfetchedWidget := unfetched.DeepCopy()
	unfetchedWidget.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
	// ownership.Set marks a child in another namespace, and a cluster-scoped one, with its
	// tracking label and annotations: an owner reference is not allowed there.
	trackedElsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: "elsewhere"}}
	trackedFixture := &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: "child"}}
	for _, c := range []client.Object{trackedElsewhere, trackedFixture} {
		mechanism, _, err := ownership.Set(owner, c, ownershipScheme)
		if err != nil || mechanism != ownership.TrackingLabels {
			t.Fatalf("ownership.Set: %v, %v", mechanism, err)
		}
	}
	bothMarks := trackedElsewhere.DeepCopy()
	bothMarks.OwnerReferences = []metav1.OwnerReference{ref(false)}

	tests := []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		match   bool
		message string
	}{
		{"controlled by its owner", matchers.BeControlledBy(owner), child(ref(true)), true,
			"Expected ConfigMap default/child not to be controlled by Widget default/w (uid w-uid)\nbut it does\n" +
				"Owner references:\n  test.tenon.dev/v1 Widget w (uid w-uid, controller)\n"},
		{"owned but not controlled", matchers.BeControlledBy(owner), child(ref(false)), false,
			"Expected ConfigMap default/child to be controlled by Widget default/w (uid w-uid)\n" +
				"but its reference to the owner is not a controller reference, and it has no tracking label for the owner\n" +
				"Owner references:\n  test.tenon.dev/v1 Widget w (uid w-uid)\n"},
		{"owned by a non-controller reference", matchers.BeOwnedBy(owner), child(ref(false)), true, ""},
		{"owned by a controller reference", matchers.BeOwnedBy(owner), child(ref(true)), true, ""},
		{"another owner", matchers.BeOwnedBy(other), child(ref(true)), false,
			"Expected ConfigMap default/child to be owned by Widget default/w (uid other-uid)\nbut it has no reference to that owner, and no tracking label for it\n" +
				"Owner references:\n  test.tenon.dev/v1 Widget w (uid w-uid, controller)\n"},
		{"an owner recreated with the same name", matchers.BeOwnedBy(sameNameNewUID), child(ref(true)), false, ""},
		{"no owner references", matchers.BeOwnedBy(owner), child(), false,
			"Expected ConfigMap default/child to be owned by Widget default/w (uid w-uid)\nbut it has no reference to that owner, and no tracking label for it\nOwner references: none\n"},
		{"an owner without a UID is matched by name", matchers.BeControlledBy(unfetched), child(ref(true)), true, ""},
		{"an owner without a UID but with a kind is matched by kind too", matchers.BeOwnedBy(unfetchedWithKind), child(ref(true)), false, ""},

		{"controlled by the owner that tracks it", matchers.BeControlledBy(owner), trackedElsewhere, true,
			"Expected ConfigMap elsewhere/child not to be controlled by Widget default/w (uid w-uid)\nbut it does\n" +
				"Owner references: none\nTracking label: Widget.test.tenon.dev default/w (uid w-uid)\n"},
		{"owned by the owner that tracks it", matchers.BeOwnedBy(owner), trackedElsewhere, true, ""},
		{"tracked by another owner", matchers.BeControlledBy(other), trackedElsewhere, false,
			"Expected ConfigMap elsewhere/child to be controlled by Widget default/w (uid other-uid)\nbut it has no reference to that owner, and no tracking label for it\n" +
				"Owner references: none\nTracking label: Widget.test.tenon.dev default/w (uid w-uid)\n"},
		{"tracked by an earlier owner of the same name", matchers.BeOwnedBy(sameNameNewUID), trackedElsewhere, false, ""},
		{"tracked by an owner without a UID, matched by name and namespace", matchers.BeControlledBy(unfetched), trackedElsewhere, true, ""},
		{"tracked by an owner without a UID in another namespace", matchers.BeControlledBy(unfetchedElsewhere), trackedElsewhere, false, ""},
		{"tracked by an owner without a UID of another kind", matchers.BeControlledBy(unfetchedWithKind), trackedElsewhere, false, ""},
		{"tracked by an owner without a UID of the same kind", matchers.BeControlledBy(unfetchedWidget), trackedElsewhere, true, ""},
		{"a cluster-scoped child tracked by a namespaced owner", matchers.BeControlledBy(owner), trackedFixture, true, ""},
		{"a child with both marks of the owner", matchers.BeControlledBy(owner), bothMarks, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, msg := outcome(t, tt.matcher, tt.actual)
			g.Expect(ok).To(Equal(tt.match))
			if tt.message != "" {
				if diff := cmp.Diff(tt.message, msg); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestBeGone(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	present := widget(1, 1)
	present.UID = ""
	g.Expect(c.Create(ctx, present)).To(Succeed())
	held := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Finalizers: []string{"test.tenon.dev/hold"}}}
	g.Expect(c.Create(ctx, held)).To(Succeed())
	g.Expect(c.Delete(ctx, held)).To(Succeed())
	gone := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "default"}}

	ok, msg := outcome(t, matchers.BeGone(c), gone)
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(Equal("Expected Widget default/gone not to be gone\nbut it does\n"))

	ok, msg = outcome(t, matchers.BeGone(c), present)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(Equal("Expected Widget default/w to be gone\nbut it exists and is not being deleted\n"))

	ok, msg = outcome(t, matchers.BeGone(c), held)
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(MatchRegexp(`^Expected Widget default/held to be gone\nbut it is being deleted since \S+, held by finalizers \["test.tenon.dev/hold"\]\n$`))

	u := toUnstructured(t, gone)
	ok, _ = outcome(t, matchers.BeGone(c), u)
	g.Expect(ok).To(BeTrue(), "an unstructured object is read as unstructured")

	// With Eventually, BeGone reads again on every poll.
	go func() {
		latest := &testtypes.Widget{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(held), latest)
		latest.Finalizers = nil
		_ = c.Update(ctx, latest)
	}()
	g.Eventually(held).WithTimeout(30 * time.Second).Should(matchers.BeGone(c))
	g.Expect(held.Finalizers).To(ConsistOf("test.tenon.dev/hold"), "BeGone never changes the object it is given")
}
