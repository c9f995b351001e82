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
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

// Regression tests for the holes the guarantee table closes, each against the API server.

// mergePatch applies a JSON merge patch to obj on the server, as another writer would.
func mergePatchOnServer(t *testing.T, g Gomega, obj client.Object, body string, status bool) {
	t.Helper()
	p := client.RawPatch(types.MergePatchType, []byte(body))
	target := obj.DeepCopyObject().(client.Object)
	if status {
		g.Expect(env.Client().Status().Patch(t.Context(), target, p)).To(Succeed())
		return
	}
	g.Expect(env.Client().Patch(t.Context(), target, p)).To(Succeed())
}

// newWithWatch returns a client of the test environment that goes to the API server.
func newWithWatch(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to create a client: %v", err)
	}
	return c
}

func newShape(t *testing.T, g Gomega, spec testtypes.ShapeSpec, status testtypes.ShapeStatus) *testtypes.Shape {
	t.Helper()
	s := &testtypes.Shape{ObjectMeta: metav1.ObjectMeta{GenerateName: "s-", Namespace: env.Namespace(t)}, Spec: spec}
	g.Expect(env.Client().Create(t.Context(), s)).To(Succeed())
	if !isZeroShapeStatus(status) {
		s.Status = status
		g.Expect(env.Client().Status().Update(t.Context(), s)).To(Succeed())
	}
	return s
}

func isZeroShapeStatus(s testtypes.ShapeStatus) bool {
	return len(s.Conditions) == 0 && len(s.Counters) == 0 && len(s.Members) == 0 && len(s.Notes) == 0 && s.Phase == ""
}

func getShape(g Gomega, s *testtypes.Shape) *testtypes.Shape {
	latest := &testtypes.Shape{}
	g.Expect(env.Client().Get(context.Background(), client.ObjectKeyFromObject(s), latest)).To(Succeed())
	return latest
}

func TestRemovingTheLastKeyOfAMapKeepsTheKeysAnotherWriterAdded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(s *testtypes.Shape)
		theirs string
		status bool
		check  func(g Gomega, s *testtypes.Shape)
	}{{
		name:   "labels",
		remove: func(s *testtypes.Shape) { delete(s.Labels, "ours") },
		theirs: `{"metadata":{"labels":{"theirs":"x"}}}`,
		check:  func(g Gomega, s *testtypes.Shape) { g.Expect(s.Labels).To(Equal(map[string]string{"theirs": "x"})) },
	}, {
		name:   "annotations",
		remove: func(s *testtypes.Shape) { delete(s.Annotations, "example.com/ours") },
		theirs: `{"metadata":{"annotations":{"example.com/theirs":"x"}}}`,
		check: func(g Gomega, s *testtypes.Shape) {
			g.Expect(s.Annotations).To(Equal(map[string]string{"example.com/theirs": "x"}))
		},
	}, {
		name:   "a map in the spec",
		remove: func(s *testtypes.Shape) { delete(s.Spec.Labels, "ours") },
		theirs: `{"spec":{"labels":{"theirs":"x"}}}`,
		check: func(g Gomega, s *testtypes.Shape) {
			g.Expect(s.Spec.Labels).To(Equal(map[string]string{"theirs": "x"}))
		},
	}, {
		name:   "a map in the status",
		remove: func(s *testtypes.Shape) { delete(s.Status.Counters, "ours") },
		theirs: `{"status":{"counters":{"theirs":7}}}`,
		status: true,
		check: func(g Gomega, s *testtypes.Shape) {
			g.Expect(s.Status.Counters).To(Equal(map[string]int64{"theirs": 7}))
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &testtypes.Shape{ObjectMeta: metav1.ObjectMeta{GenerateName: "s-", Namespace: env.Namespace(t),
				Labels: map[string]string{"ours": "a"}, Annotations: map[string]string{"example.com/ours": "a"}},
				Spec: testtypes.ShapeSpec{Labels: map[string]string{"ours": "a"}}}
			g.Expect(env.Client().Create(t.Context(), s)).To(Succeed())
			s.Status.Counters = map[string]int64{"ours": 1}
			g.Expect(env.Client().Status().Update(t.Context(), s)).To(Succeed())
			h, err := patch.NewHelper(s, env.Client())
			g.Expect(err).NotTo(HaveOccurred())
			mergePatchOnServer(t, g, s, tc.theirs, tc.status)

			tc.remove(s)
			g.Expect(h.Patch(t.Context(), s)).To(Succeed())
			tc.check(g, getShape(g, s))
		})
	}

	t.Run("ConfigMap data", func(t *testing.T) {
		g := NewWithT(t)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-", Namespace: env.Namespace(t)},
			Data: map[string]string{"ours": "a"}}
		g.Expect(env.Client().Create(t.Context(), cm)).To(Succeed())
		h, err := patch.NewHelper(cm, env.Client())
		g.Expect(err).NotTo(HaveOccurred())
		mergePatchOnServer(t, g, cm, `{"data":{"theirs":"x"}}`, false)

		delete(cm.Data, "ours")
		g.Expect(h.Patch(t.Context(), cm)).To(Succeed())
		latest := &corev1.ConfigMap{}
		g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(cm), latest)).To(Succeed())
		g.Expect(latest.Data).To(Equal(map[string]string{"theirs": "x"}))
	})
}

