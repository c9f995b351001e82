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
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{testtypes.CRDDirectory()},
		Scheme:            scheme,
		GarbageCollector:  true,
	})
	os.Exit(env.Run(m))
}

const (
	ours   = "a.example.com/cleanup"
	theirs = "b.example.com/cleanup"
)

// writeCounter wraps c and counts the requests that may write.
type writeCounter struct {
	client.Client
	writes atomic.Int32
}

func countWrites(c client.WithWatch) *writeCounter {
	wc := &writeCounter{}
	count := func() { wc.writes.Add(1) }
	wc.Client = interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, p, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			count()
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			count()
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	return wc
}

func directClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newWidget(t *testing.T, finalizers ...string) *testtypes.Widget {
	t.Helper()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: env.Namespace(t), Finalizers: finalizers}}
	if err := env.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestEnsureAndRemoveAreNoOpsWhenNothingChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := countWrites(directClient(t))
	w := newWidget(t, ours)

	added, err := finalizer.Ensure(ctx, c, w, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())
	removed, err := finalizer.Remove(ctx, c, w, theirs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeFalse())

	g.Expect(c.writes.Load()).To(BeZero(), "a steady-state reconcile must send no write")
}

func TestEnsureAddsAndRemoveRemovesWithOneWriteEach(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := countWrites(directClient(t))
	w := newWidget(t, theirs)

	added, err := finalizer.Ensure(ctx, c, w, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeTrue())
	g.Expect(c.writes.Load()).To(BeEquivalentTo(1))
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(Equal([]string{theirs, ours}))
	g.Expect(w.ResourceVersion).To(Equal(latest.ResourceVersion), "obj is updated with the object as written")

	removed, err := finalizer.Remove(ctx, c, w, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeTrue())
	g.Expect(c.writes.Load()).To(BeEquivalentTo(2))
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(Equal([]string{theirs}))
}

func TestEnsureWithAStaleObjectKeepsAFinalizerAddedMeanwhile(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := newWidget(t)
	stale := w.DeepCopy()

	// Another controller adds its finalizer after our copy was read.
	w.Finalizers = []string{theirs}
	g.Expect(env.Client().Update(ctx, w)).To(Succeed())

	added, err := finalizer.Ensure(ctx, env.Client(), stale, ours)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeTrue())
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(ConsistOf(theirs, ours))
}

func TestEnsureAddsNothingToAnObjectBeingDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := countWrites(directClient(t))
	w := newWidget(t, theirs)
	stale := w.DeepCopy()
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())

	// The caller's copy does not know about the deletion yet.
	added, err := finalizer.Ensure(ctx, c, stale, ours)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())
	g.Expect(stale.DeletionTimestamp).NotTo(BeNil(), "obj is refreshed, so the caller sees the deletion")
	g.Expect(stale.Finalizers).To(Equal([]string{theirs}))
	var latest testtypes.Widget
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(latest.Finalizers).To(Equal([]string{theirs}))

	// A copy that knows about the deletion sends nothing at all.
	before := c.writes.Load()
	added, err = finalizer.Ensure(ctx, c, &latest, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(added).To(BeFalse())
	g.Expect(c.writes.Load()).To(Equal(before))
}

func TestRemovingTheLastFinalizerLetsTheObjectGo(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	w := newWidget(t, ours)
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())

	removed, err := finalizer.Remove(ctx, env.Client(), w, ours)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeTrue())
	err = env.Client().Get(ctx, client.ObjectKeyFromObject(w), &testtypes.Widget{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)

	// Later calls with the old copy find nothing to do and no error.
	stale := w.DeepCopy()
	stale.Finalizers = []string{ours}
	removed, err = finalizer.Remove(ctx, env.Client(), stale, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeTrue())
	added, err := finalizer.Ensure(ctx, env.Client(), &testtypes.Widget{ObjectMeta: w.ObjectMeta}, ours)
	g.Expect(err).NotTo(HaveOccurred(), "a copy that says it is being deleted needs no write")
	g.Expect(added).To(BeFalse())
}

