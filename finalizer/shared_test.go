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

// Adversarial tests of issue 26's changes (attack25): two controllers' Lifecycles on one object
// woken by the same event, the release annotation, Retain.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// TestTwoLifecyclesWokenByTheSameDeleteKeepEachOthersDeletingLine has two controllers, each
// with its own finalizer and Lifecycle, woken by the same delete event: both read the deleted
// object (from their caches, which have not seen the other's status write yet), each step reports
// Waiting(30s), and each Lifecycle writes its line of the Deleting condition. The documentation
// promises "each Lifecycle rewrites only its own line, so no controller's write undoes another's":
// after both wrote, the condition must say both lines.
func TestTwoLifecyclesWokenByTheSameDeleteKeepEachOthersDeletingLine(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	lifecycle := func(f string) *finalizer.Lifecycle[*testtypes.Widget] {
		return &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: f, Client: directClient(t), Clock: clock,
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "backup", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				return finalizer.Waiting(30*time.Second, "waiting for the snapshot of "+f), nil
			}}},
		}
	}
	a, b := lifecycle(ours), lifecycle(theirs)
	w := newWidget(t, ours, theirs)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	deleted := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), deleted)).To(Succeed())

	// Both controllers are woken by the delete event and hold the same object.
	_, _, err := a.Reconcile(ctx, deleted.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = b.Reconcile(ctx, deleted.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())

	// Then each is woken again by the other's write (fresh reads), within the 30 s.
	for _, l := range []*finalizer.Lifecycle[*testtypes.Widget]{a, b} {
		latest := &testtypes.Widget{}
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
		_, _, err := l.Reconcile(ctx, latest)
		g.Expect(err).NotTo(HaveOccurred())
	}

	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	message := conditions.Get(latest, conditions.Deleting).Message
	g.Expect(message).To(Equal(
		ours+": step backup: waiting for the snapshot of "+ours+"\n"+theirs+": step backup: waiting for the snapshot of "+theirs),
		"each Lifecycle rewrites only its own line; the Deleting message is %q", message)
}

// TestALifecycleThatFinishedLeavesNothingOfItsOwnInTheStatus has two controllers' finalizers
// on one object. The first controller's cleanup finishes and its finalizer is removed, while the
// second one's step still waits (30 s, and it is woken by the first one's write). The Deleting
// condition has "one line per finalizer, \"<finalizer>: step ...\", in the order of
// metadata.finalizers" and "names the step that holds deletion, and why": once the first
// finalizer is gone, its line must be gone, and the Stalled condition the first controller set
// when its own deadline passed must not keep saying that cleanup did not finish.
func TestALifecycleThatFinishedLeavesNothingOfItsOwnInTheStatus(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	firstDone := false
	first := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: directClient(t), Clock: clock, Timeout: time.Minute,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			if firstDone {
				return finalizer.Finished(), nil
			}
			return finalizer.Waiting(30*time.Second, "withdrawing the record"), nil
		}}},
	}
	second := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: theirs, Client: directClient(t), Clock: clock,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "backup", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Waiting(30*time.Minute, "waiting for the snapshot"), nil
		}}},
	}
	w := newWidget(t, ours, theirs)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	reconcile := func(l *finalizer.Lifecycle[*testtypes.Widget]) {
		latest := &testtypes.Widget{}
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
		_, _, err := l.Reconcile(ctx, latest)
		g.Expect(err).NotTo(HaveOccurred())
	}
	reconcile(first)
	reconcile(second)
	clock.SetTime(clock.Now().Add(2 * time.Minute)) // past the first one's deadline: Stalled
	reconcile(first)
	reconcile(second)
	firstDone = true
	clock.SetTime(clock.Now().Add(time.Minute))
	reconcile(first) // finished: its finalizer is removed
	reconcile(second)

	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(Equal([]string{theirs}))
	message := conditions.Get(latest, conditions.Deleting).Message
	stalled := conditions.Get(latest, conditions.Stalled)
	g.Expect(message).To(Equal(theirs+": step backup: waiting for the snapshot"),
		"the first finalizer is gone, yet the Deleting message is %q (and Stalled is %+v)", message, stalled)
	g.Expect(stalled == nil || stalled.Status != "True").To(BeTrue(),
		"the first controller's cleanup finished, yet the object is still Stalled: %+v", stalled)
}

