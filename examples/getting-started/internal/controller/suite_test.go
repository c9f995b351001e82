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

package controller_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/testenv"

	webappv1 "github.com/tenon-dev/tenon/examples/getting-started/api/v1"
	"github.com/tenon-dev/tenon/examples/getting-started/internal/controller"
)

var (
	scheme = runtime.NewScheme()
	env    *testenv.Environment
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
}

// TestMain starts one control plane for the package's tests, plain and Ginkgo alike, and stops
// it after them.
func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Scheme:            scheme,
	})
	os.Exit(env.Run(m))
}

// TestControllers runs the Ginkgo specs of the package.
func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller Suite")
}

// newReconciler returns the Guestbook reconciler as cmd/main.go builds it, on client c (the
// manager's client, or a faults.Client around it) and the manager's API reader.
func newReconciler(mgr ctrl.Manager, c client.Client) *controller.GuestbookReconciler {
	return &controller.GuestbookReconciler{
		Client:  c,
		Applier: patch.NewApplier(c, "guestbook-controller", patch.ApplierOptions{APIReader: mgr.GetAPIReader()}),
		Writer: patch.NewWriter(c, patch.WriterOptions{
			APIReader: mgr.GetAPIReader(),
			History:   &patch.History{},
			Recorder:  mgr.GetEventRecorder("guestbook-controller"),
		}),
	}
}
