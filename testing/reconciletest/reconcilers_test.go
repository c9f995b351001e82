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
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/reconciletest"
)

var scheme = func() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(testtypes.AddToScheme(s))
	return s
}()

// widgetReconciler is a correct reconciler: it keeps a ConfigMap with the Widget's size and
// reports Ready, writing only what changed.
type widgetReconciler struct {
	client.Client
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name + "-config"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"},
			Data:       map[string]string{"size": w.Spec.Size},
		}
		if err := r.Create(ctx, cm); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to create the config map: %w", err)
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("failed to read the config map: %w", err)
	case cm.Data["size"] != w.Spec.Size:
		cm.Data = map[string]string{"size": w.Spec.Size}
		if err := r.Update(ctx, cm); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to update the config map: %w", err)
		}
	}

	before := w.DeepCopy()
	changed := conditions.MarkTrue(&w, conditions.Ready, conditions.ReasonSucceeded, "config map is up to date")
	observed, _ := conditions.SetObservedGeneration(&w)
	if changed || observed {
		if err := r.Status().Patch(ctx, &w, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to patch the status: %w", err)
		}
	}
	return ctrl.Result{}, nil
}

// statusRewriter is the reconciler above, but it writes the status on every reconcile, whether
// or not anything changed.
type statusRewriter struct {
	widgetReconciler
}

func (r *statusRewriter) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if res, err := r.widgetReconciler.Reconcile(ctx, req); err != nil || !res.IsZero() {
		return res, err
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Status().Update(ctx, &w)
}

// annotationBumper is the reconciler above, but it counts its reconciles in an annotation.
type annotationBumper struct {
	widgetReconciler
}

func (r *annotationBumper) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if res, err := r.widgetReconciler.Reconcile(ctx, req); err != nil || !res.IsZero() {
		return res, err
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, err
	}
	n, _ := strconv.Atoi(w.Annotations["test.tenon.dev/reconciles"])
	before := w.DeepCopy()
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, "test.tenon.dev/reconciles", strconv.Itoa(n+1))
	return ctrl.Result{}, r.Patch(ctx, &w, client.MergeFrom(before))
}

// poller is the reconciler above, but it polls at steady state, as requeue.Poll does.
type poller struct {
	widgetReconciler
}

func (r *poller) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	res, err := r.widgetReconciler.Reconcile(ctx, req)
	if err != nil || !res.IsZero() {
		return res, err
	}
	return ctrl.Result{RequeueAfter: 5 * time.Minute}, nil
}

// clockStamper is widgetReconciler, but it also writes the time of the reconcile into
// status.phase, to the precision of format: "synced at 10:04:05". Two reconciles in the same
// second (or minute) write it once; every later one writes it again.
type clockStamper struct {
	widgetReconciler
	// now is the clock the reconciler reads; time.Now when nil.
	now    func() time.Time
	format string
}

func (r *clockStamper) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if res, err := r.widgetReconciler.Reconcile(ctx, req); err != nil || !res.IsZero() {
		return res, err
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, err
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	phase := "synced at " + now().UTC().Format(r.format)
	if w.Status.Phase == phase {
		return ctrl.Result{}, nil
	}
	before := w.DeepCopy()
	w.Status.Phase = phase
	return ctrl.Result{}, r.Status().Patch(ctx, &w, client.MergeFrom(before))
}

// checker is widgetReconciler, but it records in status.phase when it last checked the Widget
// and checks again, writing the new time, once a check is every due: a write that depends on the
// time and is correct, because it comes when the requeue it returns falls due.
type checker struct {
	widgetReconciler
	clock reconciletest.Clock
	every time.Duration
}

func (r *checker) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if res, err := r.widgetReconciler.Reconcile(ctx, req); err != nil || !res.IsZero() {
		return res, err
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now().UTC()
	last, err := time.Parse(time.RFC3339, w.Status.Phase)
	if err == nil && now.Sub(last) < r.every {
		return ctrl.Result{RequeueAfter: r.every - now.Sub(last)}, nil
	}
	before := w.DeepCopy()
	w.Status.Phase = now.Format(time.RFC3339)
	return ctrl.Result{RequeueAfter: r.every}, r.Status().Patch(ctx, &w, client.MergeFrom(before))
}

