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

package reconciletest_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
)

// printingTB prints what a test would log, and the first lines of what would fail it. An example
// has no end at which to run cleanups, and the harness registers none, so Cleanup drops them;
// what fails it is printed, not remembered, so Failed reports false.
type printingTB struct{}

func (printingTB) Helper()                  {}
func (printingTB) Name() string             { return "Example" }
func (printingTB) Context() context.Context { return context.Background() }
func (printingTB) Cleanup(func())           {}
func (printingTB) Failed() bool             { return false }
func (printingTB) Logf(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}
func (p printingTB) Errorf(format string, args ...any) { p.Fatalf(format, args...) }
func (printingTB) Fatalf(format string, args ...any) {
	lines := strings.Split(fmt.Sprintf(format, args...), "\n")
	fmt.Println("FAIL: " + strings.Join(lines[:min(3, len(lines))], "\n"))
}

var _ reconciletest.TB = printingTB{}

// labelReconciler makes sure a ConfigMap is labelled as managed, and looks again every ten
// minutes, as requeue.Poll does; with bump, it also counts its reconciles in an annotation, which
// makes every reconcile a write.
type labelReconciler struct {
	client.Client
	bump bool
}

func (r *labelReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := cm.DeepCopy()
	metav1.SetMetaDataLabel(&cm.ObjectMeta, "app.kubernetes.io/managed-by", "example")
	if r.bump {
		n, _ := strconv.Atoi(cm.Annotations["example.com/reconciles"])
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "example.com/reconciles", strconv.Itoa(n+1))
	}
	if cm.Labels["app.kubernetes.io/managed-by"] != before.Labels["app.kubernetes.io/managed-by"] ||
		cm.Annotations["example.com/reconciles"] != before.Annotations["example.com/reconciles"] {
		if err := r.Patch(ctx, &cm, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: 10 * time.Minute}, nil
}

func ExampleHarness_AssertIdempotent() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}

	good := faults.Record(fake.NewClientBuilder().WithObjects(cm.DeepCopy()).Build())
	h := &reconciletest.Harness{Reconciler: &labelReconciler{Client: good}, Client: good}
	h.AssertIdempotent(printingTB{}, req)
	fmt.Println("the correct reconciler passes after", len(h.Steps()), "reconciles")

	bad := faults.Record(fake.NewClientBuilder().WithObjects(cm.DeepCopy()).Build())
	h = &reconciletest.Harness{Reconciler: &labelReconciler{Client: bad, bump: true}, Client: bad}
	h.AssertIdempotent(printingTB{}, req)

	// Output:
	// the correct reconciler passes after 2 reconciles
	// FAIL: reconciletest: default/settings is not idempotent: the reconcile after a finished one sent 1 write(s):
	//   patch ConfigMap default/settings: ok
	//     patch: {"metadata":{"annotations":{"example.com/reconciles":"2"}}}
}

// stampReconciler writes, in an annotation, when it last synced a ConfigMap, to the minute, by
// the clock it is given: a write on every reconcile in a later minute.
type stampReconciler struct {
	client.Client
	clock interface{ Now() time.Time }
}

func (r *stampReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	stamp := r.clock.Now().UTC().Format("15:04")
	if cm.Annotations["example.com/synced-at"] == stamp {
		return ctrl.Result{}, nil
	}
	before := cm.DeepCopy()
	metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "example.com/synced-at", stamp)
	return ctrl.Result{}, r.Patch(ctx, &cm, client.MergeFrom(before))
}

// A reconciler that reads the time from a clock the test controls gets the Harness.Clock as
// well: the harness moves it forward before the reconcile that must write nothing, here from
// 10:00:10 to 10:01, and the time the reconciler writes on every pass shows.
func ExampleHarness_AssertIdempotent_clock() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	c := faults.Record(fake.NewClientBuilder().WithObjects(cm).Build())
	clock := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 10, 0, time.UTC))
	h := &reconciletest.Harness{Reconciler: &stampReconciler{Client: c, clock: clock}, Client: c, Clock: clock}

	h.AssertIdempotent(printingTB{}, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)})
	fmt.Println("the clock is now", clock.Now().Format(time.TimeOnly))

	// Output:
	// FAIL: reconciletest: default/settings is not idempotent: the reconcile after a finished one sent 1 write(s):
	//   patch ConfigMap default/settings: ok
	//     patch: {"metadata":{"annotations":{"example.com/synced-at":"10:01"}}}
	// the clock is now 10:01:00
}

