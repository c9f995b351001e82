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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name           string
		start          func(w *testtypes.Widget)
		err            error
		wantTypes      map[conditions.Type]metav1.ConditionStatus
		wantReason     map[conditions.Type]conditions.Reason
		wantMessage    map[conditions.Type]string
		wantObservedAt int64
	}{
		{
			name: "a terminal error stalls the object with its reason and makes it not ready",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				conditions.MarkReconciling(w, conditions.ReasonProgressing, "")
			},
			err:            errors.Join(errTerminal("replicas must be odd")),
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Stalled: "True"},
			wantReason:     map[conditions.Type]conditions.Reason{conditions.Stalled: "InvalidSpec", conditions.Ready: "InvalidSpec"},
			wantMessage:    map[conditions.Type]string{conditions.Stalled: "replicas must be odd"},
			wantObservedAt: 2,
		},
		{
			name: "a request the API server rejects stalls the object with the API's reason",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:            apierrors.NewBadRequest("spec.replicas: must be odd"),
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Stalled: "True"},
			wantReason:     map[conditions.Type]conditions.Reason{conditions.Stalled: "BadRequest"},
			wantObservedAt: 2,
		},
		{
			name: "a transient error marks Reconciling and leaves Ready alone",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:         errors.New("dial tcp: connection refused"),
			wantTypes:   map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True", conditions.Reconciling: "True"},
			wantReason:  map[conditions.Type]conditions.Reason{conditions.Reconciling: requeue.ReasonRetrying},
			wantMessage: map[conditions.Type]string{conditions.Reconciling: "dial tcp: connection refused"},
		},
		{
			name: "a retry marks Reconciling with what it waits for",
			start: func(w *testtypes.Widget) {
				conditions.MarkFalse(w, conditions.Ready, conditions.ReasonProgressing, "")
			},
			err:         func() error { _, err := requeue.Retry("waiting for the database"); return err }(),
			wantTypes:   map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Reconciling: "True"},
			wantReason:  map[conditions.Type]conditions.Reason{conditions.Reconciling: conditions.ReasonProgressing},
			wantMessage: map[conditions.Type]string{conditions.Reconciling: "waiting for the database"},
		},
		{
			name: "a conflict changes nothing",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:       apierrors.NewConflict(widgets, "w", errors.New("modified")),
			wantTypes: map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
		},
		{
			name: "a field conflict stalls the object with the fields in the message and makes it not ready",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				conditions.MarkReconciling(w, requeue.ReasonRetrying, "earlier")
			},
			err:            fmt.Errorf("failed to apply ConfigMap ns/c: %w", fieldConflict()),
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Stalled: "True"},
			wantReason:     map[conditions.Type]conditions.Reason{conditions.Stalled: requeue.ReasonFieldManagerConflict, conditions.Ready: requeue.ReasonFieldManagerConflict},
			wantMessage:    map[conditions.Type]string{conditions.Stalled: `failed to apply ConfigMap ns/c: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.replicas`},
			wantObservedAt: 2,
		},
		{
			name: "a write refused by a leader election fence changes nothing",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
			},
			err:       &fencing.RefusedError{Lease: "ns/lease"},
			wantTypes: map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
		},
		{
			name: "success clears Stalled and Reconciling once Ready is True",
			start: func(w *testtypes.Widget) {
				conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
				conditions.MarkReconciling(w, requeue.ReasonRetrying, "dial tcp: connection refused")
				conditions.MarkStalled(w, "InvalidSpec", "bad")
			},
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "True"},
			wantObservedAt: 2,
		},
		{
			name: "success while Ready is not True is Reconciling, with Ready's reason",
			start: func(w *testtypes.Widget) {
				conditions.MarkFalse(w, conditions.Ready, "RollingOut", "2 of 3 replicas updated")
			},
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{conditions.Ready: "False", conditions.Reconciling: "True"},
			wantReason:     map[conditions.Type]conditions.Reason{conditions.Reconciling: "RollingOut"},
			wantMessage:    map[conditions.Type]string{conditions.Reconciling: "2 of 3 replicas updated"},
			wantObservedAt: 2,
		},
		{
			name:           "success without a Ready condition is done",
			start:          func(w *testtypes.Widget) { conditions.MarkReconciling(w, requeue.ReasonRetrying, "x") },
			wantTypes:      map[conditions.Type]metav1.ConditionStatus{},
			wantObservedAt: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 2}}
			tt.start(w)

			err := requeue.Report(w, tt.err)

			if tt.err == nil {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(Equal(tt.err), "Report returns the outcome it recorded")
			}
			got := map[conditions.Type]metav1.ConditionStatus{}
			for _, c := range w.Status.Conditions {
				got[conditions.Type(c.Type)] = c.Status
			}
			g.Expect(got).To(Equal(tt.wantTypes))
			for ct, reason := range tt.wantReason {
				g.Expect(w).To(matchers.HaveCondition(ct, tt.wantTypes[ct], matchers.WithReason(reason)))
			}
			for ct, msg := range tt.wantMessage {
				g.Expect(conditions.Get(w, ct).Message).To(Equal(msg))
			}
			g.Expect(w.Status.ObservedGeneration).To(Equal(tt.wantObservedAt))
		})
	}
}

