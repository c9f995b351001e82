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
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// Regression tests for the holes closed in Ensure and Lifecycle, each against the API server.

func TestLifecycleDoesNotProceedForAnObjectDeletedBeforeItsFinalizerWasAdded(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	l := &finalizer.Lifecycle[*testtypes.Widget]{Finalizer: ours, Client: env.Client()}
	w := newWidget(t)
	read := w.DeepCopy()
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed()) // no finalizer: gone at once

	proceed, res, err := l.Reconcile(ctx, read)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeFalse(), "nothing may be created for an object that no longer exists")
	g.Expect(res.IsZero()).To(BeTrue())
}

func TestEnsureTellsAGoneObjectApartAndKeepsTheCallersObjectOnErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()

	// Gone: an error that says so.
	w := newWidget(t)
	read := w.DeepCopy()
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	added, err := finalizer.Ensure(ctx, env.Client(), read, ours)
	g.Expect(added).To(BeFalse())
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)

	// Refused: the caller's unsaved edits stay.
	w = newWidget(t)
	forbidden := interceptor.NewClient(directClient(t), interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "test.tenon.dev", Resource: "widgets"}, w.Name, errors.New("RBAC"))
		},
	})
	w.Spec.Size = "edited, not saved"
	w.Status.Phase = "edited too"
	before := w.DeepCopy()
	added, err = finalizer.Ensure(ctx, forbidden, w, ours)
	g.Expect(added).To(BeFalse())
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(w).To(Equal(before), "obj is left exactly as it was")
}

func TestAStepWhoseErrorChangesEveryTimeIsRetriedWithBackoff(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	var runs atomic.Int32
	// A controller with For() and no predicate: every status write is a watch event.
	startController(t, "changing-error", ns, finalizer.Step[*testtypes.Widget]{Name: "dns-record",
		Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			n := runs.Add(1)
			return finalizer.Progress{}, fmt.Errorf("dns api: 503 (request id %d)", n)
		}})
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Finalizers).To(ContainElement(ours))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	g.Eventually(runs.Load).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 1))

	// 1 s, then 2 s, then 4 s between runs: in the next 2.5 s the step runs at most twice more.
	g.Consistently(runs.Load).WithTimeout(2500 * time.Millisecond).Should(BeNumerically("<=", 3))
}

func TestTheReleaseAnnotationSetBeforeTheDeletionReleasesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	var runs atomic.Int32
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(), Recorder: recorder, AllowRelease: true,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			runs.Add(1)
			return finalizer.Waiting(time.Second, "withdrawing"), nil
		}}},
	}
	// Copied from a template: the annotation is there from the start.
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: env.Namespace(t),
		Annotations: map[string]string{finalizer.ReleaseAnnotation: ours}}}
	g.Expect(env.Client().Create(ctx, w, client.FieldOwner("gitops"))).To(Succeed())
	// Deleted a second later than the annotation was set, as managedFields record times in seconds.
	g.Eventually(func() time.Time { return time.Now().Truncate(time.Second) }).
		Should(BeTemporally(">", w.CreationTimestamp.Time))
	proceed, _, err := l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(proceed).To(BeTrue())
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())

	for range 3 {
		_, _, err = l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(runs.Load()).To(BeEquivalentTo(1), "the step runs, then waits the second it asked for")
	g.Expect(gone(ctx, w)).To(BeFalse())
	g.Expect(drain(recorder)).To(Equal([]string{"Warning FinalizerReleaseIgnored the finalizer.tenon.dev/release annotation is ignored: " +
		"it was there when this controller first saw the deletion, so it may predate it; to release the finalizer, set it to " +
		finalizer.ReleaseValue(w, ours)}), "said once")

	// The same manager changes another field after the deletion: the annotation still releases
	// nothing, whatever managedFields say of the manager's entry.
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	w.Labels = map[string]string{"touched": "after-deletion"}
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("gitops"))).To(Succeed())
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone(ctx, w)).To(BeFalse())

	// The value that names this deletion releases it.
	w.Annotations[finalizer.ReleaseAnnotation] = finalizer.ReleaseValue(w, ours)
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	_, _, err = l.Reconcile(ctx, w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone(ctx, w)).To(BeTrue())
}