// provisioner provisions a Widget asynchronously, as an operator does with a cloud resource:
// the first reconcile starts the provisioning, reports it in the status and comes back when it
// should be done; once it is, the Widget is Ready and the reconciler polls.
type provisioner struct {
	client.Client
	takes   time.Duration
	started time.Time
}

func (r *provisioner) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.started.IsZero() {
		r.started = time.Now()
	}
	before := w.DeepCopy()
	var changed bool
	remaining := r.takes - time.Since(r.started)
	if remaining > 0 {
		changed = conditions.MarkFalse(&w, conditions.Ready, conditions.ReasonProgressing, "provisioning")
	} else {
		changed = conditions.MarkTrue(&w, conditions.Ready, conditions.ReasonSucceeded, "provisioned")
	}
	if observed, _ := conditions.SetObservedGeneration(&w); changed || observed {
		if err := r.Status().Patch(ctx, &w, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to patch the status: %w", err)
		}
	}
	if remaining > 0 {
		return ctrl.Result{RequeueAfter: remaining}, nil
	}
	return ctrl.Result{RequeueAfter: 5 * time.Minute}, nil
}

// scripted returns the results it is given, one per reconcile, then Done.
type scripted struct {
	results []ctrl.Result
	errs    []error
	calls   int
}

func (s *scripted) Reconcile(context.Context, reconcile.Request) (ctrl.Result, error) {
	i := s.calls
	s.calls++
	var res ctrl.Result
	var err error
	if i < len(s.results) {
		res = s.results[i]
	}
	if i < len(s.errs) {
		err = s.errs[i]
	}
	return res, err
}

// newFake returns a fake client with a Widget named w in default, recording its calls.
func newFake(t *testing.T, plan faults.Plan) (*faults.Client, reconcile.Request) {
	t.Helper()
	w := &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default", Generation: 1},
		Spec:       testtypes.WidgetSpec{Size: "small"},
	}
	inner := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testtypes.Widget{}).WithObjects(w).Build()
	return faults.New(t, inner, plan), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
}

// failureTB is a reconciletest.TB that records failures instead of failing the test, so a test
// can assert the harness's failure messages. It takes its name from the test that made it, and
// what it is given to clean up runs when that test ends.
type failureTB struct {
	t        *testing.T
	ctx      context.Context
	failures []string
	logs     []string
}

func (f *failureTB) Helper()                  {}
func (f *failureTB) Name() string             { return f.t.Name() }
func (f *failureTB) Context() context.Context { return f.ctx }
func (f *failureTB) Cleanup(fn func())        { f.t.Cleanup(fn) }
func (f *failureTB) Failed() bool             { return len(f.failures) > 0 }
func (f *failureTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// Errorf records the failure, and the goroutine goes on, as testing.T's does.
func (f *failureTB) Errorf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

// Fatalf records the failure and ends the goroutine, as testing.T's does.
func (f *failureTB) Fatalf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

var _ reconciletest.TB = (*failureTB)(nil)

// run runs fn with a failureTB in a goroutine of its own, and returns the TB once fn has
// returned or failed.
func run(t *testing.T, fn func(tb reconciletest.TB)) *failureTB {
	t.Helper()
	return runWith(t.Context(), t, fn)
}

// runWith is run with ctx as the TB's context.
func runWith(ctx context.Context, t *testing.T, fn func(tb reconciletest.TB)) *failureTB {
	t.Helper()
	tb := &failureTB{t: t, ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the harness did not return")
	}
	return tb
}

// plainSpaces replaces the non-breaking spaces go-cmp puts into diffs at random (so that tests
// do not depend on its exact output) with plain ones.
func plainSpaces(s string) string {
	return strings.ReplaceAll(s, "\u00a0", " ")
}
