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
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// The examples of this package start a real control plane, so they are compiled but not run:
// copy them into your tests.

var env *testenv.Environment

// A test package starts one environment in TestMain and shares it between its tests.
func Example() {
	// In your package's main_test.go:
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
	var t *testing.T // the test
	g := NewWithT(t)
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{})
	// ... register the controller under test with mgr ...
	testenv.StartManager(t, mgr)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
	g.Expect(env.CreateAndWait(t.Context(), cm, mgr.GetCache())).To(Succeed())
}

// A manager can run with exactly the permissions of the operator's generated RBAC, so that a
// missing kubebuilder:rbac marker fails a test instead of a deployment.
func ExampleEnvironment_NewUser() {
	var t *testing.T // the test
	operator := env.NewUser(t, "operator", testenv.RoleFiles{filepath.Join("..", "config", "rbac", "role.yaml")})
	mgr := operator.NewManager(t, ctrl.Options{})
	// ... register the controller under test with mgr ...
	testenv.StartManager(t, mgr)
}

// An operator must recover from an API server restart without being restarted itself: its
// manager, started before the restart, must see and reconcile what is created after it.
func ExampleEnvironment_RestartAPIServer() {
	var t *testing.T // the test
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{})
	// ... register the controller under test with mgr ...
	testenv.StartManager(t, mgr)

	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())

	// The manager's cache reconnects by itself; CreateAndWait waits until it has.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Namespace: ns}}
	g.Expect(env.CreateAndWait(ctx, cm, mgr.GetCache())).To(Succeed())
	// ... assert what the controller does with it ...
}