func TestLifecycleEventsSayWhatHappenedOnceAndOnlyAfterItHappened(t *testing.T) {
	t.Run("the release Event names only the steps not done", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		recorder := events.NewFakeRecorder(20)
		l := &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: ours, Client: env.Client(), Recorder: recorder, AllowRelease: true,
			Steps: []finalizer.Step[*testtypes.Widget]{
				{Name: "children", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) { return finalizer.Finished(), nil }},
				{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
					return finalizer.Waiting(time.Minute, "zone unreachable"), nil
				}},
				{Name: "directory", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) { return finalizer.Finished(), nil }},
			},
		}
		w := deleted(t, g, l)
		_, _, err := l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
		w.Annotations = map[string]string{finalizer.ReleaseAnnotation: ours}
		g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())

		_, _, err = l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gone(ctx, w)).To(BeTrue())
		g.Expect(drain(recorder)).To(ConsistOf(HavePrefix("Warning FinalizerReleased finalizer released by the finalizer.tenon.dev/release annotation (set by kubectl-annotate) before cleanup completed; steps dns-record, directory may have left resources behind")))
	})

	t.Run("CleanupTimedOut is recorded once", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		recorder := events.NewFakeRecorder(20)
		l := &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: ours, Client: env.Client(), Recorder: recorder, Timeout: time.Nanosecond,
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "slow", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				return finalizer.Waiting(time.Second, "withdrawing"), nil
			}}},
		}
		w := deleted(t, g, l)
		for range 3 {
			_, _, err := l.Reconcile(ctx, w)
			g.Expect(err).NotTo(HaveOccurred())
		}
		timedOut := 0
		for _, e := range drain(recorder) {
			if strings.HasPrefix(e, "Warning CleanupTimedOut") {
				timedOut++
			}
		}
		g.Expect(timedOut).To(Equal(1))
	})

	t.Run("Finalized is recorded only once the finalizer is removed", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		recorder := events.NewFakeRecorder(20)
		failing := interceptor.NewClient(directClient(t), interceptor.Funcs{
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return apierrors.NewInternalError(errors.New("etcd is down"))
			},
		})
		l := &finalizer.Lifecycle[*testtypes.Widget]{Finalizer: ours, Client: env.Client(), Recorder: recorder}
		w := deleted(t, g, l)
		l.Client = failing

		_, _, err := l.Reconcile(ctx, w)
		g.Expect(err).To(HaveOccurred())
		g.Expect(drain(recorder)).To(BeEmpty())

		l.Client = env.Client()
		_, _, err = l.Reconcile(ctx, w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(drain(recorder)).To(ConsistOf(HavePrefix("Normal Finalized cleanup complete")))
	})
}

