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

package finalizer_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// journal records the order in which steps ran.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, s)
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.entries...)
}

// scriptedStep returns a step that reports the given outcomes in turn, then Done forever.
func scriptedStep(name string, j *journal, outcomes ...func() (finalizer.Progress, error)) finalizer.Step[*testtypes.Widget] {
	var calls atomic.Int32
	return finalizer.Step[*testtypes.Widget]{Name: name, Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
		n := int(calls.Add(1)) - 1
		j.add(name)
		if n < len(outcomes) {
			return outcomes[n]()
		}
		return finalizer.Finished(), nil
	}}
}

func inProgress(msg string) func() (finalizer.Progress, error) {
	return func() (finalizer.Progress, error) { return finalizer.Waiting(time.Second, msg), nil }
}

func failing(msg string) func() (finalizer.Progress, error) {
	return func() (finalizer.Progress, error) { return finalizer.Progress{}, errors.New(msg) }
}

// deleted creates a Widget, runs the lifecycle once to add the finalizer, deletes the Widget and
// returns its deleted state.
func deleted(t *testing.T, g Gomega, l *finalizer.Lifecycle[*testtypes.Widget]) *testtypes.Widget {
	t.Helper()
	ctx := t.Context()
	w := newWidget(t)
	proceed, res, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeTrue())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(w.Finalizers).To(ContainElement(l.Finalizer))
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	return w
}

func gone(ctx context.Context, w *testtypes.Widget) bool {
	return apierrors.IsNotFound(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &testtypes.Widget{}))
}

func TestLifecycleRunsStepsInOrderAndRemovesTheFinalizerWhenAllAreDone(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	j := &journal{}
	recorder := events.NewFakeRecorder(20)
	clock := clocktesting.NewFakePassiveClock(time.Now())
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder, Clock: clock,
		Steps: []finalizer.Step[*testtypes.Widget]{
			scriptedStep("dns-record", j, inProgress("record deletion propagating")),
			scriptedStep("directory-entry", j),
		},
	}
	w := deleted(t, g, l)

	// First run: the first step is in progress; the second does not run yet.
	proceed, res, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred(), "in progress is not an error")
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	g.Expect(j.get()).To(Equal([]string{"dns-record"}))
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(&latest).To(matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue,
		matchers.WithReason(finalizer.ReasonCleanupInProgress), matchers.WithMessage(ours+": step dns-record: record deletion propagating")))
	g.Expect(conditions.Get(&latest, conditions.Deleting).Message).To(Equal(ours+": step dns-record: record deletion propagating"), "the whole message")
	g.Expect(latest.Finalizers).To(ContainElement(ours))

	// A run before the second the step asked for runs nothing.
	proceed, res, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	g.Expect(j.get()).To(Equal([]string{"dns-record"}))

	// Second run, a second later: both steps are done; the finalizer goes and so does the object.
	clock.SetTime(clock.Now().Add(time.Second))
	proceed, res, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(j.get()).To(Equal([]string{"dns-record", "dns-record", "directory-entry"}))
	g.Expect(gone(ctx, w)).To(BeTrue())
	g.Expect(recorder.Events).To(Receive(ContainSubstring("Normal Finalized cleanup complete (dns-record, directory-entry)")))
}

func TestLifecycleCanRunStepsInReverse(t *testing.T) {
	g := NewWithT(t)
	j := &journal{}
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Reverse: true,
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("first", j), scriptedStep("second", j), scriptedStep("third", j)},
	}
	w := deleted(t, g, l)

	_, _, err := l.Reconcile(t.Context(), w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(j.get()).To(Equal([]string{"third", "second", "first"}))
	g.Expect(gone(t.Context(), w)).To(BeTrue())
}

func TestLifecycleReportsAFailingStepAndRetriesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	j := &journal{}
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder,
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("dns-record", j, failing("dns api: 503 Service Unavailable"))},
	}
	w := deleted(t, g, l)

	_, _, err := l.Reconcile(ctx, w)

	g.Expect(err).To(MatchError(ContainSubstring("503")), "an error is returned for the controller to retry with backoff")
	g.Expect(recorder.Events).To(Receive(Equal("Warning CleanupFailed step dns-record failed: dns api: 503 Service Unavailable")))
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(&latest).To(matchers.HaveCondition(conditions.Deleting, metav1.ConditionTrue, matchers.WithReason(finalizer.ReasonCleanupFailed)))
	g.Expect(conditions.Get(&latest, conditions.Stalled)).To(BeNil(), "no deadline, so never stalled")

	// Retried after its backoff, not at the next event.
	_, res, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically("~", time.Second, time.Second))
	g.Expect(j.get()).To(HaveLen(1), "the step waits for its retry")
	g.Eventually(func(g Gomega) {
		_, res, err := l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.IsZero()).To(BeTrue())
	}).WithTimeout(10 * time.Second).Should(Succeed())
	g.Expect(j.get()).To(HaveLen(2))
	g.Expect(gone(ctx, w)).To(BeTrue())
}

