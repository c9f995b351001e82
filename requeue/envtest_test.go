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

package requeue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{testtypes.CRDDirectory()}, Scheme: scheme})
	os.Exit(env.Run(m))
}

// conflictingReconciler writes Ready to a Widget's status from the cached copy; on its first
// reconcile another writer changes the Widget in between, so that status write conflicts.
type conflictingReconciler struct {
	client.Client
	other      client.Client
	namespace  string
	reconciles atomic.Int32
}

func (r *conflictingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return requeue.Done()
	}
	n := r.reconciles.Add(1)
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if n == 1 {
		// Another controller labels the object: the copy just read is now stale.
		latest := w.DeepCopy()
		latest.Labels = map[string]string{"touched-by": "someone-else"}
		if err := r.other.Update(ctx, latest); err != nil {
			return ctrl.Result{}, err
		}
	}
	conditions.MarkTrue(&w, conditions.Ready, conditions.ReasonSucceeded, "")
	// A plain Update with the stale resourceVersion: 409 Conflict on the first reconcile.
	return ctrl.Result{}, r.Status().Update(ctx, &w)
}

func TestAConflictIsRetriedQuietlyUntilItSucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{})
	r := &conflictingReconciler{Client: mgr.GetClient(), other: env.Client(), namespace: ns}
	const name = "conflicting"
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named(name).
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: name}))).To(Succeed())
	testenv.StartManager(t, mgr)

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
	}).WithTimeout(30 * time.Second).Should(Succeed())

	g.Expect(w.Labels).To(HaveKeyWithValue("touched-by", "someone-else"), "the other writer's change survived")
	g.Expect(r.reconciles.Load()).To(BeNumerically(">=", 2), "the conflicting reconcile was retried")
	g.Expect(counter(t, "tenon_reconcile_quiet_conflicts_total", map[string]string{"controller": name, "class": "conflict"})).To(BeNumerically(">=", 1))
	g.Expect(counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": name})).To(BeZero(),
		"a conflict must not count as a reconcile error")
}

// terminalReconciler always fails with a terminal error.
type terminalReconciler struct {
	namespace  string
	reconciles atomic.Int32
}

func (r *terminalReconciler) Reconcile(_ context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return requeue.Done()
	}
	r.reconciles.Add(1)
	return requeue.Terminal("InvalidSpec", errors.New("spec.size must be small, medium or large"))
}

func TestATerminalErrorIsNotRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{})
	r := &terminalReconciler{namespace: ns}
	const name = "terminal"
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named(name).
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: name}))).To(Succeed())
	testenv.StartManager(t, mgr)

	g.Expect(env.Client().Create(ctx, &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}})).To(Succeed())

	g.Eventually(r.reconciles.Load).WithTimeout(30 * time.Second).Should(BeEquivalentTo(1))
	// controller-runtime's rate limiter would retry a plain error within milliseconds, ten times
	// in the first five seconds; a terminal error is not retried at all.
	g.Consistently(r.reconciles.Load).WithTimeout(2 * time.Second).Should(BeEquivalentTo(1))
	g.Expect(counter(t, "tenon_reconcile_terminal_errors_total", map[string]string{"controller": name})).To(BeEquivalentTo(1))
	g.Expect(counter(t, "controller_runtime_terminal_reconcile_errors_total", map[string]string{"controller": name})).To(BeEquivalentTo(1))
}

// creatingReconciler creates a ConfigMap for each Widget without looking first, as a reconciler
// does whose cache cannot see the ConfigMap (a label-filtered cache, another namespace's): every
// create is an AlreadyExists.
type creatingReconciler struct {
	client.Client
	namespace  string
	reconciles atomic.Int32
}

func (r *creatingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != r.namespace {
		return requeue.Done()
	}
	r.reconciles.Add(1)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: req.Name + "-config", Namespace: req.Namespace}}
	if err := r.Create(ctx, cm); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to create config map: %w", err)
	}
	return requeue.Done()
}

