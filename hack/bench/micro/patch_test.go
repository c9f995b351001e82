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

package micro

import (
	"context"
	"testing"

	fluxpatch "github.com/fluxcd/pkg/runtime/patch"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	capipatch "sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
	"github.com/tenon-dev/tenon/hack/bench/contender"
)

// patcher is one library's way of writing a reconcile's changes: read the object, change it
// with mutate, write what changed.
type patcher struct {
	lib   string
	patch func(ctx context.Context, c client.Client, key types.NamespacedName, mutate func(*benchv1.Widget)) error
}

// ownedTypes are the controller's condition types, for tenon's helper.
var ownedTypes = func() patch.OwnedConditions {
	var out patch.OwnedConditions
	for _, t := range contender.OwnedTypes {
		out = append(out, conditions.Type(t))
	}
	return out
}()

// patchers lists the libraries, the baseline first. Each reads the object from the client
// first, as a reconcile does; controllerutil.CreateOrPatch does that itself.
var patchers = []patcher{
	{"controllerutil", func(ctx context.Context, c client.Client, key types.NamespacedName, mutate func(*benchv1.Widget)) error {
		w := &benchv1.Widget{}
		w.Name, w.Namespace = key.Name, key.Namespace
		_, err := controllerutil.CreateOrPatch(ctx, c, w, func() error { mutate(w); return nil })
		return err
	}},
	{"tenon", func(ctx context.Context, c client.Client, key types.NamespacedName, mutate func(*benchv1.Widget)) error {
		w := &benchv1.Widget{}
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		h, err := patch.NewHelper(w, c)
		if err != nil {
			return err
		}
		mutate(w)
		w.Status.ObservedGeneration = w.Generation
		return h.Patch(ctx, w, ownedTypes)
	}},
	{"flux", func(ctx context.Context, c client.Client, key types.NamespacedName, mutate func(*benchv1.Widget)) error {
		w := &benchv1.Widget{}
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		h, err := fluxpatch.NewHelper(w, c)
		if err != nil {
			return err
		}
		mutate(w)
		return h.Patch(ctx, w, fluxpatch.WithOwnedConditions{Conditions: contender.OwnedTypes}, fluxpatch.WithStatusObservedGeneration{})
	}},
	{"cluster-api", func(ctx context.Context, c client.Client, key types.NamespacedName, mutate func(*benchv1.Widget)) error {
		w := &benchv1.Widget{}
		if err := c.Get(ctx, key, w); err != nil {
			return err
		}
		h, err := capipatch.NewHelper(w, c)
		if err != nil {
			return err
		}
		mutate(w)
		return h.Patch(ctx, w, capipatch.WithOwnedConditions{Conditions: contender.OwnedTypes}, capipatch.WithStatusObservedGeneration{})
	}},
}

// BenchmarkPatch measures one reconcile's write with each library's patch helper, on
// controller-runtime's fake client (so the figure is the helper's computation plus the fake
// client's work, which is the same for every library, not an API server's):
//
//   - op=noop: nothing changed, nothing is sent;
//   - op=status: one condition's message changed;
//   - op=spec+status: spec.color and one condition's message changed.
func BenchmarkPatch(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := benchv1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		op     string
		mutate func(i int) func(*benchv1.Widget)
	}{
		{"noop", func(int) func(*benchv1.Widget) { return func(*benchv1.Widget) {} }},
		{"status", func(i int) func(*benchv1.Widget) {
			return func(w *benchv1.Widget) { w.Status.Conditions[1].Message = message(i) }
		}},
		{"spec+status", func(i int) func(*benchv1.Widget) {
			return func(w *benchv1.Widget) {
				w.Spec.Color = message(i)
				w.Status.Conditions[1].Message = message(i)
			}
		}},
	}
	ctx := context.Background()
	for _, p := range patchers {
		for _, tc := range cases {
			b.Run("lib="+p.lib+"/op="+tc.op, func(b *testing.B) {
				w := readyWidget()
				w.Finalizers = []string{contender.Finalizer}
				c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(w).WithStatusSubresource(&benchv1.Widget{}).Build()
				key := client.ObjectKeyFromObject(w)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := p.patch(ctx, c, key, tc.mutate(i)); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// message alternates between two values, so that every write changes something.
func message(i int) string {
	if i%2 == 0 {
		return "even"
	}
	return "odd"
}
