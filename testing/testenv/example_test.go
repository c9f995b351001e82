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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// The examples run in this package's test binary, after its tests, on the environment that the
// package's TestMain started for them. Your tests get theirs from your TestMain (see Example).
var env = testenv.SharedEnvironment()

// exampleT stands in for the *testing.T an example does not have: it runs the cleanups when the
// example ends, prints logs and errors, and panics on a fatal one.
type exampleT struct {
	name     string
	ctx      context.Context
	cancel   context.CancelFunc
	cleanups []func()
	failed   bool
}

var _ testenv.TB = (*exampleT)(nil)

func newT(name string) *exampleT {
	ctx, cancel := context.WithCancel(context.Background())
	return &exampleT{name: name, ctx: ctx, cancel: cancel}
}

func (t *exampleT) Helper()                  {}
func (t *exampleT) Name() string             { return t.name }
func (t *exampleT) Context() context.Context { return t.ctx }
func (t *exampleT) Cleanup(f func())         { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Failed() bool             { return t.failed }
func (t *exampleT) Logf(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}
func (t *exampleT) Errorf(format string, args ...any) {
	t.failed = true
	fmt.Printf("ERROR: "+format+"\n", args...)
}
func (t *exampleT) Fatalf(format string, args ...any) {
	t.failed = true
	panic(fmt.Sprintf(format, args...))
}

// end cancels the context and runs the cleanups, last first, as the testing package does.
func (t *exampleT) end() {
	t.cancel()
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}

// A test package starts one environment in TestMain and shares it between its tests.
//
// This example is not run: it is the body of TestMain, where Run runs the package's tests and
// os.Exit ends the process with their result.
func Example() {
	// In your package's main_test.go:
	//
	//	var env *testenv.Environment
	//
	//	func TestMain(m *testing.M) {
	//		env = testenv.New(testenv.Options{...})
	//		os.Exit(env.Run(m))
	//	}
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")},
		GarbageCollector:  true,
	})
	var m *testing.M // given to TestMain
	os.Exit(env.Run(m))
}

// A test takes a namespace of its own, creates an object and waits until the manager's cache
// has it before it asserts anything the controller does.
func ExampleEnvironment_CreateAndWait() {
	t := newT("ExampleEnvironment_CreateAndWait") // in a test: its t
	defer t.end()

	g := NewWithT(t)
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	// ... register the controller under test with mgr ...
	testenv.StartManager(t, mgr)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
	g.Expect(env.CreateAndWait(t.Context(), cm, mgr.GetCache())).To(Succeed())

	// No Eventually: the cache has it now, as the controller will.
	var cached corev1.ConfigMap
	g.Expect(mgr.GetCache().Get(t.Context(), client.ObjectKeyFromObject(cm), &cached)).To(Succeed())
	fmt.Println("the cache has", cached.Name, "at the created resourceVersion:", cached.ResourceVersion == cm.ResourceVersion)
	// Output:
	// the cache has settings at the created resourceVersion: true
}

// Tests that run in parallel each start a manager of their own. Scoped to the test's namespace,
// its cache holds the test's objects only, so its controllers never reconcile another test's.
func ExampleEnvironment_NewManager() {
	t := newT("ExampleEnvironment_NewManager") // in a test: its t
	defer t.end()

	g := NewWithT(t)
	ctx := t.Context()
	ns, elsewhere := env.Namespace(t), env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	testenv.StartManager(t, mgr)

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: elsewhere}}
	g.Expect(env.Client().Create(ctx, theirs)).To(Succeed())
	ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ours", Namespace: ns}}
	g.Expect(env.CreateAndWait(ctx, ours, mgr.GetCache())).To(Succeed())

	var cached corev1.ConfigMapList
	g.Expect(mgr.GetCache().List(ctx, &cached)).To(Succeed())
	for _, cm := range cached.Items {
		fmt.Println("cached:", cm.Name)
	}
	err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(theirs), &corev1.ConfigMap{})
	fmt.Println("reading another namespace through the cache fails:", err != nil)
	// Output:
	// cached: ours
	// reading another namespace through the cache fails: true
}

// replicasValidator refuses a ConfigMap whose data.replicas is not a number.
type replicasValidator struct{}

func (replicasValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if _, err := strconv.Atoi(cm.Data["replicas"]); err != nil {
		return nil, fmt.Errorf("data.replicas %q is not a number", cm.Data["replicas"])
	}
	return nil, nil
}

func (v replicasValidator) ValidateUpdate(ctx context.Context, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.ValidateCreate(ctx, cm)
}