// TestTwoTimedOutLifecyclesDoNotTakeTurnsRewritingStalled has two controllers' finalizers
// on one object, each Lifecycle with a Timeout and a step that keeps waiting (5 s, with the same
// message each time). Once both deadlines have passed, each marks the object Stalled with its own
// message. Nothing changes for either controller after that, so nothing should be written: the
// documentation promises that two Lifecycles "never take turns rewriting" what they share, and
// issue 26 asks for "no status write caused only by the other controller's writes". Each run of
// one rewrites the Stalled message the other wrote.
func TestTwoTimedOutLifecyclesDoNotTakeTurnsRewritingStalled(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	type controller struct {
		lifecycle *finalizer.Lifecycle[*testtypes.Widget]
		writes    *writeCounter
	}
	var controllers []*controller
	for _, f := range []string{ours, theirs} {
		c := &controller{writes: countWrites(directClient(t))}
		c.lifecycle = &finalizer.Lifecycle[*testtypes.Widget]{
			Finalizer: f, Client: c.writes, Clock: clock, Timeout: time.Minute,
			Steps: []finalizer.Step[*testtypes.Widget]{{Name: "backup", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
				return finalizer.Waiting(5*time.Second, "waiting for the snapshot of "+f), nil
			}}},
		}
		controllers = append(controllers, c)
	}
	w := newWidget(t, ours, theirs)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	round := func() {
		for _, c := range controllers {
			latest := &testtypes.Widget{}
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
			_, _, err := c.lifecycle.Reconcile(ctx, latest)
			g.Expect(err).NotTo(HaveOccurred())
		}
		clock.SetTime(clock.Now().Add(5 * time.Second))
	}
	round()
	clock.SetTime(clock.Now().Add(2 * time.Minute)) // both deadlines pass
	round()
	round()
	for _, c := range controllers {
		c.writes.writes.Store(0)
	}
	for range 5 {
		round()
	}
	latest := &testtypes.Widget{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	t.Logf("Stalled: %+v", conditions.Get(latest, conditions.Stalled))
	g.Expect([]int32{controllers[0].writes.writes.Load(), controllers[1].writes.writes.Load()}).To(Equal([]int32{0, 0}),
		"status writes by each controller in 5 rounds where nothing of its own changed")
}

// TestAReleaseValueThatNamesTheDeletionInAnotherSpellingIsNotIgnoredSilently sets the
// release annotation to the finalizer's name and the object's deletionTimestamp, the same
// instant in another RFC 3339 spelling ("+00:00" for "Z", as `date --rfc-3339=seconds` and many
// tools write it). The value names this deletion, so it should release; if the Lifecycle insists
// on the exact spelling of ReleaseValue, it must at least say so, as it does for the plain name
// ("a FinalizerReleaseIgnored Warning Event says so once and gives the value to set"): a person
// who asked for a release must not be left with a finalizer that stays and nothing that says why.
func TestAReleaseValueThatNamesTheDeletionInAnotherSpellingIsNotIgnoredSilently(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: directClient(t), Recorder: recorder, AllowRelease: true,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, errors.New("dns api: account closed")
		}}},
	}
	w := newWidget(t, ours)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	_, _, err := l.Reconcile(ctx, w.DeepCopy())
	g.Expect(err).To(HaveOccurred())
	drain(recorder)

	value := ours + "@" + w.DeletionTimestamp.UTC().Format("2006-01-02T15:04:05-07:00")
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, finalizer.ReleaseAnnotation, value)
	g.Expect(env.Client().Update(ctx, w, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	for range 3 {
		latest := &testtypes.Widget{}
		if env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest) != nil {
			break
		}
		_, _, _ = l.Reconcile(ctx, latest)
	}

	recorded := drain(recorder)
	g.Expect(gone(ctx, w) || slices.ContainsFunc(recorded, func(e string) bool {
		return strings.Contains(e, finalizer.ReleaseValue(w, ours))
	})).To(BeTrue(), "annotation %q: the finalizer stays, and the Events say nothing of it: %q", value, recorded)
}

func TestAReleaseValueThatNamesAnotherDeletionReleasesNothingAndSaysWhatToSet(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	recorder := events.NewFakeRecorder(20)
	l := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: ours, Client: directClient(t), Recorder: recorder, AllowRelease: true,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, errors.New("dns api: account closed")
		}}},
	}
	// Kept in Git from an earlier deletion of an object of the same name.
	w := newWidget(t, ours)
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, finalizer.ReleaseAnnotation, ours+"@2020-01-01T00:00:00Z")
	g.Expect(env.Client().Update(ctx, w)).To(Succeed())
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	for range 3 {
		latest := &testtypes.Widget{}
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
		_, _, err := l.Reconcile(ctx, latest)
		if err != nil { // a reconcile before the step's retry runs nothing
			g.Expect(err).To(MatchError(ContainSubstring("account closed")))
		}
		w = latest
	}
	recorded := drain(recorder)
	ignored := slices.DeleteFunc(slices.Clone(recorded), func(e string) bool { return !strings.Contains(e, "FinalizerReleaseIgnored") })
	g.Expect(ignored).To(HaveLen(1), "one Event for the value, however many reconciles: %q", recorded)
	g.Expect(ignored[0]).To(ContainSubstring(finalizer.ReleaseValue(w, ours)))
	g.Expect(gone(ctx, w)).To(BeFalse())
}
