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
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(s))
	return s
}

// fakeWidget returns a Widget stored in a fake client with a status subresource, the client
// wrapped with funcs, and the Widget as read through it.
func fakeWidget(t *testing.T, funcs interceptor.Funcs) (*testtypes.Widget, client.Client) {
	t.Helper()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default"}}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testScheme()).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(w).Build(), funcs)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	return w, c
}

var conflict = apierrors.NewConflict(schema.GroupResource{Group: "test.tenon.dev", Resource: "widgets"}, "w", errors.New("the object has been modified"))

func TestNewHelperRejectsWhatItCannotPatch(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme()).Build()
	for _, tc := range []struct {
		name string
		obj  client.Object
		c    client.Client
	}{
		{"a nil object", nil, c},
		{"a typed nil object", (*testtypes.Widget)(nil), c},
		{"a nil client", &testtypes.Widget{}, nil},
		{"a type the scheme does not know", &corev1.ConfigMap{}, c},
		{"an unstructured object without a kind", &unstructured.Unstructured{Object: map[string]any{}}, c},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			h, err := patch.NewHelper(tc.obj, tc.c)
			g.Expect(err).To(MatchError(ContainSubstring("failed to create a patch helper")))
			g.Expect(h).To(BeNil())
		})
	}
}

func TestPatchRejectsAnotherObject(t *testing.T) {
	g := NewWithT(t)
	w, c := fakeWidget(t, interceptor.Funcs{})
	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	other := w.DeepCopy()
	other.Name = "other"
	g.Expect(h.Patch(t.Context(), other)).To(MatchError(ContainSubstring("the helper was created for")))
	g.Expect(h.Patch(t.Context(), nil)).To(MatchError(ContainSubstring("the object is nil")))
}

func TestPatchRetriesConflicts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		conflicts int
		wantErr   bool
		wantCalls int
	}{
		{name: "a conflict resolved by a retry is not an error", conflicts: 1, wantCalls: 2},
		{name: "conflicts up to the last retry are not an error", conflicts: 5, wantCalls: 6},
		{name: "when retries run out the error is a conflict", conflicts: 10, wantErr: true, wantCalls: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			calls := 0
			w, c := fakeWidget(t, interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					calls++
					if calls <= tc.conflicts {
						return conflict
					}
					return c.SubResource(sub).Patch(ctx, obj, p, opts...)
				},
			})
			h, err := patch.NewHelper(w, c)
			g.Expect(err).NotTo(HaveOccurred())
			conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")

			err = h.Patch(t.Context(), w)
			g.Expect(calls).To(Equal(tc.wantCalls))
			if !tc.wantErr {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring("after 6 attempts")))
			g.Expect(apierrors.IsConflict(err)).To(BeTrue())
			g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassConflict))
			g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue(), "obj keeps the unwritten change")
		})
	}
}

func TestPatchReturnsOtherErrorsAsTheyAre(t *testing.T) {
	g := NewWithT(t)
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "test.tenon.dev", Kind: "Widget"}, "w",
		field.ErrorList{field.Invalid(field.NewPath("spec", "size"), "huge", "must be small or large")})
	patches := 0
	w, c := fakeWidget(t, interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			patches++
			return invalid
		},
	})
	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	w.Spec.Size = "huge"
	err = h.Patch(t.Context(), w)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err).To(MatchError(ContainSubstring("failed to patch Widget default/w")))
	g.Expect(patches).To(Equal(1), "an invalid request is not retried")
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassInvalid))
}

func TestPatchStopsWaitingWhenTheContextIsDone(t *testing.T) {
	g := NewWithT(t)
	w, c := fakeWidget(t, interceptor.Funcs{
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return conflict
		},
	})
	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	w.Status.Phase = "Running"
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = h.Patch(ctx, w)
	g.Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "got %v", err)
}

func TestPatchSendsTheFieldOwnerOfItsClient(t *testing.T) {
	g := NewWithT(t)
	var owners []string
	w, c := fakeWidget(t, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			owners = append(owners, (&client.PatchOptions{}).ApplyOptions(opts).FieldManager)
			return c.Patch(ctx, obj, p, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			o := &client.SubResourcePatchOptions{}
			for _, opt := range opts {
				opt.ApplyToSubResourcePatch(o)
			}
			owners = append(owners, o.FieldManager)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	h, err := patch.NewHelper(w, client.WithFieldOwner(c, "widget-controller"))
	g.Expect(err).NotTo(HaveOccurred())
	w.Spec.Size = "large"
	w.Status.Phase = "Resizing"
	g.Expect(h.Patch(t.Context(), w)).To(Succeed())
	g.Expect(owners).To(Equal([]string{"widget-controller", "widget-controller"}))
}

// countingReader counts the reads it serves.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

func TestPatchReadsTheLatestObjectFromTheGivenReader(t *testing.T) {
	g := NewWithT(t)
	patched := 0
	w, c := fakeWidget(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patched++
			if patched == 1 {
				return conflict
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	apiReader := &countingReader{Reader: c}
	h, err := patch.NewWriter(c, patch.WriterOptions{APIReader: apiReader}).NewHelper(w)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")

	g.Expect(h.Patch(t.Context(), w)).To(Succeed())

	g.Expect(apiReader.gets).To(Equal(1), "the conflict re-read goes to the given reader")
	g.Expect(patched).To(Equal(2))
}

func TestADroppedConditionIsRemovedAloneAndTheOthersAreNotTestedWhole(t *testing.T) {
	g := NewWithT(t)
	var sent []map[string]any
	w, c := fakeWidget(t, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := p.Data(obj)
			var ops []map[string]any
			_ = json.Unmarshal(data, &ops)
			sent = append(sent, ops...)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	ctx := t.Context()
	conditions.MarkFalse(w, conditions.Ready, "Starting", "")
	conditions.MarkTrue(w, "Synced", "Synced", "written by another controller")
	conditions.MarkReconciling(w, "Starting", "")
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	g.Expect(w.Status.Conditions).To(HaveLen(3))

	h, err := patch.NewHelper(w, c)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(w, conditions.Ready, "Running", "")
	conditions.Delete(w, conditions.Reconciling)
	g.Expect(h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready, conditions.Reconciling})).To(Succeed())

	var ops []string
	for _, o := range sent {
		ops = append(ops, fmt.Sprint(o["op"], " ", o["path"]))
	}
	g.Expect(ops).To(ConsistOf(
		"test /status/conditions/0/type", "test /status/conditions/0/status", "test /status/conditions/0/lastTransitionTime",
		"replace /status/conditions/0",
		"test /status/conditions/1/type", "remove /status/conditions/1",
		"test /status/conditions/2/type",
	), "Reconciling is removed alone; Synced, another controller's, is tested by its type only (it is still there), not touched")

	latest := &testtypes.Widget{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), latest)).To(Succeed())
	g.Expect(conditions.Get(latest, conditions.Reconciling)).To(BeNil())
	g.Expect(latest).To(SatisfyAll(
		matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue, matchers.WithReason("Running")),
		matchers.HaveCondition("Synced", metav1.ConditionTrue, matchers.WithMessage("written by another controller")),
	))
}
