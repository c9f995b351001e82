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

package testenv_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// This file is a Ginkgo v2 suite as kubebuilder scaffolds one, to prove that testenv, matchers,
// faults and reconciletest work from Ginkgo with GinkgoT() as they do from plain tests with t.
// It starts an environment of its own in BeforeSuite, as a kubebuilder suite does.

func TestGinkgoSuite(t *testing.T) {
	if f := flag.Lookup("test.count"); f != nil && f.Value.String() != "1" {
		// Ginkgo refuses to run under go test -count=N; the other tests of the package may.
		t.Skip("Ginkgo runs a suite only with -count=1 (ginkgo -repeat=N repeats it)")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "tenon's test kit from Ginkgo")
}

// GinkgoT() is a TB of tenon's test kit, as *testing.T is, and the three packages' TB are one
// type: a helper that takes a testenv.TB passes it on to faults and reconciletest.
var (
	_ testenv.TB       = FullGinkgoTInterface(nil)
	_ faults.TB        = FullGinkgoTInterface(nil)
	_ reconciletest.TB = FullGinkgoTInterface(nil)
	_ func(testenv.TB) = func(faults.TB) {}
	_ func(testenv.TB) = func(reconciletest.TB) {}
)

var (
	suiteScheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		utilruntime.Must(clientgoscheme.AddToScheme(s))
		utilruntime.Must(testtypes.AddToScheme(s))
		utilruntime.Must(testenv.AddDisksToScheme(s))
		return s
	}()
	suiteEnv *testenv.Environment
)

var _ = BeforeSuite(func() {
	suiteEnv = testenv.New(testenv.Options{
		CRDDirectoryPaths:     []string{testtypes.CRDDirectory(), testenv.DiskCRDDirectory},
		WebhookDirectoryPaths: []string{testenv.DiskWebhookDirectory},
		Scheme:                suiteScheme,
	})
	Expect(suiteEnv.Start()).To(Succeed())
	DeferCleanup(suiteEnv.Stop)
})

// readyReconciler keeps a ConfigMap that the Widget controls, reports Ready, and polls, writing
// only what changed.
type readyReconciler struct {
	client.Client
}

func (r *readyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name + "-config"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"}}
		if err := controllerutil.SetControllerReference(&w, cm, r.Scheme()); err != nil {
			return ctrl.Result{}, reconcile.TerminalError(err)
		}
		if err := r.Create(ctx, cm); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to create the config map: %w", err)
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("failed to read the config map: %w", err)
	}
	before := w.DeepCopy()
	changed := conditions.MarkTrue(&w, conditions.Ready, conditions.ReasonSucceeded, "the config map exists")
	if observed, _ := conditions.SetObservedGeneration(&w); changed || observed {
		if err := r.Status().Patch(ctx, &w, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to patch the status: %w", err)
		}
	}
	return ctrl.Result{RequeueAfter: 5 * time.Minute}, nil
}

// operatorRole is what readyReconciler needs, as controller-gen would generate it, in one Role:
// the manager that runs it as a user caches the spec's namespace only.
func operatorRole() *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "manager-role"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{testtypes.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{testtypes.GroupVersion.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create"}},
	}}
}

func newWidget(ns string) *testtypes.Widget {
	return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}, Spec: testtypes.WidgetSpec{Size: "small"}}
}

var _ = Describe("A controller in a manager that runs as the operator's user", func() {
	var (
		ns  string
		mgr manager.Manager
		rec *reconciletest.Recorder
	)

	BeforeEach(func() {
		ns = suiteEnv.Namespace(GinkgoT())
		operator := suiteEnv.NewUser(GinkgoT(), "operator", testenv.Roles{operatorRole()}, testenv.RoleNamespace(ns))
		mgr = operator.NewManager(GinkgoT(), ctrl.Options{}, ns)
		rec = reconciletest.Record(&readyReconciler{Client: mgr.GetClient()})
		Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Owns(&corev1.ConfigMap{}).Named("ready").Complete(rec)).To(Succeed())
		testenv.StartManager(GinkgoT(), mgr)
	})

	It("makes a Widget Ready, controls its ConfigMap, and polls", func(ctx SpecContext) {
		w := newWidget(ns)
		Expect(suiteEnv.CreateAndWait(ctx, w, mgr.GetCache())).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(suiteEnv.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
			g.Expect(w).To(matchers.BeReady())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(w).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue,
			matchers.WithReason(conditions.ReasonSucceeded), matchers.WithMessage("config map"), matchers.CurrentGeneration{}))
		Expect(w).To(matchers.HaveKStatus(conditions.KStatusCurrent))
		Expect(w).To(matchers.BeCompliant())
		cm := &corev1.ConfigMap{}
		Expect(suiteEnv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, cm)).To(Succeed())
		Expect(cm).To(matchers.BeControlledBy(w))

		req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
		Eventually(rec.Last).WithArguments(req).Should(matchers.BeRequeuedAfter(5 * time.Minute))
		Expect(rec.Steps()).NotTo(ContainElement(matchers.HaveFailed()))
	})

	It("lets a deleted Widget go", func(ctx SpecContext) {
		w := newWidget(ns)
		Expect(suiteEnv.CreateAndWait(ctx, w, mgr.GetCache())).To(Succeed())

		Expect(suiteEnv.DeleteAndWait(ctx, w, mgr.GetCache())).To(Succeed())

		Eventually(w).WithTimeout(30 * time.Second).Should(matchers.BeGone(suiteEnv.Client()))
	})
})

