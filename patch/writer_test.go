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
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

// drain returns the Events recorder holds now.
func drain(recorder *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-recorder.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// readyGauge returns the value of tenon_condition for w's Ready condition with status, and
// whether the series exists.
func readyGauge(g Gomega, reg *prometheus.Registry, w *testtypes.Widget, status metav1.ConditionStatus) (float64, bool) {
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "tenon_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == "Widget" && labels["name"] == w.Name && labels["type"] == "Ready" && labels["status"] == string(status) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func TestFinishReportsThenPatchesThenRecordsEventsAndMetrics(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "w"}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	recorder := events.NewFakeRecorder(10)
	metrics := observe.NewMetrics()
	reg := prometheus.NewRegistry()
	g.Expect(metrics.Register(reg)).To(Succeed())
	writer := patch.NewWriter(c, patch.WriterOptions{Recorder: recorder, Metrics: metrics})

	// A reconcile that fails: Report records Reconciling, the error is returned with the result.
	h, err := writer.NewHelper(w)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkFalse(w, conditions.Ready, "Provisioning", "waiting for the volume")
	boom := errors.New("the volume API is down")
	res, err := h.Finish(ctx, w, ctrl.Result{}, boom)
	g.Expect(err).To(MatchError(boom))
	g.Expect(res).To(Equal(ctrl.Result{}))
	got := get(g, w)
	g.Expect(got).To(matchers.HaveCondition(conditions.Reconciling, metav1.ConditionTrue, matchers.WithReason(string(requeue.ReasonRetrying))))
	g.Expect(got).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("Provisioning")))
	g.Expect(drain(recorder)).To(BeEmpty(), "a Ready that appears False is no transition")
	value, ok := readyGauge(g, reg, w, metav1.ConditionFalse)
	g.Expect(ok).To(BeTrue(), "the metrics are recorded after the write")
	g.Expect(value).To(Equal(1.0))

	// A reconcile that succeeds: Reconciling goes, observedGeneration is set, Ready's transition
	// is an Event and the gauge follows.
	h, err = writer.NewHelper(got)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(got, conditions.Ready, conditions.ReasonSucceeded, "the volume is bound")
	res, err = h.Finish(ctx, got, ctrl.Result{RequeueAfter: time.Minute}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: time.Minute}), "the reconcile's result is kept")
	latest := get(g, w)
	g.Expect(latest).To(matchers.BeReady())
	g.Expect(latest).To(matchers.BeCompliant())
	g.Expect(conditions.Get(latest, conditions.Reconciling)).To(BeNil())
	g.Expect(latest.Status.ObservedGeneration).To(Equal(latest.Generation))
	g.Expect(latest.ResourceVersion).To(Equal(got.ResourceVersion), "obj is the object the write returned")
	recorded := drain(recorder)
	g.Expect(recorded).To(HaveLen(1))
	g.Expect(recorded[0]).To(And(HavePrefix("Normal Succeeded"), ContainSubstring("Ready changed from False to True")))
	value, _ = readyGauge(g, reg, w, metav1.ConditionTrue)
	g.Expect(value).To(Equal(1.0))

	// A reconcile that changes nothing sends nothing and records nothing new.
	h, err = writer.NewHelper(latest)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(latest, conditions.Ready, conditions.ReasonSucceeded, "the volume is bound")
	_, err = h.Finish(ctx, latest, ctrl.Result{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(get(g, w).ResourceVersion).To(Equal(latest.ResourceVersion))
	g.Expect(drain(recorder)).To(BeEmpty())
}

func TestFinishRecordsNothingWhenThePatchFails(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := newWidget(t, g, "w")
	recorder := events.NewFakeRecorder(10)
	metrics := observe.NewMetrics()
	reg := prometheus.NewRegistry()
	g.Expect(metrics.Register(reg)).To(Succeed())
	writer := patch.NewWriter(c, patch.WriterOptions{Recorder: recorder, Metrics: metrics})
	h, err := writer.NewHelper(w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Delete(ctx, w.DeepCopy())).To(Succeed())

	conditions.MarkFalse(w, conditions.Ready, "Broken", "the disk failed")
	reconcileErr := errors.New("the disk failed")
	_, err = h.Finish(ctx, w, ctrl.Result{}, reconcileErr)
	g.Expect(err).To(MatchError(reconcileErr), "the reconcile's error is kept")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "and the Patch's is joined: %v", err)
	g.Expect(drain(recorder)).To(BeEmpty(), "no Event for a transition that was not written")
	_, ok := readyGauge(g, reg, w, metav1.ConditionFalse)
	g.Expect(ok).To(BeFalse(), "no metrics for a status that was not written")

	// A terminal error whose Stalled was not written is retried: the outcome must be written.
	other := newWidget(t, g, "other")
	h, err = writer.NewHelper(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Delete(ctx, other.DeepCopy())).To(Succeed())
	terminalRes, terminal := requeue.Terminal("InvalidSpec", errors.New("the size is not a size"))
	res, err := h.Finish(ctx, other, terminalRes, terminal)
	g.Expect(err).To(HaveOccurred())
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeFalse(), "a terminal error the write did not record is retried: %v", err)
	g.Expect(res).To(Equal(ctrl.Result{}))
}