func TestAConditionAnotherWriterChangedInAnyFieldIsAConflict(t *testing.T) {
	ready := func(message string, gen int64) metav1.Condition {
		return metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", Message: message,
			ObservedGeneration: gen, LastTransitionTime: metav1.Unix(1_700_000_000, 0)}
	}
	for _, tc := range []struct {
		name   string
		theirs metav1.Condition
	}{
		{"its message, where ours was empty", ready("theirs", 1)},
		{"its observedGeneration", ready("", 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := newShape(t, g, testtypes.ShapeSpec{}, testtypes.ShapeStatus{Conditions: []metav1.Condition{ready("", 1)}})
			h, err := patch.NewHelper(s, env.Client())
			g.Expect(err).NotTo(HaveOccurred())
			other := getShape(g, s)
			other.Status.Conditions = []metav1.Condition{tc.theirs}
			g.Expect(env.Client().Status().Update(t.Context(), other)).To(Succeed())

			s.Status.Conditions[0].Reason = "Ours"
			err = h.Patch(t.Context(), s)
			var conflict *patch.ConflictError
			g.Expect(errors.As(err, &conflict)).To(BeTrue(), "got %v", err)
			g.Expect(apierrors.IsConflict(err)).To(BeTrue())
			got := conditions.Get(getShape(g, s), "Synced")
			g.Expect(got.Reason).To(Equal("Synced"), "their condition stays")
			g.Expect(got.Message).To(Equal(tc.theirs.Message))
			g.Expect(got.ObservedGeneration).To(Equal(tc.theirs.ObservedGeneration))
		})
	}
}

func TestWhatAHelperLearnsAboutAKindIsNotSharedNorTakenFromALaggingRead(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	gone := newWidget(t, g, "gone")
	stale := gone.DeepCopy()
	// The status patch of the deleted object is answered 404, and a reader that lags still finds it.
	lagging := interceptor.NewClient(newWithWatch(t), interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
			stale.DeepCopyInto(obj.(*testtypes.Widget))
			return nil
		},
	})
	h, err := patch.NewWriter(env.Client(), patch.WriterOptions{APIReader: lagging}).NewHelper(gone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Delete(ctx, gone)).To(Succeed())

	conditions.MarkFalse(gone, conditions.Ready, "Gone", "")
	err = h.Patch(ctx, gone)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)

	// Another object of the kind, through another client: its status goes to the subresource,
	// in one request.
	c := newCountingClient(t)
	w := newWidget(t, g, "unrelated")
	h, err = patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkFalse(w, conditions.Ready, "Scaling", "")
	g.Expect(h.Patch(ctx, w)).To(Succeed())
	g.Expect(c.take()).To(Equal(counts{"status patch": 1}))
}

