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
	"os"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{testtypes.CRDDirectory()}, Scheme: scheme})
	os.Exit(env.Run(m))
}

// onEnvtest returns a harness whose reconciler reads through a manager's cache and writes to
// the envtest API server, as a controller does, and a Widget request in a namespace of the
// test's own.
func onEnvtest(t *testing.T, plan faults.Plan, reconciler func(client.Client) reconcile.Reconciler) (*reconciletest.Harness, reconcile.Request) {
	t.Helper()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}, Spec: testtypes.WidgetSpec{Size: "small"}}
	if err := env.Client().Create(t.Context(), w); err != nil {
		t.Fatalf("failed to create the widget: %v", err)
	}
	mgr := env.NewManager(t, ctrl.Options{})
	testenv.StartManager(t, mgr)
	c := faults.New(t, mgr.GetClient(), plan)
	h := &reconciletest.Harness{
		Reconciler: reconciler(c),
		Client:     c,
		Cache:      mgr.GetCache(),
		Reader:     env.Client(),
		MaxSteps:   20,
	}
	return h, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
}

func TestAssertIdempotentPassesForACorrectReconcilerReadingFromACache(t *testing.T) {
	g := NewWithT(t)
	h, req := onEnvtest(t, faults.Plan{}, func(c client.Client) reconcile.Reconciler { return &widgetReconciler{Client: c} })

	h.AssertIdempotent(t, req)

	// Had the harness not waited for the cache, the second reconcile could have missed the config
	// map the first one created, and failed to create it again (see
	// TestWithoutWaitingForTheCacheTheNextReconcileReadsStaleObjects).
	g.Expect(h.Steps()).To(HaveLen(2))
	g.Expect(h.Client.Count(faults.Writes)).To(Equal(2))
	g.Expect(h.Client.Count(faults.Writes, faults.Failed)).To(BeZero(), "no write failed, in particular no create of an existing config map")
	var w testtypes.Widget
	g.Expect(env.Client().Get(t.Context(), req.NamespacedName, &w)).To(Succeed())
	g.Expect(&w).To(matchers.BeReady())
	g.Expect(&w).To(matchers.HaveKStatus(conditions.KStatusCurrent))
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(t.Context(), client.ObjectKey{Namespace: req.Namespace, Name: "w-config"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(HaveKeyWithValue("size", "small"))
}

func TestAssertIdempotentCatchesAnAnnotationBumpOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	h, req := onEnvtest(t, faults.Plan{}, func(c client.Client) reconcile.Reconciler {
		return &annotationBumper{widgetReconciler{Client: c}}
	})

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(HaveLen(1))
	g.Expect(plainSpaces(tb.failures[0])).To(And(
		HavePrefix("reconciletest: "+req.String()+" is not idempotent: the reconcile after a finished one sent 1 write(s):\n"+
			"  patch Widget "+req.String()+": ok\n"+
			`    patch: {"metadata":{"annotations":{"test.tenon.dev/reconciles":"2"}}}`+"\n"+
			"    object diff (-before +after):\n"),
		MatchRegexp(`\n\s+-\s+"annotations": .*"test.tenon.dev/reconciles": string\("1"\)}`),
	))
}

func TestAssertIdempotentCatchesAStatusRewriteOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	h, req := onEnvtest(t, faults.Plan{}, func(c client.Client) reconcile.Reconciler {
		return &statusRewriter{widgetReconciler{Client: c}}
	})

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(ConsistOf(HavePrefix("reconciletest: " + req.String() + " is not idempotent: the reconcile after a finished one sent 1 write(s):\n" +
		"  update Widget " + req.String() + " status: ok\n" +
		"    the object did not change: the request was sent although the object was already as desired\n")))
}

// A reconciler that writes the time to the second passed AssertIdempotent when the harness ran
// the reconcile that must write nothing in the same second as the one before it (issue 26,
// item 9).
func TestAssertIdempotentCatchesAStatusComputedFromTheClockOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	h, req := onEnvtest(t, faults.Plan{}, func(c client.Client) reconcile.Reconciler {
		return &clockStamper{widgetReconciler: widgetReconciler{Client: c}, format: "15:04:05"}
	})

	tb := run(t, func(tb reconciletest.TB) { h.AssertIdempotent(tb, req) })

	g.Expect(tb.failures).To(HaveLen(1), "the status says when it was synced, to the second: every reconcile in a later second writes")
	msg := plainSpaces(tb.failures[0])
	g.Expect(msg).To(HavePrefix("reconciletest: " + req.String() + " is not idempotent: the reconcile after a finished one sent 1 write(s):\n" +
		"  patch Widget " + req.String() + " status: ok\n" +
		`    patch: {"status":{"phase":"synced at `))
	g.Expect(msg).To(MatchRegexp(`\nThat reconcile started at \d\d:\d\d:\d\d\.\d{3}, in a later second than the end of the finished reconcile 1 \(\d\d:\d\d:\d\d\.\d{3}\)\. ` +
		`A value computed from the time and written on every reconcile \(a timestamp, "synced at \.\.\."\) makes a reconciler write forever`))
	steps := h.Steps()
	g.Expect(steps).To(HaveLen(2))
	first, last := steps[0].Writes(), steps[1].Writes()
	g.Expect(string(last[0].Patch)).NotTo(Equal(string(first[len(first)-1].Patch)),
		"the last reconcile ran in a later second than the one before, and wrote another time")
}

func TestReconcileUntilStableUnderAFaultPlanOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	h, req := onEnvtest(t, faults.Plan{Seed: 5, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Subresource: "status"}, Nth: 1, Fault: faults.Conflict},
		{Match: faults.Match{Verbs: faults.Verbs{faults.Create}, Kind: "ConfigMap"}, Nth: 1, Fault: faults.Timeout, LostResponse: true},
		{Match: faults.Match{Verbs: faults.Reads}, Probability: 0.2, Fault: faults.TooManyRequests},
	}}, func(c client.Client) reconcile.Reconciler { return &widgetReconciler{Client: c} })

	steps := h.ReconcileUntilStable(t, req)

	g.Expect(steps).To(BeNumerically(">=", 3), "a lost create and a conflict cost a reconcile each")
	g.Expect(h.Client.Count(faults.Injected)).To(BeNumerically(">=", 2))
	var w testtypes.Widget
	g.Expect(env.Client().Get(t.Context(), req.NamespacedName, &w)).To(Succeed())
	g.Expect(&w).To(matchers.BeReady())
}
