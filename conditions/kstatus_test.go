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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func TestMarkReconcilingAndMarkStalledClearEachOther(t *testing.T) {
	g := NewWithT(t)
	w := widget(1)

	changed := conditions.MarkStalled(w, "InvalidSpec", "replicas must be odd")
	g.Expect(changed).To(BeTrue())
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Stalled"}))

	changed = conditions.MarkReconciling(w, conditions.ReasonProgressing, "applying")
	g.Expect(changed).To(BeTrue())
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Reconciling"}))

	changed = conditions.MarkReconciling(w, conditions.ReasonProgressing, "applying")
	g.Expect(changed).To(BeFalse())

	conditions.MarkStalled(w, "InvalidSpec", "again")
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Stalled"}))

	g.Expect(conditions.MarkReconciled(w)).To(BeTrue())
	g.Expect(w.Status.Conditions).To(BeEmpty())
	g.Expect(conditions.MarkReconciled(w)).To(BeFalse())
}

// plain has the kubebuilder status shape but no accessor methods.
type plain struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Status struct {
		ObservedGeneration int64
	}
}

func TestSetObservedGeneration(t *testing.T) {
	t.Run("an object with accessors", func(t *testing.T) {
		g := NewWithT(t)
		w := widget(4)
		changed, err := conditions.SetObservedGeneration(w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		g.Expect(w.Status.ObservedGeneration).To(BeEquivalentTo(4))
		changed, err = conditions.SetObservedGeneration(w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
	})
	t.Run("a struct with Status.ObservedGeneration", func(t *testing.T) {
		g := NewWithT(t)
		p := &plain{ObjectMeta: metav1.ObjectMeta{Generation: 9}}
		changed, err := conditions.SetObservedGeneration(p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		g.Expect(p.Status.ObservedGeneration).To(BeEquivalentTo(9))
		got, ok := conditions.GetObservedGeneration(p)
		g.Expect(ok).To(BeTrue())
		g.Expect(got).To(BeEquivalentTo(9))
	})
	t.Run("an unstructured object", func(t *testing.T) {
		g := NewWithT(t)
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"generation": int64(2)}}}
		changed, err := conditions.SetObservedGeneration(u)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		g.Expect(u.Object["status"]).To(HaveKeyWithValue("observedGeneration", int64(2)))
		changed, err = conditions.SetObservedGeneration(u)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
	})
	t.Run("the adapter FromUnstructured returns", func(t *testing.T) {
		g := NewWithT(t)
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": map[string]any{"generation": int64(3)}}}
		a, err := conditions.FromUnstructured(u)
		g.Expect(err).NotTo(HaveOccurred())
		changed, err := conditions.SetObservedGeneration(a)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		g.Expect(u.Object["status"]).To(HaveKeyWithValue("observedGeneration", int64(3)), "written into the object the adapter wraps")
		got, ok := conditions.GetObservedGeneration(a)
		g.Expect(ok).To(BeTrue())
		g.Expect(got).To(BeEquivalentTo(3))
		changed, err = conditions.SetObservedGeneration(a)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())

		res, err := compute(a)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res).To(Equal(kstatusResult{Status: conditions.KStatusCurrent, Message: "Resource is current"}))
	})
	t.Run("an object without the field", func(t *testing.T) {
		g := NewWithT(t)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		changed, err := conditions.SetObservedGeneration(cm)
		g.Expect(err).To(MatchError(ContainSubstring("*v1.ConfigMap has no status.observedGeneration")))
		g.Expect(changed).To(BeFalse())
		_, ok := conditions.GetObservedGeneration(cm)
		g.Expect(ok).To(BeFalse())
	})
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name        string
		obj         func() *testtypes.Widget
		want        conditions.KStatus
		wantMessage string
	}{
		{
			name: "current: observed generation matches, nothing in progress",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Ready", "True", "R", "", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusCurrent, wantMessage: "Resource is Ready",
		},
		{
			name: "in progress: the controller has not observed the latest generation",
			obj: func() *testtypes.Widget {
				w := widget(3, cond("Ready", "True", "R", "", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "Widget generation is 3, but latest observed generation is 2",
		},
		{
			name: "in progress: Reconciling is True",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Reconciling", "True", "R", "scaling up", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "scaling up",
		},
		{
			name: "failed: Stalled is True",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Stalled", "True", "R", "bad spec", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusFailed, wantMessage: "bad spec",
		},
		{
			name: "terminating: a deletionTimestamp wins",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Stalled", "True", "R", "bad spec", 2, at(0)))
				w.DeletionTimestamp = ptr.To(at(0))
				return w
			},
			want: conditions.KStatusTerminating, wantMessage: "Resource scheduled for deletion",
		},
		{
			name: "in progress: Ready is False and neither Reconciling nor Stalled is True",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Ready", "False", "R", "waiting for quota", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "waiting for quota",
		},
		{
			name: "in progress: Ready is Unknown and Reconciling and Stalled are False",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Ready", "Unknown", "R", "not observed", 2, at(0)),
					cond("Reconciling", "False", "R", "", 2, at(0)), cond("Stalled", "False", "R", "", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "not observed",
		},
		{
			name: "current: Ready is True, with kstatus's message for it",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Ready", "True", "R", "all good", 2, at(0)), cond("Reconciling", "False", "R", "", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusCurrent, wantMessage: "Resource is Ready",
		},
		{
			name: "failed: Stalled before Reconciling in the list wins",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Stalled", "True", "R", "bad spec", 2, at(0)), cond("Reconciling", "True", "R", "scaling up", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusFailed, wantMessage: "bad spec",
		},
		{
			name: "in progress: Reconciling before Stalled in the list wins",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Reconciling", "True", "R", "scaling up", 2, at(0)), cond("Stalled", "True", "R", "bad spec", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "scaling up",
		},
		{
			name: "in progress: a second, True Reconciling counts although the first is False",
			obj: func() *testtypes.Widget {
				w := widget(2, cond("Ready", "True", "R", "", 2, at(0)),
					cond("Reconciling", "False", "R", "", 2, at(0)), cond("Reconciling", "True", "R", "again", 2, at(0)))
				w.Status.ObservedGeneration = 2
				return w
			},
			want: conditions.KStatusInProgress, wantMessage: "again",
		},
		{
			name: "current: no conditions and no status.observedGeneration",
			obj:  func() *testtypes.Widget { return widget(1) },
			want: conditions.KStatusCurrent, wantMessage: "Resource is current",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := tt.obj()
			res, err := compute(obj)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Status).To(Equal(tt.want))
			g.Expect(res.Message).To(Equal(tt.wantMessage))
		})
	}
}