func TestAConflictAfterTheSpecWasWrittenSaysSo(t *testing.T) {
	g := NewWithT(t)
	s := newShape(t, g, testtypes.ShapeSpec{Text: "a"}, testtypes.ShapeStatus{Notes: []string{"one"}})
	h, err := patch.NewHelper(s, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	mergePatchOnServer(t, g, s, `{"status":{"notes":["one","theirs"]}}`, true)

	s.Spec.Text = "b"
	s.Status.Notes = []string{"one", "ours"}
	err = h.Patch(t.Context(), s)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(errors.Is(err, patch.ErrPartiallyWritten)).To(BeTrue(), "the error says the spec was written: %v", err)
	latest := getShape(g, s)
	g.Expect(latest.Spec.Text).To(Equal("b"))
	g.Expect(latest.Status.Notes).To(Equal([]string{"one", "theirs"}))
	g.Expect(s.Spec.Text).To(Equal("b"), "obj is left as the caller had it")
	g.Expect(s.Status.Notes).To(Equal([]string{"one", "ours"}))

	// Nothing written: the error does not say so.
	s = newShape(t, g, testtypes.ShapeSpec{Tags: []string{"one"}}, testtypes.ShapeStatus{})
	h, err = patch.NewHelper(s, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	mergePatchOnServer(t, g, s, `{"spec":{"tags":["one","theirs"]}}`, false)
	s.Spec.Tags = []string{"one", "ours"}
	s.Status.Phase = "Running"
	err = h.Patch(t.Context(), s)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(errors.Is(err, patch.ErrPartiallyWritten)).To(BeFalse())
	g.Expect(getShape(g, s).Status.Phase).To(BeEmpty())
}

func TestAnErrorThatIsNotAConflictKeepsItsClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"403 Forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "test.tenon.dev", Resource: "shapes"}, "s", errors.New("RBAC"))},
		{"500 Internal Server Error", apierrors.NewInternalError(errors.New("etcd is down"))},
		{"a webhook's denial", apierrors.NewBadRequest("admission webhook denied the request")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			s := newShape(t, g, testtypes.ShapeSpec{}, testtypes.ShapeStatus{Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Starting", LastTransitionTime: metav1.Now()}}})
			// Before every answer, another writer adds a condition ahead of ours, so that the
			// guards of the refused request no longer hold.
			n := 0
			c := interceptor.NewClient(newWithWatch(t), interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, _ string, obj client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
					n++
					other := getShape(g, s)
					other.Status.Conditions = append([]metav1.Condition{{Type: "Aaa" + string(rune('a'+n)),
						Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: metav1.Now()}}, other.Status.Conditions...)
					g.Expect(env.Client().Status().Update(ctx, other)).To(Succeed())
					return tc.err
				},
			})
			h, err := patch.NewHelper(s, c)
			g.Expect(err).NotTo(HaveOccurred())
			conditions.MarkTrue(s, conditions.Ready, "Running", "")
			err = h.Patch(ctx, s)
			g.Expect(err).To(HaveOccurred())
			g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "got %v", err)
			g.Expect(requeue.Classify(err)).NotTo(Equal(requeue.ClassConflict))
			g.Expect(apierrors.ReasonForError(err)).To(Equal(apierrors.ReasonForError(tc.err)))
		})
	}
}

