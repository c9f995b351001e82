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

package requeue_test

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/requeue"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name           string
		start          func(w *testtypes.Widget)
		res            ctrl.Result
		err            error
		wantChanged    bool
		wantTypes      map[conditions.Type]metav1.ConditionStatus
		wantMessage    map[conditions.Type]string
		wantObservedAt int64
	}{
		{
			name: "a terminal error stalls the object and makes it not ready",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				_, _ = conditions.MarkReconciling(w, conditions.ReasonProgressing, "")
			},
			err:            errors.Join(errTerminal("replicas must be odd")),
			wantChanged:    true,
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Stalled: "True"},
			wantMessage:    map[conditions.Type]string{conditions.Stalled: "replicas must be odd"},
			wantObservedAt: 2,
		},
		{
			name: "a transient error marks Reconciling and leaves Ready alone",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:         errors.New("dial tcp: connection refused"),
			wantChanged: true,
			wantTypes:   map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True", conditions.Reconciling: "True"},
			wantMessage: map[conditions.Type]string{conditions.Reconciling: "dial tcp: connection refused"},
		},
		{
			name: "a conflict changes nothing",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:       apierrors.NewConflict(widgets, "w", errors.New("modified")),
			wantTypes: map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
		},
		{
			name: "success clears Stalled",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				_, _ = conditions.MarkStalled(w, "InvalidSpec", "bad")
			},
			wantChanged:    true,
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
			wantObservedAt: 2,
		},
		{
			name: "success clears the Reconciling an earlier error left",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				_, _ = conditions.MarkReconciling(w, requeue.ReasonRetrying, "dial tcp: connection refused")
			},
			wantChanged:    true,
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
			wantObservedAt: 2,
		},
		{
			name: "success keeps a Reconciling the reconciler set, even when done",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkFalse(w, conditions.Ready, conditions.ReasonProgressing, "")
				_, _ = conditions.MarkReconciling(w, conditions.ReasonProgressing, "waiting for the rollout")
			},
			wantChanged:    true, // observedGeneration
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Reconciling: "True"},
			wantObservedAt: 2,
		},
		{
			name: "success that requeues keeps Reconciling as the reconciler set it",
			start: func(w *testtypes.Widget) {
				_, _ = conditions.MarkFalse(w, conditions.Ready, conditions.ReasonProgressing, "")
				_, _ = conditions.MarkReconciling(w, conditions.ReasonProgressing, "waiting for DNS")
			},
			res:            ctrl.Result{RequeueAfter: time.Second},
			wantChanged:    true, // observedGeneration
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Reconciling: "True"},
			wantObservedAt: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 2}}
			tt.start(w)

			changed := requeue.Report(w, tt.res, tt.err)

			g.Expect(changed).To(Equal(tt.wantChanged))
			got := map[conditions.Type]metav1.ConditionStatus{}
			for _, c := range w.Status.Conditions {
				got[conditions.Type(c.Type)] = c.Status
			}
			g.Expect(got).To(Equal(tt.wantTypes))
			for ct, msg := range tt.wantMessage {
				g.Expect(conditions.Get(w, ct).Message).To(Equal(msg))
			}
			g.Expect(w.Status.ObservedGeneration).To(Equal(tt.wantObservedAt))
		})
	}
}

func errTerminal(msg string) error {
	_, err := requeue.Terminal(errors.New(msg))
	return err
}

func TestReportOnAnUnstructuredObjectSetsObservedGeneration(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus conditions.Status
	}{
		{name: "a terminal error: kstatus reports Failed", err: errTerminal("spec.size must be small"), wantStatus: conditions.StatusFailed},
		{name: "success: kstatus reports Current", wantStatus: conditions.StatusCurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// A controller that reconciles unstructured objects, at generation 2 with the status it
			// wrote for generation 1.
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "test.tenon.dev/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "ns", "generation": int64(2)},
				"status":   map[string]any{"observedGeneration": int64(1)},
			}}
			a, err := conditions.FromUnstructured(u)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.err == nil {
				_, err = conditions.MarkTrue(a, conditions.Ready, conditions.ReasonSucceeded, "")
				g.Expect(err).NotTo(HaveOccurred())
			}

			g.Expect(requeue.Report(a, ctrl.Result{}, tt.err)).To(BeTrue())

			observed, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue())
			g.Expect(observed).To(BeEquivalentTo(2))
			res, err := conditions.Compute(u)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Status).To(Equal(tt.wantStatus), res.Message)
		})
	}
}
