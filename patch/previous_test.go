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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// TestATransitionIsRecordedOnceWhenTheCacheLagsBehindTheControllersOwnWrite runs the reconcile
// of controller-runtime's default cached client with a History: a second reconcile reads the
// Widget from a cache that has not delivered the first one's status write, computes the same
// transition again, and sends nothing. The Event of the transition must be recorded once: the
// conditions before the write are Helper.Previous's, not the stale read's.
func TestATransitionIsRecordedOnceWhenTheCacheLagsBehindTheControllersOwnWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "w"}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	stale := w.DeepCopy() // what the cache holds for both reconciles
	recorder := events.NewFakeRecorder(10)
	writer := patch.NewWriter(c, patch.WriterOptions{History: &patch.History{}})

	reconcile := func() (snapshot, previous []metav1.Condition) {
		read := stale.DeepCopy()
		h, err := writer.NewHelper(read)
		g.Expect(err).NotTo(HaveOccurred())
		snapshot = read.Status.Conditions
		conditions.MarkTrue(read, conditions.Ready, conditions.ReasonSucceeded, "up")
		g.Expect(h.Patch(ctx, read, patch.OwnedConditions{conditions.Ready})).To(Succeed())
		previous = h.Previous().(*testtypes.Widget).Status.Conditions
		observe.RecordEvents(recorder, read, previous, read.Status.Conditions)
		return snapshot, previous
	}

	reconcile()
	snapshot, previous := reconcile()

	g.Expect(recorder.Events).To(HaveLen(1), "one Event for one transition")
	g.Expect(<-recorder.Events).To(ContainSubstring("Ready is True"))
	g.Expect(snapshot).To(BeEmpty(), "the stale read has no Ready: an Event from it would repeat the first")
	g.Expect(conditions.IsTrue(&testtypes.Widget{Status: testtypes.WidgetStatus{Conditions: previous}}, conditions.Ready)).To(BeTrue(),
		"Previous is the controller's own last write")
}

// TestPreviousIsWhatThePatchMergedOnto covers the other sources of Previous: the snapshot when
// the Patch had nothing to send or wrote on it, and the object read after a conflict.
func TestPreviousIsWhatThePatchMergedOnto(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "w"}}
	g.Expect(c.Create(ctx, w)).To(Succeed())

	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Previous()).To(BeNil(), "before the first Patch")
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	g.Expect(h.Previous().GetResourceVersion()).To(Equal(w.ResourceVersion), "nothing to send: the snapshot")

	before := w.ResourceVersion
	w.Spec.Size = "large"
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	g.Expect(h.Previous().GetResourceVersion()).To(Equal(before), "written on the snapshot")

	// Another writer adds a condition where the Patch adds the list: the guard that the list is
	// still missing fails, and the Patch merges onto the object it reads then.
	theirs := w.DeepCopy()
	theirs.Status.Conditions = []metav1.Condition{{Type: "Theirs", Status: metav1.ConditionTrue, Reason: "Set", LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, theirs)).To(Succeed())
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
	g.Expect(h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready})).To(Succeed())
	g.Expect(h.Previous().GetResourceVersion()).To(Equal(theirs.ResourceVersion), "the object read after the conflict")
	g.Expect(conditions.Get(h.Previous().(*testtypes.Widget), "Theirs")).NotTo(BeNil())
	g.Expect(conditions.Get(h.Previous().(*testtypes.Widget), conditions.Ready)).To(BeNil())
}

// TestAStatusAnotherWriterRevertedIsNoSignOfAStatusSubresource has a Helper with a History patch
// a Gadget (a kind without a status subresource) from a stale snapshot, after another writer
// reverted a status field the controller's last write set. The Patch merges onto that last
// write and sends the status with the rest of the object; that the status then lacks the
// reverted field says nothing about where the status is written. (It used to be read as "the
// server did not keep the status": the Patch then sent a status request, which the kind does
// not have, and returned a conflict after writing half of its changes.)
func TestAStatusAnotherWriterRevertedIsNoSignOfAStatusSubresource(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	gd := &testtypes.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "g"}}
	gd.Status.ReadyReplicas = 3
	g.Expect(c.Create(ctx, gd)).To(Succeed())
	s0 := gd.DeepCopy()
	writer := patch.NewWriter(c, patch.WriterOptions{History: &patch.History{}})

	first, err := writer.NewHelper(s0.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	l1 := s0.DeepCopy()
	l1.Spec.Items = []string{""}
	l1.Status.ObservedGeneration = 1
	g.Expect(first.Patch(ctx, l1)).To(Succeed())

	theirs := l1.DeepCopy()
	theirs.Spec.Items = []string{"b"}
	theirs.Status.ObservedGeneration = 0
	g.Expect(c.Update(ctx, theirs)).To(Succeed())

	second, err := writer.NewHelper(s0)
	g.Expect(err).NotTo(HaveOccurred())
	s0.Spec.Items = []string{""}
	s0.Status.ObservedGeneration = 1
	s0.Status.Phase = "running"
	g.Expect(second.Patch(ctx, s0)).To(Succeed())

	got := &testtypes.Gadget{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gd), got)).To(Succeed())
	g.Expect(got.Status.Phase).To(Equal("running"))
	g.Expect(got.Spec.Items).To(Equal([]string{"b"}), "theirs: the controller's last write already had its items")
}