var _ = Describe("The reconciler under the harness", func() {
	var (
		ns  string
		mgr manager.Manager
	)

	BeforeEach(func() {
		ns = suiteEnv.Namespace(GinkgoT())
		mgr = suiteEnv.NewManager(GinkgoT(), ctrl.Options{}, ns)
		testenv.StartManager(GinkgoT(), mgr)
	})

	// harness takes the spec's t as a testenv.TB and passes it on to faults.New.
	harness := func(ctx context.Context, t testenv.TB, plan faults.Plan) (*reconciletest.Harness, reconcile.Request) {
		w := newWidget(ns)
		Expect(suiteEnv.Client().Create(ctx, w)).To(Succeed())
		c := faults.New(t, mgr.GetClient(), plan)
		h := &reconciletest.Harness{Reconciler: &readyReconciler{Client: c}, Client: c, Cache: mgr.GetCache(), Reader: suiteEnv.Client()}
		return h, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
	}

	It("writes nothing once the Widget is Ready, although it polls", func(ctx SpecContext) {
		h, req := harness(ctx, GinkgoT(), faults.Plan{})

		h.AssertIdempotent(GinkgoT(), req)

		Expect(h.Steps()).To(HaveLen(2))
		Expect(h.Steps()[1]).To(matchers.BeRequeuedAfter(5 * time.Minute))
		Expect(h.Steps()[1].Stable()).To(BeTrue())
	})

	It("becomes stable under a fault plan", func(ctx SpecContext) {
		h, req := harness(ctx, GinkgoT(), faults.Plan{Seed: 5, Rules: []faults.Rule{
			{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Subresource: "status"}, Nth: 1, Fault: faults.Conflict},
			{Match: faults.Match{Verbs: faults.Verbs{faults.Create}, Kind: "ConfigMap"}, Nth: 1, Fault: faults.InternalError},
		}})

		Expect(h.ReconcileUntilStable(GinkgoT(), req)).To(BeNumerically(">=", 3), "the 500 and the conflict cost a reconcile each")

		w := &testtypes.Widget{}
		Expect(suiteEnv.Client().Get(ctx, req.NamespacedName, w)).To(Succeed())
		Expect(w).To(matchers.BeReady())
		Expect(h.Client.Count(faults.Injected)).To(Equal(2))
	})
})

var _ = Describe("Webhooks registered with a manager of the spec", func() {
	var ns string

	BeforeEach(func() {
		ns = suiteEnv.Namespace(GinkgoT())
		mgr := suiteEnv.NewManager(GinkgoT(), ctrl.Options{}, ns)
		Expect(testenv.SetupDiskWebhooks(mgr, "the spec's manager")).To(Succeed())
		testenv.StartManager(GinkgoT(), mgr)
	})

	It("default a Disk created at v1, which reads back converted at v2", func(ctx SpecContext) {
		d1 := &testenv.DiskV1{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Spec: testenv.DiskV1Spec{SizeGiB: 10}}
		Expect(suiteEnv.Client().Create(ctx, d1)).To(Succeed())
		Expect(d1.Spec.Tier).To(Equal("standard"))

		d2 := &testenv.DiskV2{}
		Expect(suiteEnv.Client().Get(ctx, client.ObjectKeyFromObject(d1), d2)).To(Succeed())
		Expect(d2.Spec).To(Equal(testenv.DiskV2Spec{Size: "10Gi", Tier: "standard"}))
	})

	It("refuse a Disk with an unknown tier", func(ctx SpecContext) {
		d := &testenv.DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: testenv.DiskV2Spec{Size: "1Gi", Tier: "gold"}}
		err := suiteEnv.Client().Create(ctx, d)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a webhook's denial is 403: %v", err)
		Expect(err).To(MatchError(ContainSubstring(`spec.tier "gold" is neither standard nor premium (webhook of the spec's manager)`)))
	})
})
