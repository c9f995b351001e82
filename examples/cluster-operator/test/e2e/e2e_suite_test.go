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

// Package e2e tests the operator as it is shipped: the manager binary, run as a separate process
// with only the permissions of the generated RBAC manifests, and the kustomize tree under
// config/. The kubebuilder scaffold runs these tests against a kind cluster; here the cluster is
// an envtest control plane with its garbage collector, and the simulated kubelet plays the part
// of the StatefulSet controller.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"

	"github.com/tenon-dev/tenon/testing/testenv"
)

const (
	// systemNamespace is the operator's namespace in config/: the Role of role.yaml and the
	// DNS credentials Secret live there.
	systemNamespace = "cluster-operator-system"

	timeout  = 90 * time.Second
	interval = 200 * time.Millisecond
)

var (
	scheme = runtime.NewScheme()
	env    *testenv.Environment

	// moduleDir is the operator module's root directory, config/ is in it.
	moduleDir = filepath.Join("..", "..")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join(moduleDir, "config", "crd", "bases")},
		Scheme:            scheme,
		GarbageCollector:  true,
	})
	os.Exit(env.Run(m))
}

// ensureNamespace creates the namespace name unless it exists. Unlike the namespaces of
// env.Namespace, it is shared by the tests and never deleted.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client().Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("failed to create namespace %s: %v", name, err)
	}
}

// startKubelet runs the simulated kubelet for the operator's StatefulSets in namespace.
func startKubelet(t *testing.T, namespace string) {
	t.Helper()
	mgr := env.NewManager(t, ctrl.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}}})
	sim := &kubelet.Simulator{
		Client:   mgr.GetClient(),
		Selector: labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy}),
	}
	if err := sim.SetupWithManager(mgr); err != nil {
		t.Fatalf("failed to set up the kubelet simulator: %v", err)
	}
	testenv.StartManager(t, mgr)
}