// Under a fault plan, the reconciler must recover from every fault: ReconcileUntilStable
// reconciles until a reconcile writes nothing, and logs what it took.
func ExampleHarness_ReconcileUntilStable() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	c, _ := faults.Wrap(fake.NewClientBuilder().WithObjects(cm).Build(), faults.Plan{Seed: 1, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}}, Nth: 1, Fault: faults.Conflict},
		{Match: faults.Match{Verbs: faults.Verbs{faults.Get}}, Nth: 2, Fault: faults.TooManyRequests},
	}})
	h := &reconciletest.Harness{Reconciler: &labelReconciler{Client: c}, Client: c}

	h.ReconcileUntilStable(printingTB{}, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)})
	for _, step := range h.Steps() {
		fmt.Println(step.Number, step.Outcome())
	}

	// Output:
	// reconciletest: default/settings became stable in 4 reconciles; 2 faults injected (fault plan seed 1)
	// 1 error: Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again
	// 2 error: too many requests, please try again later (injected by fault plan rule 1)
	// 3 requeue after 10m0s
	// 4 requeue after 10m0s
}

// bucketReconciler creates a bucket in an external system, which takes a while: until the
// bucket exists, it says so in an annotation and comes back in 50 ms; then it polls.
type bucketReconciler struct {
	client.Client
	readyAt time.Time // when the external system will have the bucket
}

func (r *bucketReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.readyAt.IsZero() {
		r.readyAt = time.Now().Add(50 * time.Millisecond) // the request to the external system
	}
	state, wait := "ready", 10*time.Minute
	if time.Now().Before(r.readyAt) {
		state, wait = "provisioning", time.Until(r.readyAt)
	}
	if cm.Annotations["example.com/bucket"] != state {
		before := cm.DeepCopy()
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "example.com/bucket", state)
		if err := r.Patch(ctx, &cm, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// A reconciler that waits for something asynchronous returns a short RequeueAfter: the harness
// waits it out (up to MaxWait, 10 s by default) and reconciles again, so the test sees the
// object become ready. The 10-minute poll at the end is longer than MaxWait: the harness does not
// wait for it, and the reconcile that wrote nothing is stable.
func ExampleHarness_ReconcileUntilStable_asynchronous() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bucket", Namespace: "default"}}
	c := faults.Record(fake.NewClientBuilder().WithObjects(cm).Build())
	h := &reconciletest.Harness{Reconciler: &bucketReconciler{Client: c}, Client: c}

	h.ReconcileUntilStable(printingTB{}, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)})
	for _, step := range h.Steps() {
		fmt.Printf("%d: %d write(s), stable: %v\n", step.Number, len(step.Writes()), step.Stable())
	}

	// Output:
	// 1: 1 write(s), stable: false
	// 2: 1 write(s), stable: false
	// 3: 0 write(s), stable: true
}

// A controller that runs in a manager returns its results to controller-runtime. Record wraps
// its reconciler so that a test can see them: register the Recorder instead of the reconciler.
func ExampleRecord() {
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(message) })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}
	rec := reconciletest.Record(&labelReconciler{Client: fake.NewClientBuilder().WithObjects(cm).Build()})
	// In a test: ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(rec), and
	// the manager calls Reconcile. Here the example calls it.
	_, _ = rec.Reconcile(context.Background(), req)

	g.Eventually(rec.Last).WithArguments(req).Should(matchers.BeRequeuedAfter(10 * time.Minute))
	g.Expect(rec.Steps()).NotTo(gomega.ContainElement(matchers.HaveFailed()))
	for _, step := range rec.Steps() {
		fmt.Println(step)
	}

	// Output:
	// step 1 (default/settings): requeue after 10m0s
}
