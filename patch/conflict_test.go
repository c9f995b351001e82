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
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// writerBackoff keeps the competing writers retrying their optimistic-lock updates until they
// land. (No Cap: reaching it would end the retries.)
var writerBackoff = wait.Backoff{Steps: 60, Duration: 2 * time.Millisecond, Factor: 1.08, Jitter: 1}

// update reads the latest w, changes it with mutate and writes it with Update, or with
// Status().Update when status is set, retrying on conflicts.
func update(ctx context.Context, key client.ObjectKey, status bool, mutate func(*testtypes.Widget) error) error {
	return retry.RetryOnConflict(writerBackoff, func() error {
		var w testtypes.Widget
		if err := env.Client().Get(ctx, key, &w); err != nil {
			return err
		}
		if err := mutate(&w); err != nil {
			return err
		}
		if status {
			return env.Client().Status().Update(ctx, &w)
		}
		return env.Client().Update(ctx, &w)
	})
}

func TestPatchUnderConcurrentWritersLosesNothing(t *testing.T) {
	const (
		writers    = 8
		iterations = 10
		reconciles = 30
	)
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	w := newWidget(t, g, "contended")
	key := client.ObjectKeyFromObject(w)
	// The controller's copy is stale from the start, in the finalizer list its first Patch
	// changes, so that its first Patch conflicts for sure.
	g.Expect(update(ctx, key, false, func(w *testtypes.Widget) error {
		w.Annotations = map[string]string{"example.com/created-by": "test"}
		controllerutil.AddFinalizer(w, "test.tenon.dev/setup")
		return nil
	})).To(Succeed())

	// Each writer owns a label, an annotation, a condition, a finalizer and part of the spec:
	// writers 0 to 2 one scalar field each, the others their own items of spec.items.
	writer := func(i, k int) error {
		err := update(ctx, key, false, func(w *testtypes.Widget) error {
			if w.Labels == nil {
				w.Labels = map[string]string{}
			}
			if w.Annotations == nil {
				w.Annotations = map[string]string{}
			}
			w.Labels[fmt.Sprintf("writer-%d", i)] = strconv.Itoa(k)
			w.Annotations[fmt.Sprintf("example.com/writer-%d", i)] = strconv.Itoa(k)
			controllerutil.AddFinalizer(w, fmt.Sprintf("test.tenon.dev/writer-%d", i))
			switch i {
			case 0:
				w.Spec.Size = "size-" + strconv.Itoa(k)
			case 1:
				w.Spec.Color = "color-" + strconv.Itoa(k)
			case 2:
				w.Spec.Replicas = ptr.To(int32(k))
			default:
				w.Spec.Items = append(w.Spec.Items, fmt.Sprintf("writer-%d-%d", i, k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		return update(ctx, key, true, func(w *testtypes.Widget) error {
			conditions.MarkTrue(w, conditions.Type(fmt.Sprintf("Writer%d", i)), "Iteration", strconv.Itoa(k))
			return nil
		})
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for i := range writers {
		wg.Go(func() {
			for k := range iterations {
				if err := writer(i, k); err != nil {
					errs <- fmt.Errorf("writer %d: %w", i, err)
					return
				}
			}
		})
	}

	// The controller reconciles the object it has, which is stale as soon as a writer writes:
	// its condition, a label, status.phase, and its finalizer on the first reconcile.
	var patchErrs []error
	wg.Go(func() {
		obj := w.DeepCopy()
		for r := range reconciles {
			h, err := patch.NewHelper(obj, c)
			if err != nil {
				errs <- err
				return
			}
			controllerutil.AddFinalizer(obj, "tenon.dev/controller")
			if obj.Labels == nil {
				obj.Labels = map[string]string{}
			}
			obj.Labels["controller"] = strconv.Itoa(r)
			obj.Status.Phase = "Reconcile" + strconv.Itoa(r)
			conditions.MarkTrue(obj, conditions.Ready, "Reconciled", "reconcile "+strconv.Itoa(r))
			if err := h.Patch(ctx, obj); err != nil {
				patchErrs = append(patchErrs, fmt.Errorf("reconcile %d: %w", r, err))
				continue
			}
			// The response shows the write landed.
			if got := conditions.Get(obj, conditions.Ready); got == nil || got.Message != "reconcile "+strconv.Itoa(r) {
				errs <- fmt.Errorf("reconcile %d: the response has Ready %+v", r, got)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	g.Expect(patchErrs).To(BeEmpty(), "no conflict reaches the caller")
	requests := c.take()
	t.Logf("controller requests for %d reconciles: %v", reconciles, requests)
	g.Expect(requests["get"]).To(BeNumerically(">", 0), "the test made the controller's patches conflict")

	// Field by field: every writer's last change, and the controller's.
	latest := get(g, w)
	last := strconv.Itoa(iterations - 1)
	for i := range writers {
		g.Expect(latest.Labels).To(HaveKeyWithValue(fmt.Sprintf("writer-%d", i), last))
		g.Expect(latest.Annotations).To(HaveKeyWithValue(fmt.Sprintf("example.com/writer-%d", i), last))
		g.Expect(latest.Finalizers).To(ContainElement(fmt.Sprintf("test.tenon.dev/writer-%d", i)))
		c := conditions.Get(latest, conditions.Type(fmt.Sprintf("Writer%d", i)))
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal(last), "condition of writer %d", i)
		if i > 2 {
			for k := range iterations {
				g.Expect(latest.Spec.Items).To(ContainElement(fmt.Sprintf("writer-%d-%d", i, k)))
			}
		}
	}
	g.Expect(latest.Spec.Size).To(Equal("size-" + last))
	g.Expect(latest.Spec.Color).To(Equal("color-" + last))
	g.Expect(latest.Spec.Replicas).To(Equal(ptr.To(int32(iterations - 1))))
	g.Expect(latest.Spec.Items).To(HaveLen((writers - 3) * iterations))

	final := strconv.Itoa(reconciles - 1)
	g.Expect(latest.Labels).To(HaveKeyWithValue("controller", final))
	g.Expect(latest.Status.Phase).To(Equal("Reconcile" + final))
	g.Expect(conditions.Get(latest, conditions.Ready).Message).To(Equal("reconcile " + final))
	g.Expect(latest.Finalizers).To(HaveLen(writers + 2))
	g.Expect(slices.Compact(slices.Sorted(slices.Values(latest.Finalizers)))).To(HaveLen(writers+2), "no finalizer twice")
	g.Expect(latest.Status.Conditions).To(HaveLen(writers + 1))
}