func TestReportSaysWhatItCouldNotRecord(t *testing.T) {
	g := NewWithT(t)
	// A Gadget's status has no observedGeneration field.
	obj := &gadgetWithoutObservedGeneration{}
	obj.Generation = 3
	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "")

	err := requeue.Report(obj, nil)

	g.Expect(err).To(MatchError(ContainSubstring("failed to report the outcome of the reconcile in the status")))
	g.Expect(err).To(MatchError(ContainSubstring("status.observedGeneration")))
}

func TestReportStoresAnInvalidReasonAndKeepsTheReconcileError(t *testing.T) {
	g := NewWithT(t)
	w := &testtypes.Widget{}
	w.Generation = 2
	// Ready's reason is invalid: Report copies it to Reconciling as it is, and the write (the
	// patch helper) is where it surfaces.
	conditions.MarkFalse(w, conditions.Ready, "rolling out", "1 of 3 replicas ready")

	g.Expect(requeue.Report(w, nil)).To(Succeed())
	g.Expect(w).To(matchers.HaveCondition(conditions.Reconciling, metav1.ConditionTrue, matchers.WithReason("rolling out")))
	g.Expect(w.Status.ObservedGeneration).To(BeEquivalentTo(2))

	cause := errors.New("dial tcp: connection refused")
	err := requeue.Report(w, cause)
	g.Expect(err).To(BeIdenticalTo(cause), "the reconcile's error is returned as it is")
	g.Expect(w).To(matchers.HaveCondition(conditions.Reconciling, metav1.ConditionTrue, matchers.WithReason(requeue.ReasonRetrying)))
}

// gadgetWithoutObservedGeneration has conditions but no status.observedGeneration.
type gadgetWithoutObservedGeneration struct {
	metav1.ObjectMeta
	Status struct {
		Conditions []metav1.Condition
	}
}

func (g *gadgetWithoutObservedGeneration) GetConditions() []metav1.Condition {
	return g.Status.Conditions
}
func (g *gadgetWithoutObservedGeneration) SetConditions(c []metav1.Condition) {
	g.Status.Conditions = c
}

func errTerminal(msg string) error {
	_, err := requeue.Terminal("InvalidSpec", errors.New(msg))
	return err
}

func TestReportOnAnUnstructuredObjectSetsObservedGeneration(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus conditions.KStatus
	}{
		{name: "a terminal error: kstatus reports Failed", err: errTerminal("spec.size must be small"), wantStatus: conditions.KStatusFailed},
		{name: "success: kstatus reports Current", wantStatus: conditions.KStatusCurrent},
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
				conditions.MarkTrue(a, conditions.Ready, conditions.ReasonSucceeded, "")
			}

			if err := requeue.Report(a, tt.err); tt.err == nil {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(tt.err))
			}

			observed, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue())
			g.Expect(observed).To(BeEquivalentTo(2))
			status, message, err := conditions.ComputeKStatus(u)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(status).To(Equal(tt.wantStatus), message)
		})
	}
}