// drain returns the Events recorded so far.
func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestTheReleaseAnnotationIsJudgedByWhatTheLifecycleSawNotByTimes covers what timestamps cannot
// tell apart: managedFields record times to the second, for a manager's whole entry. The plain
// finalizer name releases only when this Lifecycle saw the deletion without it first; a value
// that names the deletion (ReleaseValue) releases whenever; and none of it needs managedFields.
func TestTheReleaseAnnotationIsJudgedByWhatTheLifecycleSawNotByTimes(t *testing.T) {
	newLifecycle := func(recorder events.EventRecorder) *finalizer.Lifecycle[*testtypes.Widget] {
		return &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: ours, Client: env.Client(), Recorder: recorder, AllowRelease: true,
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				return finalizer.Progress{}, errors.New("dns api: account closed")
			}}},
		}
	}
	annotate := func(g Gomega, w *testtypes.Widget, value string) {
		g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(w), w)).To(Succeed())
		metav1.SetMetaDataAnnotation(&w.ObjectMeta, finalizer.ReleaseAnnotation, value)
		g.Expect(env.Client().Update(t.Context(), w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	}
	stripped := func(w *testtypes.Widget) *testtypes.Widget {
		w = w.DeepCopy()
		w.ManagedFields = nil // as a cache that strips them holds it
		return w
	}

	t.Run("set with the deletion, in the same second, before the Lifecycle saw it: ignored, and says what releases", func(t *testing.T) {
		g := NewWithT(t)
		recorder := events.NewFakeRecorder(10)
		l := newLifecycle(recorder)
		w := newWidget(t, ours)
		g.Expect(env.Client().Delete(t.Context(), w)).To(Succeed())
		annotate(g, w, ours)

		_, _, err := l.Reconcile(t.Context(), stripped(w))
		g.Expect(err).To(MatchError(ContainSubstring("account closed")))
		g.Expect(gone(t.Context(), w)).To(BeFalse())
		g.Expect(drain(recorder)).To(ContainElement(HaveSuffix("set it to " + finalizer.ReleaseValue(w, ours))))
	})

	t.Run("set after the Lifecycle saw the deletion, in the same second: released, without managedFields", func(t *testing.T) {
		g := NewWithT(t)
		recorder := events.NewFakeRecorder(10)
		l := newLifecycle(recorder)
		w := newWidget(t, ours)
		g.Expect(env.Client().Delete(t.Context(), w)).To(Succeed())
		g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(w), w)).To(Succeed())
		_, _, err := l.Reconcile(t.Context(), stripped(w))
		g.Expect(err).To(HaveOccurred())
		annotate(g, w, ours)

		_, _, err = l.Reconcile(t.Context(), stripped(w))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gone(t.Context(), w)).To(BeTrue())
		g.Expect(drain(recorder)).To(ContainElement(ContainSubstring("(the API server's audit log says who set it)")))
	})

	t.Run("after a restart, the plain name is ignored and the value naming the deletion releases", func(t *testing.T) {
		g := NewWithT(t)
		w := newWidget(t, ours)
		g.Expect(env.Client().Delete(t.Context(), w)).To(Succeed())
		g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(w), w)).To(Succeed())
		_, _, _ = newLifecycle(nil).Reconcile(t.Context(), w)
		annotate(g, w, ours)
		restarted := newLifecycle(events.NewFakeRecorder(10))

		_, _, err := restarted.Reconcile(t.Context(), w)
		g.Expect(err).To(HaveOccurred())
		g.Expect(gone(t.Context(), w)).To(BeFalse())
		annotate(g, w, finalizer.ReleaseValue(w, ours))
		_, _, err = restarted.Reconcile(t.Context(), w)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gone(t.Context(), w)).To(BeTrue())
	})
}

// TestTwoControllersLifecyclesDoNotPingPong keeps two controllers' finalizers on one object, each
// with a step that waits 30 s, and runs each Lifecycle every time the other one writes, as two
// controllers woken by each other's watch events do: each step runs once in those 30 s, each
// Lifecycle writes the status once, and the Deleting condition says both.
func TestTwoControllersLifecyclesDoNotPingPong(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	type controller struct {
		lifecycle *finalizer.Lifecycle[*testtypes.Widget]
		writes    *writeCounter
		runs      atomic.Int32
		done      atomic.Bool
		clock     *clocktesting.FakePassiveClock
	}
	var controllers []*controller
	for _, f := range []string{ours, theirs} {
		c := &controller{writes: countWrites(directClient(t)), clock: clocktesting.NewFakePassiveClock(time.Now())}
		c.lifecycle = &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: f, Client: c.writes, Clock: c.clock,
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "backup", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				c.runs.Add(1)
				if c.done.Load() {
					return finalizer.Finished(), nil
				}
				return finalizer.Waiting(30*time.Second, "waiting for the snapshot of "+f), nil
			}}},
		}
		controllers = append(controllers, c)
	}
	w := newWidget(t, ours, theirs)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())

	reconcileAll := func() {
		for range 10 {
			for _, c := range controllers {
				latest := &testtypes.Widget{}
				g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
				_, res, err := c.lifecycle.Reconcile(ctx, latest)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(res.RequeueAfter).To(BeNumerically(">", 0))
			}
		}
	}
	reconcileAll()
	for _, c := range controllers {
		g.Expect(c.runs.Load()).To(BeEquivalentTo(1), "%s: the step runs once in its 30 s", c.lifecycle.Finalizer)
		g.Expect(c.writes.writes.Load()).To(BeEquivalentTo(1), "%s: one status write, not one per event", c.lifecycle.Finalizer)
	}
	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	g.Expect(conditions.Get(latest, conditions.Deleting).Message).To(Equal(
		ours + ": step backup: waiting for the snapshot of " + ours + "\n" + theirs + ": step backup: waiting for the snapshot of " + theirs))

	// 30 s later each step runs again; its line is unchanged, so nothing is written.
	for _, c := range controllers {
		c.clock.SetTime(c.clock.Now().Add(30 * time.Second))
	}
	reconcileAll()
	for _, c := range controllers {
		g.Expect(c.runs.Load()).To(BeEquivalentTo(2))
		g.Expect(c.writes.writes.Load()).To(BeEquivalentTo(1))
	}

	// Our cleanup finishes: we remove our line (theirs keeps the object) and our finalizer, two
	// writes. Theirs, 30 s later, runs again with its line unchanged: our leaving causes no
	// write of theirs.
	controllers[0].done.Store(true)
	controllers[0].clock.SetTime(controllers[0].clock.Now().Add(30 * time.Second))
	latest = &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	_, _, err := controllers[0].lifecycle.Reconcile(ctx, latest)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(controllers[0].writes.writes.Load()).To(BeEquivalentTo(3))
	theirsOnly := controllers[1]
	theirsOnly.clock.SetTime(theirsOnly.clock.Now().Add(30 * time.Second))
	for range 3 {
		latest = &testtypes.Widget{}
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
		g.Expect(latest.Finalizers).To(Equal([]string{theirs}))
		_, _, err = theirsOnly.lifecycle.Reconcile(ctx, latest)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(theirsOnly.runs.Load()).To(BeEquivalentTo(3))
	g.Expect(theirsOnly.writes.writes.Load()).To(BeEquivalentTo(1), "their line did not change")
}

