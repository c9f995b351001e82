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
	"strconv"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// benchClient returns a fake client holding a Widget with three conditions, which counts the
// writes sent through it into writes.
func benchClient(b *testing.B, writes *atomic.Int64) (client.Client, *testtypes.Widget) {
	b.Helper()
	now := metav1.Unix(1_700_000_000, 0)
	w := &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default", Labels: map[string]string{"app": "bench"}, Finalizers: []string{"tenon.dev/bench"}},
		Spec:       testtypes.WidgetSpec{Size: "small", Items: []string{"a", "b"}},
		Status: testtypes.WidgetStatus{Phase: "Running", Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "0", LastTransitionTime: now},
			{Type: "Available", Status: metav1.ConditionTrue, Reason: "Available", LastTransitionTime: now},
			{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced", LastTransitionTime: now},
		}},
	}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testScheme()).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(w).Build(), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			writes.Add(1)
			return c.Patch(ctx, obj, p, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			writes.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	if err := c.Get(b.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		b.Fatal(err)
	}
	return c, w
}

// BenchmarkPatch measures a reconcile's write of a Widget through the fake client: the patch
// helper against the usual hand-written baseline, client.MergeFrom patches of the main resource
// and the status, each sent only when something changed (compared with
// equality.Semantic.DeepEqual, as CreateOrPatch does). The baseline is not conflict-safe: its
// merge patches replace the whole conditions and finalizers lists. The fake client's own cost
// dominates the requests; BenchmarkCompute measures the helper's.
func BenchmarkPatch(b *testing.B) {
	for _, tc := range []struct {
		name   string
		mutate func(w *testtypes.Widget, i int)
	}{
		{"no-op", func(*testtypes.Widget, int) {}},
		{"status only", func(w *testtypes.Widget, i int) {
			conditions.MarkTrue(w, conditions.Ready, "Ready", strconv.Itoa(i+1))
		}},
		{"spec and status", func(w *testtypes.Widget, i int) {
			w.Spec.Size = strconv.Itoa(i)
			conditions.MarkTrue(w, conditions.Ready, "Ready", strconv.Itoa(i+1))
		}},
	} {
		b.Run(tc.name+"/helper", func(b *testing.B) {
			var writes atomic.Int64
			c, w := benchClient(b, &writes)
			ctx := b.Context()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				h, err := patch.NewHelper(w, c)
				if err != nil {
					b.Fatal(err)
				}
				tc.mutate(w, i)
				if err := h.Patch(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(writes.Load())/float64(b.N), "requests/op")
		})
		b.Run(tc.name+"/mergefrom", func(b *testing.B) {
			var writes atomic.Int64
			c, w := benchClient(b, &writes)
			ctx := b.Context()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				before := w.DeepCopy()
				tc.mutate(w, i)
				status := w.Status.DeepCopy()
				if !equalIgnoringStatus(before, w) {
					if err := c.Patch(ctx, w, client.MergeFrom(before)); err != nil {
						b.Fatal(err)
					}
					// The response reset the status to the server's; put the change back.
					w.Status = *status
				}
				if !equalStatus(before, w) {
					if err := c.Status().Patch(ctx, w, client.MergeFrom(before)); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(writes.Load())/float64(b.N), "requests/op")
		})
	}
}

func equalIgnoringStatus(a, b *testtypes.Widget) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	a.Status, b.Status = testtypes.WidgetStatus{}, testtypes.WidgetStatus{}
	return equalObjects(a, b)
}

func equalStatus(a, b *testtypes.Widget) bool {
	return equalObjects(&testtypes.Widget{Status: a.Status}, &testtypes.Widget{Status: b.Status})
}

func equalObjects(a, b runtime.Object) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// BenchmarkApply measures applying an unchanged Deployment on envtest: the Applier, which reads
// the live object and skips the request, against the baseline of sending the apply every time.
// (The fake client is no ground for it: its answers to an apply do not prove a fixed point as
// the API server's do, so the Applier sends every apply to it.)
func BenchmarkApply(b *testing.B) {
	desired := desiredDeployment(env.Namespace(b), 3).(*appsv1.Deployment)
	c := &countingApplies{Client: env.Client()}
	applies := &c.applies
	a := patch.NewApplier(c, "bench", patch.ApplierOptions{})
	for range 2 { // the second apply proves the fixed point the first one reached
		if _, err := a.Apply(b.Context(), desired.DeepCopy()); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("no-op/applier", func(b *testing.B) {
		applies.Store(0)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			changed, err := a.Apply(ctx, desired.DeepCopy())
			if err != nil || changed {
				b.Fatal(changed, err)
			}
		}
		b.ReportMetric(float64(applies.Load())/float64(b.N), "requests/op")
	})
	b.Run("no-op/client.Apply", func(b *testing.B) {
		applies.Store(0)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			u, err := runtimeToApplyConfiguration(desired.DeepCopy())
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Apply(ctx, u, client.FieldOwner("bench")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(applies.Load())/float64(b.N), "requests/op")
	})
}

// countingApplies counts the apply requests sent through it.
type countingApplies struct {
	client.Client
	applies atomic.Int64
}

func (c *countingApplies) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.applies.Add(1)
	return c.Client.Apply(ctx, obj, opts...)
}

// Patch counts a patch of the apply type, the Applier's apply of a typed object.
func (c *countingApplies) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	if isApply(p) {
		c.applies.Add(1)
	}
	return c.Client.Patch(ctx, obj, p, opts...)
}

// runtimeToApplyConfiguration converts a typed object into the apply configuration a
// hand-written controller would send.
func runtimeToApplyConfiguration(obj *appsv1.Deployment) (runtime.ApplyConfiguration, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	unstructured.RemoveNestedField(u.Object, "status")
	return client.ApplyConfigurationFromUnstructured(u), nil
}