func TestFinishForgetsTheMetricsOfAnObjectItsWriteLeftGone(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := newWidget(t, g, "w", func(w *testtypes.Widget) { w.Finalizers = []string{"example.com/cleanup"} })
	recorder := events.NewFakeRecorder(10)
	metrics := observe.NewMetrics()
	reg := prometheus.NewRegistry()
	g.Expect(metrics.Register(reg)).To(Succeed())
	writer := patch.NewWriter(c, patch.WriterOptions{Recorder: recorder, Metrics: metrics})
	metrics.Record("Widget", w)
	_, ok := readyGauge(g, reg, w, metav1.ConditionTrue)
	g.Expect(ok).To(BeTrue())

	g.Expect(c.Delete(ctx, w.DeepCopy())).To(Succeed())
	deleting := get(g, w)
	h, err := writer.NewHelper(deleting)
	g.Expect(err).NotTo(HaveOccurred())
	deleting.Finalizers = nil
	conditions.MarkFalse(deleting, conditions.Ready, "Deleting", "cleaned up")
	_, err = h.Finish(ctx, deleting, ctrl.Result{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(drain(recorder)).To(BeEmpty(), "no Event for the status of an object that is gone")
	_, ok = readyGauge(g, reg, w, metav1.ConditionTrue)
	g.Expect(ok).To(BeFalse(), "the series of an object that is gone are forgotten")
}

func TestFinishOwnsTheConditionsReportWritesBesideTheWritersOwn(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := newWidget(t, g, "w")
	writer := patch.NewWriter(c, patch.WriterOptions{OwnedConditions: []conditions.Type{"Synced"}})
	h, err := writer.NewHelper(w)
	g.Expect(err).NotTo(HaveOccurred())

	// Another writer changes Ready after the snapshot; this reconcile changes it too. Ready is
	// not in the Writer's list, but Report writes it (on a terminal error), so Finish owns it
	// and this reconcile's value wins instead of a ConflictError.
	theirs := get(g, w)
	conditions.MarkFalse(theirs, conditions.Ready, "TheirReason", "set by someone else")
	g.Expect(c.Status().Update(ctx, theirs)).To(Succeed())

	conditions.MarkTrue(w, "Synced", conditions.ReasonSucceeded, "")
	conditions.MarkFalse(w, conditions.Ready, "Degraded", "one replica is down")
	_, err = h.Finish(ctx, w, ctrl.Result{}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	latest := get(g, w)
	g.Expect(latest).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse, matchers.WithReason("Degraded")))
	g.Expect(latest).To(matchers.HaveCondition("Synced", metav1.ConditionTrue))

	// A condition the Writer does not own, changed by both, is a conflict: theirs is kept.
	h, err = patch.NewWriter(c, patch.WriterOptions{}).NewHelper(latest)
	g.Expect(err).NotTo(HaveOccurred())
	theirs = get(g, w)
	conditions.MarkFalse(theirs, "Synced", "TheirReason", "set by someone else")
	g.Expect(c.Status().Update(ctx, theirs)).To(Succeed())
	conditions.MarkUnknown(latest, "Synced", "Checking", "")
	_, err = h.Finish(ctx, latest, ctrl.Result{}, nil)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(get(g, w)).To(matchers.HaveCondition("Synced", metav1.ConditionFalse, matchers.WithReason("TheirReason")))
}

func TestFinishCoalescesProgressAndWritesWhatMattersAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := newWidget(t, g, "w", func(w *testtypes.Widget) { w.Status.Conditions = nil })
	writer := patch.NewWriter(c, patch.WriterOptions{
		ProgressInterval: time.Hour,
		WriteAtOnce: func(before, after client.Object) bool {
			return before.(*testtypes.Widget).Status.Phase != after.(*testtypes.Widget).Status.Phase
		},
	})
	reconcile := func(mutate func(*testtypes.Widget), in ctrl.Result) (ctrl.Result, *testtypes.Widget) {
		t.Helper()
		obj := get(g, w)
		h, err := writer.NewHelper(obj)
		g.Expect(err).NotTo(HaveOccurred())
		mutate(obj)
		res, err := h.Finish(ctx, obj, in, nil)
		g.Expect(err).NotTo(HaveOccurred())
		return res, obj
	}
	rollingOut := func(n int32) func(*testtypes.Widget) {
		return func(obj *testtypes.Widget) {
			obj.Status.ReadyReplicas = n
			conditions.MarkFalse(obj, conditions.Ready, "RollingOut", "replicas are starting")
			conditions.MarkFalse(obj, "WorkloadReady", "RollingOut", strings.Repeat("+", int(n)))
		}
	}

	// Ready stops being True: written at once.
	res, first := reconcile(rollingOut(1), ctrl.Result{})
	g.Expect(res).To(Equal(ctrl.Result{}))
	g.Expect(get(g, w).ResourceVersion).To(Equal(first.ResourceVersion))
	g.Expect(get(g, w).Status.ReadyReplicas).To(Equal(int32(1)))

	// Progress only (a replica count, a dependent condition's message): not written; the result
	// asks for a requeue when it may be, and keeps a sooner one.
	res, _ = reconcile(rollingOut(2), ctrl.Result{})
	g.Expect(res.RequeueAfter).To(And(BeNumerically(">", 59*time.Minute), BeNumerically("<=", time.Hour)))
	g.Expect(get(g, w).ResourceVersion).To(Equal(first.ResourceVersion), "progress waits")
	res, _ = reconcile(rollingOut(3), ctrl.Result{RequeueAfter: time.Second})
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	g.Expect(get(g, w).ResourceVersion).To(Equal(first.ResourceVersion))

	// What WriteAtOnce names is written at once, with the progress made so far.
	_, second := reconcile(func(obj *testtypes.Widget) { rollingOut(4)(obj); obj.Status.Phase = "Scaling" }, ctrl.Result{})
	latest := get(g, w)
	g.Expect(latest.ResourceVersion).To(Equal(second.ResourceVersion))
	g.Expect(latest.Status.ReadyReplicas).To(Equal(int32(4)))

	// Ready's status changing is written at once, though the last write was a moment ago.
	res, third := reconcile(func(obj *testtypes.Widget) {
		obj.Status.ReadyReplicas = 5
		conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "5 of 5 replicas ready")
		conditions.MarkTrue(obj, "WorkloadReady", conditions.ReasonSucceeded, "")
	}, ctrl.Result{})
	g.Expect(res).To(Equal(ctrl.Result{}))
	latest = get(g, w)
	g.Expect(latest.ResourceVersion).To(Equal(third.ResourceVersion))
	g.Expect(latest).To(matchers.BeReady())

	// So is a change outside the status.
	_, fourth := reconcile(func(obj *testtypes.Widget) {
		obj.Status.ReadyReplicas = 4
		obj.Labels = map[string]string{"tier": "gold"}
	}, ctrl.Result{})
	g.Expect(get(g, w).ResourceVersion).To(Equal(fourth.ResourceVersion))
}

