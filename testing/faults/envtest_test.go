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

package faults_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{testtypes.CRDDirectory()}, Scheme: scheme})
	os.Exit(env.Run(m))
}

// envtestBackend gives each test a client of the envtest API server that can watch, and a
// namespace of its own.
func envtestBackend(t *testing.T) (client.Client, string) {
	t.Helper()
	c, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to create a client: %v", err)
	}
	return c, env.Namespace(t)
}

func TestEachFaultKindOnEnvtest(t *testing.T) { proveFaultKinds(t, envtestBackend) }

func TestALostResponseWritesAndFailsOnEnvtest(t *testing.T) { proveLostResponse(t, envtestBackend) }

func TestLatencyOnEnvtest(t *testing.T) { proveLatency(t, envtestBackend) }

func TestNotFoundOnTheFirstGetAfterDeleteOnEnvtest(t *testing.T) {
	proveNotFoundAfterDelete(t, envtestBackend)
}

func TestARealConflictIsRecordedAsFailedNotInjected(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	inner, ns := envtestBackend(t)
	c := faults.Record(inner)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	stale := w.DeepCopy()
	w.Spec.Size = "small"
	g.Expect(c.Update(ctx, w)).To(Succeed())

	stale.Spec.Size = "large"
	err := c.Update(ctx, stale)

	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
	updates := c.Calls(faults.Update)
	g.Expect(updates).To(HaveLen(2))
	g.Expect(updates[0].ResourceVersion).To(Equal(w.ResourceVersion))
	g.Expect(updates[1].Outcome).To(Equal(faults.Failed))
	g.Expect(updates[1].Forwarded).To(BeTrue())
	g.Expect(c.Count(faults.Injected)).To(BeZero())
}

func TestAWatchCanBeFaultedOnEnvtest(t *testing.T) {
	g := NewWithT(t)
	inner, ns := envtestBackend(t)
	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Watch}}, Nth: 1, Fault: faults.TooManyRequests},
	}})

	_, err := c.Watch(t.Context(), &testtypes.WidgetList{}, client.InNamespace(ns))
	g.Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "%v", err)

	w, err := c.Watch(t.Context(), &testtypes.WidgetList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	w.Stop()
	g.Expect(c.Calls(faults.Watch)).To(HaveLen(2))
}

// readyReconciler marks the Widgets of one namespace Ready with a status update, which
// conflicts when its read was stale.
type readyReconciler struct {
	client.Client
	namespace string
}

func (r *readyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return ctrl.Result{}, nil
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.Status.Phase == "Ready" {
		return ctrl.Result{}, nil
	}
	w.Status.Phase = "Ready"
	return ctrl.Result{}, r.Status().Update(ctx, &w)
}

func TestAManagersControllerRunsUnderAFaultPlan(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	plan := faults.Plan{Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Update}, Namespace: ns, Subresource: "status"}, Times: 2, Fault: faults.Conflict},
	}}
	var c *faults.Client
	mgr := env.NewManager(t, ctrl.Options{NewClient: func(config *rest.Config, opts client.Options) (client.Client, error) {
		inner, err := client.New(config, opts)
		if err != nil {
			return nil, err
		}
		c, err = faults.Wrap(inner, plan)
		return c, err
	}})
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named("ready").
		Complete(&readyReconciler{Client: mgr.GetClient(), namespace: ns})).To(Succeed())
	testenv.StartManager(t, mgr)

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Status.Phase).To(Equal("Ready"))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	// The API server holds the write a moment before the client returns and records it.
	g.Eventually(func() int { return c.Count(faults.Update, faults.Status, faults.OK) }).
		Should(Equal(1), "exactly one status write went through")
	g.Expect(c.Count(faults.Update, faults.Status, faults.Injected)).To(Equal(2))
	g.Expect(c.Count(faults.Get, faults.Match{Kind: "Widget", Namespace: ns})).To(BeNumerically(">=", 3),
		"reads served from the manager's cache are recorded too")
}