func TestLifecycleMarksTheObjectStalledAfterItsDeadline(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder,
		// Any cleanup is already too late: the deadline passes at the first failure.
		Timeout:              time.Nanosecond,
		StalledRetryInterval: 7 * time.Minute,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, errors.New("dns api: 401 Unauthorized")
		}}},
	}
	w := deleted(t, g, l)

	_, res, err := l.Reconcile(ctx, w)

	g.Expect(err).NotTo(HaveOccurred(), "past the deadline the controller stops failing loudly")
	g.Expect(res.RequeueAfter).To(Equal(7*time.Minute), "and retries slowly")
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(&latest).To(matchers.HaveCondition(conditions.Stalled, metav1.ConditionTrue,
		matchers.WithReason(finalizer.ReasonCleanupTimedOut), matchers.WithMessage("step dns-record failed: dns api: 401 Unauthorized")))
	g.Expect(&latest).To(matchers.HaveKStatus(conditions.KStatusTerminating))
	g.Expect(latest.Finalizers).To(ContainElement(ours), "the finalizer stays: nothing is leaked silently")
	g.Expect(recorder.Events).To(Receive(ContainSubstring("Warning CleanupFailed")))
	g.Expect(recorder.Events).To(Receive(ContainSubstring("Warning CleanupTimedOut cleanup did not finish within 1ns of deletion; retrying every 7m0s")))
}

func TestTheReleaseAnnotationIsAnAuditedEscapeHatch(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	j := &journal{}
	stuck := func() (finalizer.Progress, error) { return finalizer.Progress{}, errors.New("dns api: no such zone") }
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder,
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("dns-record", j, stuck, stuck, stuck, stuck)},
	}
	w := deleted(t, g, l)
	_, _, err := l.Reconcile(ctx, w)
	g.Expect(err).To(HaveOccurred())

	// A person releases the finalizer, but this controller did not opt in: nothing happens.
	w.Annotations = map[string]string{finalizer.ReleaseAnnotation: ours}
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone(ctx, w)).To(BeFalse())

	// An annotation naming another finalizer releases nothing either.
	l.AllowRelease = true
	w.Annotations[finalizer.ReleaseAnnotation] = theirs
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone(ctx, w)).To(BeFalse())

	w.Annotations[finalizer.ReleaseAnnotation] = ours
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	calls := len(j.get())
	_, res, err := l.Reconcile(ctx, w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(gone(ctx, w)).To(BeTrue())
	g.Expect(j.get()).To(HaveLen(calls), "released without running the step again")
	var released string
	for len(recorder.Events) > 0 {
		e := <-recorder.Events
		if strings.HasPrefix(e, "Warning FinalizerReleased") {
			released = e
		}
	}
	g.Expect(released).To(ContainSubstring("(set by kubectl-annotate)"))
	g.Expect(released).To(ContainSubstring("steps dns-record may have left resources behind"))
	g.Expect(released).To(ContainSubstring("last progress: step dns-record failed: dns api: no such zone"))
}

func TestRetainSkipsTheExternalStepsOnly(t *testing.T) {
	g := NewWithT(t)
	j := &journal{}
	recorder := events.NewFakeRecorder(5)
	dns := scriptedStep("dns-record", j)
	dns.External = true
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder,
		// The tracked children are Kubernetes objects the garbage collector cannot reach: a
		// policy that keeps the DNS record must not leak them.
		Steps:  []finalizer.Step[*testtypes.Widget]{dns, scriptedStep("tracked-children", j)},
		Retain: func(w *testtypes.Widget) bool { return w.Spec.Size == "retain" },
	}
	w := deleted(t, g, l)
	w.Spec.Size = "retain"
	g.Expect(env.Client().Update(t.Context(), w)).To(Succeed())

	_, _, err := l.Reconcile(t.Context(), w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(j.get()).To(Equal([]string{"tracked-children"}))
	g.Expect(gone(t.Context(), w)).To(BeTrue())
	g.Expect(recorder.Events).To(Receive(ContainSubstring("Normal ResourcesRetained external resources retained by policy; cleanup steps skipped: dns-record")))
}