func TestALifecycleThatReadTheObjectBeforeAnotherControllersLineKeepsThatLine(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	lifecycle := func(f string) *finalizer.Lifecycle[*testtypes.Widget] {
		return &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: f, Client: directClient(t),
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "backup", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				return finalizer.Waiting(30*time.Second, "waiting for the snapshot of "+f), nil
			}}},
		}
	}
	w := newWidget(t, ours, theirs)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	stale := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), stale)).To(Succeed())

	// They write their line; we then reconcile the object as read before it (a cache behind).
	fresh := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), fresh)).To(Succeed())
	_, _, err := lifecycle(theirs).Reconcile(ctx, fresh)
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = lifecycle(ours).Reconcile(ctx, stale)
	g.Expect(err).NotTo(HaveOccurred())

	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	g.Expect(conditions.Get(latest, conditions.Deleting).Message).To(Equal(
		ours+": step backup: waiting for the snapshot of "+ours+"\n"+theirs+": step backup: waiting for the snapshot of "+theirs),
		"our write merged our line onto theirs instead of overwriting it")
}

// TestALifecycleGivesUpRecordingProgressAfterItsRetriesWhileAnotherControllerKeepsWriting has
// another controller rewrite the Deleting condition before each of the Lifecycle's status
// writes, so that each one conflicts: the Lifecycle tries progressRetries (3) times, then
// reports the step's own outcome; it never loops.
func TestALifecycleGivesUpRecordingProgressAfterItsRetriesWhileAnotherControllerKeepsWriting(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: env.Client(),
		Steps: []finalizer.Step[*testtypes.Widget]{scriptedStep("dns-record", &journal{}, inProgress("propagating"))},
	}
	w := deleted(t, g, l)
	var statusWrites atomic.Int32
	l.Client = interceptor.NewClient(directClient(t), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			n := statusWrites.Add(1)
			if n <= 10 {
				// The other controller writes first, every time (a cap, so that a loop ends).
				var other testtypes.Widget
				if err := env.Client().Get(ctx, client.ObjectKeyFromObject(obj), &other); err != nil {
					return err
				}
				meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: string(conditions.Deleting),
					Status: metav1.ConditionTrue, Reason: "CleanupInProgress", Message: fmt.Sprintf("theirs: %d", n)})
				if err := env.Client().Status().Update(ctx, &other); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})

	_, res, err := l.Reconcile(ctx, w)

	g.Expect(err).NotTo(HaveOccurred(), "the status is informational: the step's outcome decides")
	g.Expect(res.RequeueAfter).To(Equal(time.Second))
	g.Expect(statusWrites.Load()).To(BeEquivalentTo(3), "three attempts, each refused")
}