func TestAConflictThatNeverGoesAwayIsCountedAsAnError(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	// The ConfigMap exists already, created by someone else.
	g.Expect(env.Client().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w-config", Namespace: ns}})).To(Succeed())

	mgr := env.NewManager(t, ctrl.Options{})
	r := &creatingReconciler{Client: mgr.GetClient(), namespace: ns}
	const name = "already-exists"
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named(name).
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{
			Name:              name,
			ConflictLimiter:   workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Millisecond, 10*time.Millisecond),
			MaxQuietConflicts: 3,
		}))).To(Succeed())
	testenv.StartManager(t, mgr)

	g.Expect(env.Client().Create(ctx, &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}})).To(Succeed())

	// Three quiet requeues, then the error controller-runtime logs, counts and retries.
	g.Eventually(func() float64 {
		return counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": name})
	}).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 1))
	g.Expect(counter(t, "tenon_reconcile_quiet_conflicts_total", map[string]string{"controller": name, "class": "already_exists"})).To(BeEquivalentTo(3))
	g.Expect(r.reconciles.Load()).To(BeNumerically(">=", 4))
}

// applyingReconciler applies a ConfigMap that holds each Widget's color with server-side apply,
// without ForceConflicts, marks the Widget Ready when the apply succeeded, and reports the
// outcome with requeue.Report, as a reconciler built from tenon's blocks does.
type applyingReconciler struct {
	client.Client
	applier   *patch.Applier
	namespace string
}

func (r *applyingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res ctrl.Result, err error) {
	if req.Namespace != r.namespace {
		return requeue.Done()
	}
	var w testtypes.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	h, err := patch.NewHelper(&w, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		err = errors.Join(requeue.Report(&w, err), h.Patch(ctx, &w, patch.OwnedConditions{conditions.Ready}))
	}()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-config", Namespace: w.Namespace},
		Data:       map[string]string{"color": w.Spec.Color},
	}
	if _, err := r.applier.Apply(ctx, cm); err != nil {
		return ctrl.Result{}, err
	}
	conditions.MarkTrue(&w, conditions.Ready, conditions.ReasonSucceeded, "")
	return ctrl.Result{}, nil
}

// applyConfigMapColor applies the ConfigMap w-config as fieldManager: with the color, forcing
// ownership of it, or without it (color empty), which gives the field up.
func applyConfigMapColor(ctx context.Context, c client.Client, ns, fieldManager, color string) error {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "w-config", Namespace: ns, Labels: map[string]string{"team": "gitops"}},
	}
	if color != "" {
		cm.Data = map[string]string{"color": color}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		return err
	}
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
	return c.Apply(ctx, ac, client.FieldOwner(fieldManager), client.ForceOwnership)
}

func TestAFieldConflictStallsTheOwnerUntilAPersonDecides(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{})
	r := &applyingReconciler{Client: mgr.GetClient(), applier: patch.NewApplier(env.Client(), "widget-controller", patch.ApplierOptions{}), namespace: ns}
	const name = "field-conflict"
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named(name).
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: name}))).To(Succeed())
	testenv.StartManager(t, mgr)

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}, Spec: testtypes.WidgetSpec{Color: "red"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// Someone else takes the color over (kubectl apply --server-side --force-conflicts), and
	// then the Widget asks for another color: the controller's apply conflicts.
	g.Expect(applyConfigMapColor(ctx, env.Client(), ns, "gitops", "blue")).To(Succeed())
	w.Spec.Color = "green"
	g.Expect(env.Client().Update(ctx, w)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w).To(matchers.HaveCondition(conditions.Stalled, metav1.ConditionTrue, matchers.WithReason(requeue.ReasonFieldManagerConflict),
			matchers.WithMessage(`conflict with "gitops"`), matchers.WithMessage(".data.color")), "a field conflict must show on the owner")
		g.Expect(w).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse), "Ready must not stay True")
		g.Expect(w.Status.ObservedGeneration).To(Equal(w.Generation))
		g.Expect(w).To(matchers.HaveKStatus(conditions.KStatusFailed))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	// The reconcile writes the status before it returns the error that the metric counts.
	g.Eventually(func() float64 {
		return counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": name})
	}).WithTimeout(30*time.Second).Should(BeNumerically(">=", 1), "a field conflict is logged and counted as an error")

	// The person decides: gitops gives the field up. The controller's retries pick that up.
	g.Expect(applyConfigMapColor(ctx, env.Client(), ns, "gitops", "")).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
		g.Expect(conditions.Get(w, conditions.Stalled)).To(BeNil())
		var cm corev1.ConfigMap
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, &cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("color", "green"))
	}).WithTimeout(60 * time.Second).Should(Succeed())
}