func TestRetainDoesNotWaitForTheRetryOfAnExternalStepItSkips(t *testing.T) {
	g := NewWithT(t)
	j := &journal{}
	dns := scriptedStep("dns-record", j, func() (finalizer.Progress, error) { return finalizer.Progress{}, errors.New("dns api: no such zone") })
	dns.External = true
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), StalledRetryInterval: time.Hour,
		Steps:  []finalizer.Step[*testtypes.Widget]{dns, scriptedStep("tracked-children", j)},
		Retain: func(w *testtypes.Widget) bool { return w.Spec.Size == "retain" },
	}
	w := deleted(t, g, l)
	_, _, err := l.Reconcile(t.Context(), w)
	g.Expect(err).To(MatchError(ContainSubstring("no such zone")))

	// A person gives up on the DNS record: the failing step's retry is not waited for.
	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(w), w)).To(Succeed())
	w.Spec.Size = "retain"
	g.Expect(env.Client().Update(t.Context(), w)).To(Succeed())
	_, res, err := l.Reconcile(t.Context(), w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeZero())
	g.Expect(j.get()).To(Equal([]string{"dns-record", "tracked-children"}))
	g.Expect(gone(t.Context(), w)).To(BeTrue())
}

func TestReconcileOfAnObjectWithItsFinalizerSendsNoWrite(t *testing.T) {
	g := NewWithT(t)
	c := countWrites(directClient(t))
	l := &finalizer.Lifecycle[*testtypes.Widget]{Finalizer: ours, Client: c}
	w := newWidget(t, ours)

	proceed, res, err := l.Reconcile(t.Context(), w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeTrue())
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(c.writes.Load()).To(BeZero())
}

func TestAnInvalidFinalizerNameIsAClearError(t *testing.T) {
	g := NewWithT(t)
	l := &finalizer.Lifecycle[*testtypes.Widget]{Finalizer: "cleanup", Client: env.Client()}

	_, _, err := l.Reconcile(t.Context(), &testtypes.Widget{})

	g.Expect(err).To(MatchError(finalizer.ErrInvalidName))
}

// widgetReconciler runs a Lifecycle for Widgets in one namespace.
type widgetReconciler struct {
	client.Client
	namespace string
	lifecycle *finalizer.Lifecycle[*testtypes.Widget]
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return ctrl.Result{}, nil
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	_, res, err := r.lifecycle.Reconcile(ctx, &w)
	return res, err
}

// startController runs a Widget controller for namespace ns whose lifecycle has the given steps.
func startController(t *testing.T, name, ns string, steps ...finalizer.Step[*testtypes.Widget]) {
	t.Helper()
	mgr := env.NewManager(t, ctrl.Options{})
	r := &widgetReconciler{Client: mgr.GetClient(), namespace: ns, lifecycle: &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: mgr.GetClient(), Steps: steps,
	}}
	if err := ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named(name).Complete(r); err != nil {
		t.Fatal(err)
	}
	testenv.StartManager(t, mgr)
}

func TestInProgressStepsAreRequeuedWithoutReconcileErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	j := &journal{}
	const name = "in-progress"
	startController(t, name, ns, scriptedStep("slow", j, inProgress("1"), inProgress("2"), inProgress("3")))

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Finalizers).To(ContainElement(ours))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())

	g.Eventually(func() bool { return gone(ctx, w) }).WithTimeout(30 * time.Second).Should(BeTrue())
	g.Expect(len(j.get())).To(BeNumerically(">=", 4))
	g.Expect(reconcileErrors(t, name)).To(BeZero(), "in progress must not count as a reconcile error")
}

func TestANamespaceWithCleanObjectsFinishesTerminating(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "terminating-"}}
	g.Expect(env.Client().Create(ctx, ns)).To(Succeed())
	j := &journal{}
	startController(t, "namespace-clean", ns.Name, scriptedStep("dns-record", j, inProgress("propagating")))
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns.Name}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Finalizers).To(ContainElement(ours))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	g.Expect(env.Client().Delete(ctx, ns)).To(Succeed())

	g.Eventually(func() error {
		return env.Client().Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
	}).WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	g.Expect(j.get()).To(ContainElement("dns-record"), "the namespace waited for the cleanup")
}