func (replicasValidator) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// A manager from NewManager serves the webhooks registered with it while it runs. The
// environment installs the webhook configurations of Options.WebhookDirectoryPaths (here a
// validating webhook for ConfigMaps labelled example.com/validated=true, in testdata) pointed at
// its own webhook server, which hands each request to the manager whose namespaces hold the
// object. Conversion webhooks work the same way, for the CRDs whose kinds the scheme can convert.
func ExampleEnvironment_NewManager_webhooks() {
	// In TestMain:
	//
	//	env = testenv.New(testenv.Options{
	//		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
	//		WebhookDirectoryPaths: []string{filepath.Join("..", "config", "webhook")},
	//		Scheme:                scheme,
	//	})
	t := newT("ExampleEnvironment_NewManager_webhooks") // in a test: its t
	defer t.end()

	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	// In a kubebuilder project: SetupConfigMapWebhookWithManager(mgr).
	if err := ctrl.NewWebhookManagedBy(mgr, &corev1.ConfigMap{}).WithValidator(replicasValidator{}).Complete(); err != nil {
		t.Fatalf("%v", err)
	}
	testenv.StartManager(t, mgr)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, Labels: map[string]string{"example.com/validated": "true"}},
		Data:       map[string]string{"replicas": "many"},
	}
	fmt.Println(env.Client().Create(t.Context(), cm))
	cm.Data["replicas"] = "3"
	fmt.Println(env.Client().Create(t.Context(), cm))
	// Output:
	// admission webhook "vconfigmap.example.com" denied the request: data.replicas "many" is not a number
	// <nil>
}

// A manager can run with exactly the permissions of the operator's generated RBAC, so that a
// missing kubebuilder:rbac marker fails a test instead of a deployment.
func ExampleEnvironment_NewUser() {
	t := newT("ExampleEnvironment_NewUser") // in a test: its t
	defer t.end()

	ctx := t.Context()
	ns := env.Namespace(t)
	// In an operator's repository: filepath.Join("..", "..", "config", "rbac", "role.yaml").
	roles := testenv.RoleFiles{filepath.Join("testdata", "role.yaml")}
	operator := env.NewUser(t, "operator", roles, testenv.RoleNamespace(ns))
	mgr := operator.NewManager(t, ctrl.Options{})
	// ... register the controller under test with mgr ...
	testenv.StartManager(t, mgr)

	// The role allows creating ConfigMaps, and not deleting them.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
	fmt.Println("create:", mgr.GetClient().Create(ctx, cm))
	fmt.Println("delete is forbidden:", apierrors.IsForbidden(mgr.GetClient().Delete(ctx, cm)))
	// Output:
	// create: <nil>
	// delete is forbidden: true
}

// An operator must recover from an API server restart without being restarted itself: its
// manager, started before the restart, must see and reconcile what is created after it.
func ExampleEnvironment_RestartAPIServer() {
	t := newT("ExampleEnvironment_RestartAPIServer") // in a test: its t
	defer t.end()

	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	// A controller's watch, started before the restart:
	_, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	g.Expect(err).NotTo(HaveOccurred())
	testenv.StartManager(t, mgr)

	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())

	// The manager's cache reconnects by itself; CreateAndWait waits until it has.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Namespace: ns}}
	g.Expect(env.CreateAndWait(ctx, cm, mgr.GetCache())).To(Succeed())
	// ... assert what the controller does with it ...
	fmt.Println("the cache saw", cm.Name)
	// Output:
	// the cache saw after-restart
}

// With an audit log, a test counts requests as the API server saw them: here, that a second
// identical update is still a request (the API server answers it without a new resourceVersion).
func ExampleEnvironment_AuditLog() {
	e := testenv.New(testenv.Options{AuditLog: true})
	if err := e.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = e.Stop() }()
	ctx := context.Background()
	c := e.Client()

	before, err := e.AuditLog().Mark(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	_ = c.Create(ctx, cm)
	_ = c.Update(ctx, cm)
	_ = c.Update(ctx, cm)
	events, err := e.AuditLog().Since(before)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The API server writes too (its own leases, every few seconds): count ConfigMaps only.
	configMaps := events.Filter(func(ev testenv.AuditEvent) bool { return ev.Resource == "configmaps" })
	writes := configMaps.Writes().Count(func(ev testenv.AuditEvent) string { return fmt.Sprintf("%s %d", ev.Verb, ev.Code) })
	fmt.Println(writes)
	// Output: map[create 201:1 update 200:2]
}