func TestAListAnotherWriterChangedIsAConflictNotALoss(t *testing.T) {
	for _, tc := range []struct {
		name   string
		theirs string
		status bool
		ours   func(s *testtypes.Shape)
		check  func(g Gomega, s *testtypes.Shape)
	}{{
		name:   "an element added to a status list of type map",
		theirs: `{"status":{"members":[{"name":"a"},{"name":"theirs"}]}}`,
		status: true,
		ours: func(s *testtypes.Shape) {
			s.Status.Members = append(s.Status.Members, testtypes.ShapePort{Name: "ours"})
		},
		check: func(g Gomega, s *testtypes.Shape) {
			g.Expect(s.Status.Members).To(Equal([]testtypes.ShapePort{{Name: "a"}, {Name: "theirs"}}))
		},
	}, {
		name:   "an element added to a status list without a list type",
		theirs: `{"status":{"notes":["a","theirs"]}}`,
		status: true,
		ours:   func(s *testtypes.Shape) { s.Status.Notes = append(s.Status.Notes, "ours") },
		check:  func(g Gomega, s *testtypes.Shape) { g.Expect(s.Status.Notes).To(Equal([]string{"a", "theirs"})) },
	}, {
		name:   "an element added to a spec list of type set",
		theirs: `{"spec":{"tags":["a","theirs"]}}`,
		ours:   func(s *testtypes.Shape) { s.Spec.Tags = append(s.Spec.Tags, "ours") },
		check:  func(g Gomega, s *testtypes.Shape) { g.Expect(s.Spec.Tags).To(Equal([]string{"a", "theirs"})) },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := newShape(t, g, testtypes.ShapeSpec{Tags: []string{"a"}},
				testtypes.ShapeStatus{Members: []testtypes.ShapePort{{Name: "a"}}, Notes: []string{"a"}})
			h, err := patch.NewHelper(s, env.Client())
			g.Expect(err).NotTo(HaveOccurred())
			mergePatchOnServer(t, g, s, tc.theirs, tc.status)

			tc.ours(s)
			err = h.Patch(t.Context(), s)
			g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
			tc.check(g, getShape(g, s))
		})
	}
}

func TestPatchNeverWritesIntoAnObjectCreatedUnderTheSameName(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	old := newWidget(t, g, "replaced")
	h, err := patch.NewHelper(old, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client().Delete(ctx, old)).To(Succeed())
	replacement := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace}}
	g.Expect(env.Client().Create(ctx, replacement)).To(Succeed())

	old.Spec.Size = "large"
	err = h.Patch(ctx, old)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(get(g, replacement).Spec.Size).To(BeEmpty())
}

func TestPatchWritesIntoAnEmptyMapThatATypedObjectCannotSee(t *testing.T) {
	// The server holds spec.labels as {}, which a typed object reads as missing.
	g := NewWithT(t)
	s := newShape(t, g, testtypes.ShapeSpec{Text: "a"}, testtypes.ShapeStatus{})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Shape"))
	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(s), u)).To(Succeed())
	g.Expect(unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "labels")).To(Succeed())
	g.Expect(env.Client().Update(t.Context(), u)).To(Succeed())
	s = getShape(g, s)
	g.Expect(s.Spec.Labels).To(BeEmpty())

	h, err := patch.NewHelper(s, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	s.Spec.Labels = map[string]string{"ours": "a"}
	g.Expect(h.Patch(t.Context(), s)).To(Succeed())
	g.Expect(getShape(g, s).Spec.Labels).To(Equal(map[string]string{"ours": "a"}))
}

func TestPatchWritesAnEmptyObjectWhosePresenceCounts(t *testing.T) {
	// As a volume's emptyDir: {} is not the same as no emptyDir.
	g := NewWithT(t)
	s := newShape(t, g, testtypes.ShapeSpec{Text: "a"}, testtypes.ShapeStatus{})
	h, err := patch.NewHelper(s, env.Client())
	g.Expect(err).NotTo(HaveOccurred())

	s.Spec.Nested = &testtypes.ShapeNested{}
	g.Expect(h.Patch(t.Context(), s)).To(Succeed())
	g.Expect(getShape(g, s).Spec.Nested).NotTo(BeNil())

	h, err = patch.NewHelper(s, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	s.Spec.Nested = nil
	g.Expect(h.Patch(t.Context(), s)).To(Succeed())
	g.Expect(getShape(g, s).Spec.Nested).To(BeNil())
}