func TestAPermanentlyFailingStepHoldsTheObjectAndSaysWhy(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "stuck-"}}
	g.Expect(env.Client().Create(ctx, ns)).To(Succeed())
	startController(t, "namespace-stuck", ns.Name, finalizer.Step[*testtypes.Widget]{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
		return finalizer.Progress{}, errors.New("dns api: connection refused")
	}})
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns.Name}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Finalizers).To(ContainElement(ours))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	g.Expect(env.Client().Delete(ctx, ns)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		c := conditions.Get(w, conditions.Deleting)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal(ours + ": step dns-record failed: dns api: connection refused"))
	}).WithTimeout(60 * time.Second).Should(Succeed())
	g.Expect(w.DeletionTimestamp).NotTo(BeNil())
	g.Expect(w.Finalizers).To(ContainElement(ours), "the object is not released while its cleanup fails")
	var namespace corev1.Namespace
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(ns), &namespace)).To(Succeed())
	g.Expect(namespace.Status.Phase).To(Equal(corev1.NamespaceTerminating))
}

// reconcileErrors returns controller_runtime_reconcile_errors_total for a controller; a controller
// without the counter (controller-runtime sets it to 0 when the controller starts) fails the test.
func reconcileErrors(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := metrics.Registry.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no controller_runtime_reconcile_errors_total for controller %s", controller)
	return 0
}

func TestAStepStillInProgressAfterTheDeadlineKeepsItsPace(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	j := &journal{}
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Timeout: time.Nanosecond, StalledRetryInterval: time.Hour,
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("slow", j, inProgress("still withdrawing"))},
	}
	w := deleted(t, g, l)

	_, res, err := l.Reconcile(ctx, w)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Second), "the step's own delay, not the stalled retry interval")
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(&latest).To(matchers.HaveCondition(conditions.Stalled, metav1.ConditionTrue, matchers.WithReason(finalizer.ReasonCleanupTimedOut)))
}

func TestAReleaseAfterARestartNamesTheStepsFromTheOneTheLineNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome func() (finalizer.Progress, error)
		line    string
	}{
		{"in progress", inProgress("record deletion propagating"), "step dns-record: record deletion propagating"},
		{"failed", failing("dns api: 503"), "step dns-record failed: dns api: 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			steps := func(j *journal, dns ...func() (finalizer.Progress, error)) []finalizer.Step[*testtypes.Widget] {
				return []finalizer.Step[*testtypes.Widget]{
					scriptedStep("directory-entry", j), scriptedStep("dns-record", j, dns...), scriptedStep("bucket", j),
				}
			}
			before := &journal{}
			l := &finalizer.Lifecycle[*testtypes.Widget]{Finalizer: ours, Client: env.Client(), Steps: steps(before, tc.outcome)}
			w := deleted(t, g, l)
			_, _, _ = l.Reconcile(ctx, w)
			g.Expect(before.get()).To(Equal([]string{"directory-entry", "dns-record"}))

			// A new process knows only what the object says: its line names the step not done.
			var latest testtypes.Widget
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
			g.Expect(conditions.Get(&latest, conditions.Deleting).Message).To(Equal(ours + ": " + tc.line))
			metav1.SetMetaDataAnnotation(&latest.ObjectMeta, finalizer.ReleaseAnnotation, finalizer.ReleaseValue(&latest, ours))
			g.Expect(env.Client().Update(ctx, &latest, client.FieldOwner("kubectl-annotate"))).To(Succeed())
			recorder := events.NewFakeRecorder(10)
			after := &journal{}
			restarted := &finalizer.Lifecycle[*testtypes.Widget]{
				Finalizer: ours, Client: env.Client(), Recorder: recorder, AllowRelease: true, Steps: steps(after),
			}

			_, _, err := restarted.Reconcile(ctx, &latest)

			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(gone(ctx, w)).To(BeTrue())
			g.Expect(after.get()).To(BeEmpty(), "a release runs no step")
			g.Expect(drain(recorder)).To(ContainElement(ContainSubstring(
				"steps dns-record, bucket may have left resources behind (last progress: " + tc.line + ")")))
		})
	}
}

