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
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"
)

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: name}}
}

func TestARecorderRecordsWhatTheReconcilerReturned(t *testing.T) {
	g := NewWithT(t)
	boom := errors.New("boom")
	rec := reconciletest.Record(reconcile.Func(func(_ context.Context, req reconcile.Request) (ctrl.Result, error) {
		switch req.Name {
		case "fails":
			return ctrl.Result{}, boom
		case "invalid":
			return ctrl.Result{}, reconcile.TerminalError(boom)
		case "polls":
			return ctrl.Result{RequeueAfter: time.Minute}, nil
		}
		return ctrl.Result{}, nil
	}))

	for _, name := range []string{"polls", "done", "fails", "invalid", "polls"} {
		_, _ = rec.Reconcile(t.Context(), request(name))
	}

	steps := rec.Steps()
	g.Expect(steps).To(HaveLen(5))
	g.Expect(steps[0]).To(matchers.BeRequeuedAfter(time.Minute))
	g.Expect(steps[1]).To(matchers.BeDone())
	g.Expect(steps[2]).To(matchers.HaveFailed())
	g.Expect(steps[2].Err).To(MatchError(boom))
	g.Expect(steps[3]).To(matchers.BeTerminal())
	g.Expect(steps).To(ContainElement(matchers.HaveFailed()), "the matchers work on the list too")
	g.Expect(rec.Last(request("polls"))).To(HaveField("Number", 5))
	g.Expect(rec.Last(request("polls")).String()).To(Equal("step 5 (default/polls): requeue after 1m0s"))
	g.Expect(rec.Last(request("never"))).To(BeNil())
}

func TestARecorderReturnsWhatTheReconcilerReturned(t *testing.T) {
	g := NewWithT(t)
	boom := errors.New("boom")
	rec := reconciletest.Record(reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		return ctrl.Result{RequeueAfter: time.Second}, boom
	}))

	res, err := rec.Reconcile(t.Context(), request("w"))

	g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: time.Second}))
	g.Expect(err).To(BeIdenticalTo(boom))
}

func TestARecorderTurnsAPanicIntoAnError(t *testing.T) {
	g := NewWithT(t)
	var unset reconcile.Reconciler
	rec := reconciletest.Record(reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
		return unset.Reconcile(ctx, req) // a nil interface: panics
	}))

	_, err := rec.Reconcile(t.Context(), request("w"))

	g.Expect(err).To(MatchError(HavePrefix("panic: runtime error: invalid memory address or nil pointer dereference [recovered]")))
	g.Expect(rec.Last(request("w"))).To(matchers.HaveFailed())
}

func TestARecorderIsSafeForConcurrentReconciles(t *testing.T) {
	g := NewWithT(t)
	rec := reconciletest.Record(reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		return ctrl.Result{}, nil
	}))

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 25 {
				_, _ = rec.Reconcile(t.Context(), request(fmt.Sprintf("w-%d-%d", i, j)))
				_ = rec.Last(request("w-0-0"))
			}
		})
	}
	wg.Wait()

	steps := rec.Steps()
	g.Expect(steps).To(HaveLen(200))
	for i, s := range steps {
		g.Expect(s.Number).To(Equal(i+1), "steps are numbered in the order they returned")
	}
}

func TestStepMatchersOnNoStepYet(t *testing.T) {
	g := NewWithT(t)
	var none *reconciletest.Step
	m := matchers.BeDone()

	ok, err := m.Match(none)

	g.Expect(ok).To(BeFalse())
	g.Expect(err).To(MatchError("there is no reconcile to match yet (a nil *reconciletest.Step, as Recorder.Last returns before the first)"))
	g.Expect(m.FailureMessage(none)).To(HavePrefix("Expected a reconcile to be done\nbut there is no reconcile"))
}

// A Recorder in a running controller shows what the controller returned to controller-runtime,
// for each request, without reading logs or metrics.
func TestARecorderInARunningManagerOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	rec := reconciletest.Record(&poller{widgetReconciler{Client: mgr.GetClient()}})
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named("widget").Complete(rec)).To(Succeed())
	testenv.StartManager(t, mgr)

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}, Spec: testtypes.WidgetSpec{Size: "small"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}

	g.Eventually(rec.Last).WithArguments(req).WithTimeout(30 * time.Second).Should(matchers.BeRequeuedAfter(5 * time.Minute))
	g.Expect(rec.Steps()).To(HaveEach(HaveField("Request", req)), "the manager's cache holds the test's namespace only")
	g.Expect(rec.Steps()).NotTo(ContainElement(matchers.HaveFailed()))
}