// TestTwoWritersRaceWithoutLosingFinalizers has controller A add and remove its finalizer with a
// copy of the object that is stale most of the time, while controller B adds and removes its own
// finalizer with fresh reads. A watch records every version of the object; afterwards each
// version is checked against what B had confirmed by then.
func TestTwoWritersRaceWithoutLosingFinalizers(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	const iterations = 200
	w := newWidget(t)
	key := client.ObjectKeyFromObject(w)

	watcher, err := directClient(t).Watch(ctx, &testtypes.WidgetList{}, client.InNamespace(w.Namespace))
	g.Expect(err).NotTo(HaveOccurred())
	defer watcher.Stop()
	var versions []testtypes.Widget
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range watcher.ResultChan() {
			if obj, ok := ev.Object.(*testtypes.Widget); ok && ev.Type == watch.Modified && obj.Name == w.Name {
				versions = append(versions, *obj)
			}
			if obj, ok := ev.Object.(*testtypes.Widget); ok && obj.Labels["done"] == "true" {
				return
			}
		}
	}()

	// bWrites records B's writes in order: resourceVersion and whether B's finalizer is now on.
	type write struct {
		rv      uint64
		present bool
	}
	var bWrites []write
	var wg sync.WaitGroup
	wg.Add(2)
	var aErr, bErr error
	var aConflicts atomic.Int32
	go func() { // controller A: tenon, with a copy refreshed only by its own writes
		defer wg.Done()
		stale := w.DeepCopy()
		// A conflict that outlasts the retries is what a controller requeues quietly and tries
		// again: do the same, and count them.
		persist := func(op func(context.Context, client.Client, client.Object, string) (bool, error)) (bool, error) {
			for {
				done, err := op(ctx, env.Client(), stale, ours)
				if requeue.Classify(err) != requeue.ClassConflict {
					return done, err
				}
				aConflicts.Add(1)
			}
		}
		for i := range iterations {
			if added, err := persist(finalizer.Ensure); err != nil || !added {
				aErr = fmt.Errorf("iteration %d: Ensure = %v, %w", i, added, err)
				return
			}
			if removed, err := persist(finalizer.Remove); err != nil || !removed {
				aErr = fmt.Errorf("iteration %d: Remove = %v, %w", i, removed, err)
				return
			}
		}
	}()
	// B retries conflicts for as long as it takes: it is the other writer, not the subject.
	patient := wait.Backoff{Steps: 1000, Duration: time.Millisecond, Factor: 1.1, Jitter: 1, Cap: 50 * time.Millisecond}
	go func() { // controller B: read-modify-write with retry on conflict
		defer wg.Done()
		for i := range iterations {
			for _, present := range []bool{true, false} {
				var latest testtypes.Widget
				err := retry.RetryOnConflict(patient, func() error {
					if err := env.Client().Get(ctx, key, &latest); err != nil {
						return err
					}
					latest.Finalizers = slices.DeleteFunc(latest.Finalizers, func(f string) bool { return f == theirs })
					if present {
						latest.Finalizers = append(latest.Finalizers, theirs)
					}
					return env.Client().Update(ctx, &latest)
				})
				if err != nil {
					bErr = fmt.Errorf("iteration %d: %w", i, err)
					return
				}
				rv, _ := strconv.ParseUint(latest.ResourceVersion, 10, 64)
				bWrites = append(bWrites, write{rv: rv, present: present})
			}
		}
	}()
	wg.Wait()
	g.Expect(aErr).NotTo(HaveOccurred())
	g.Expect(bErr).NotTo(HaveOccurred())

	// Mark the end for the watcher and wait for it to have seen every version.
	var final testtypes.Widget
	g.Expect(env.Client().Get(ctx, key, &final)).To(Succeed())
	final.Labels = map[string]string{"done": "true"}
	g.Expect(env.Client().Update(ctx, &final)).To(Succeed())
	g.Eventually(watched).WithTimeout(30 * time.Second).Should(BeClosed())

	g.Expect(final.Finalizers).To(BeEmpty(), "both controllers removed their finalizers in the end")
	g.Expect(len(bWrites)).To(Equal(2 * iterations))
	aSeen := 0
	for _, v := range versions {
		rv, _ := strconv.ParseUint(v.ResourceVersion, 10, 64)
		// B's state at this version is that of B's last write at or before it.
		wantB := false
		for _, bw := range bWrites {
			if bw.rv > rv {
				break
			}
			wantB = bw.present
		}
		counts := map[string]int{}
		for _, f := range v.Finalizers {
			counts[f]++
		}
		g.Expect(counts[theirs]).To(Equal(map[bool]int{true: 1, false: 0}[wantB]),
			"version %d: B's finalizer must be present exactly when B last put it there: %v", rv, v.Finalizers)
		g.Expect(counts[ours]).To(BeNumerically("<=", 1), "version %d: duplicated: %v", rv, v.Finalizers)
		if counts[ours] == 1 {
			aSeen++
		}
	}
	g.Expect(aSeen).To(BeNumerically(">=", iterations), "every one of A's additions landed")
	t.Logf("%d versions checked; A's calls ran out of retries %d times in %d calls", len(versions), aConflicts.Load(), 2*iterations)
}