func TestAStepsLongMessageIsCutOnARuneBoundaryToTheLineLimit(t *testing.T) {
	const limit = 1024 // maxProgressLine
	prefix := "step slow: "
	for _, tc := range []struct {
		name    string
		message string
		want    string
	}{
		{"at the limit, whole", strings.Repeat("a", limit-len(prefix)), prefix + strings.Repeat("a", limit-len(prefix))},
		{"one byte over, cut to the limit", strings.Repeat("a", limit-len(prefix)+1), prefix + strings.Repeat("a", limit-len(prefix)-3) + "…"},
		// 1,021 bytes would end inside an "é": the cut moves back to the rune before it.
		{"inside a rune, cut before it", "a" + strings.Repeat("é", 600), prefix + "a" + strings.Repeat("é", (limit-3-len(prefix)-1)/2) + "…"},
		// Each invalid byte becomes a U+FFFD of 3 bytes, as the condition's message has it: the
		// limit holds for what is written.
		{"invalid UTF-8, made valid, then cut", strings.Repeat("\x80a", 600), prefix + strings.Repeat("\uFFFDa", (limit-3-len(prefix))/4) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			l := &finalizer.Lifecycle[*testtypes.Widget]{
				Finalizer: ours, Client: env.Client(),
				Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("slow", &journal{}, inProgress(tc.message))},
			}
			w := deleted(t, g, l)

			_, _, err := l.Reconcile(t.Context(), w)

			g.Expect(err).NotTo(HaveOccurred())
			var latest testtypes.Widget
			g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &latest)).To(Succeed())
			g.Expect(conditions.Get(&latest, conditions.Deleting).Message).To(Equal(ours + ": " + tc.want))
			g.Expect(len(tc.want)).To(BeNumerically("<=", limit))
		})
	}
}

func TestAFailingStepBacksOffExponentiallyAndAnotherStepStartsAgainAtOneSecond(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	j := &journal{}
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Clock: clock,
		Steps: []finalizer.Step[*testtypes.Widget]{
			scriptedStep("dns-record", j, failing("503"), failing("503"), failing("503")),
			scriptedStep("bucket", j, failing("403")),
		},
	}
	w := deleted(t, g, l)
	// waits runs the Lifecycle once more before the step's retry and returns how long it waits.
	waits := func() time.Duration {
		_, res, err := l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred(), "a step waiting for its retry is not an error")
		return res.RequeueAfter
	}
	// fails runs the step that is due, a little after its time, and expects it to fail.
	fails := func(after time.Duration) {
		clock.SetTime(clock.Now().Add(after + after/2))
		_, _, err := l.Reconcile(ctx, w)
		g.Expect(err).To(HaveOccurred())
	}

	fails(0)
	g.Expect(waits()).To(Equal(time.Second))
	fails(time.Second)
	g.Expect(waits()).To(Equal(2 * time.Second))
	fails(2 * time.Second)
	g.Expect(waits()).To(Equal(4*time.Second), "doubled at each failure in a row")
	// dns-record is done; bucket fails for the first time.
	fails(4 * time.Second)
	g.Expect(j.get()).To(Equal([]string{"dns-record", "dns-record", "dns-record", "dns-record", "bucket"}))
	g.Expect(waits()).To(Equal(time.Second), "another step's failures count from one")
}

func TestTheDeadlinePassesWhenCleanupHasTakenLongerThanTimeout(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Clock: clock, Timeout: time.Hour,
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("slow", &journal{},
			inProgress("1"), inProgress("2"), inProgress("3"))},
	}
	w := deleted(t, g, l)
	stalled := func() bool {
		var latest testtypes.Widget
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
		return conditions.Get(&latest, conditions.Stalled) != nil
	}

	clock.SetTime(w.DeletionTimestamp.Add(time.Hour))
	_, _, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stalled()).To(BeFalse(), "exactly Timeout after the deletion is not longer than Timeout")

	clock.SetTime(w.DeletionTimestamp.Add(time.Hour + time.Second))
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stalled()).To(BeTrue())
}

func TestAStepInProgressWithoutADelayIsCheckedAgainAtTheStalledRetryInterval(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Clock: clock, AllowRelease: true, StalledRetryInterval: 7 * time.Minute,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "slow", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, nil
		}}},
	}
	w := deleted(t, g, l)

	_, res, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(7*time.Minute), "the Lifecycle does not go silent on an object it holds")

	// Run at that interval, the Lifecycle still knows it saw the deletion without the release
	// annotation: one set half an hour later, by hand, releases.
	for range 4 {
		clock.SetTime(clock.Now().Add(7 * time.Minute))
		_, _, err = l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, finalizer.ReleaseAnnotation, ours)
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone(ctx, w)).To(BeTrue())
}

func TestAStepInProgressWithoutADelayRunsAgainAtTheNextEvent(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	var runs atomic.Int32
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(),
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "children", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			if runs.Add(1) == 1 {
				return finalizer.Progress{}, nil // waiting for the children's delete events
			}
			return finalizer.Finished(), nil
		}}},
	}
	w := deleted(t, g, l)
	_, _, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())

	_, _, err = l.Reconcile(ctx, w) // the next event, long before the stalled retry interval

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runs.Load()).To(BeEquivalentTo(2), "the event runs the step again")
	g.Expect(gone(ctx, w)).To(BeTrue())
}