func TestFinishWritesCoalescedProgressOnceTheIntervalPassed(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := newWidget(t, g, "w")
	writer := patch.NewWriter(c, patch.WriterOptions{ProgressInterval: 200 * time.Millisecond})
	reconcile := func(replicas int32) (ctrl.Result, string) {
		obj := get(g, w)
		h, err := writer.NewHelper(obj)
		g.Expect(err).NotTo(HaveOccurred())
		obj.Status.ReadyReplicas = replicas
		res, err := h.Finish(ctx, obj, ctrl.Result{}, nil)
		g.Expect(err).NotTo(HaveOccurred())
		return res, obj.ResourceVersion
	}
	_, written := reconcile(1)
	g.Expect(get(g, w).Status.ReadyReplicas).To(Equal(int32(1)))

	// Each reconcile of the requeue either waits (a RequeueAfter within the interval) or writes;
	// the write comes once the interval since the first write has passed.
	g.Eventually(func(g Gomega) {
		res, _ := reconcile(2)
		g.Expect(res).To(Equal(ctrl.Result{}), "no wait left")
	}).Should(Succeed())
	latest := get(g, w)
	g.Expect(latest.Status.ReadyReplicas).To(Equal(int32(2)))
	g.Expect(latest.ResourceVersion).NotTo(Equal(written))
}

func TestAWriterIsSafeForConcurrentWorkers(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	writer := patch.NewWriter(c, patch.WriterOptions{ProgressInterval: time.Minute, History: &patch.History{}})
	var wg sync.WaitGroup
	for i := range 8 {
		obj := newWidget(t, g, "w"+string(rune('a'+i)), func(w *testtypes.Widget) { w.Status.Conditions = nil })
		wg.Go(func() {
			for n := range int32(3) {
				h, err := writer.NewHelper(obj)
				if err != nil {
					t.Error(err)
					return
				}
				obj.Status.ReadyReplicas = n + 1
				conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "")
				if _, err := h.Finish(ctx, obj, ctrl.Result{}, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	list := &testtypes.WidgetList{}
	g.Expect(c.List(ctx, list, client.InNamespace(env.Namespace(t)))).To(Succeed())
	for i := range list.Items {
		// The first write of each is at once; the other two are progress within the interval.
		g.Expect(list.Items[i].Status.ReadyReplicas).To(Equal(int32(1)), list.Items[i].Name)
		g.Expect(&list.Items[i]).To(matchers.BeReady())
	}
}
