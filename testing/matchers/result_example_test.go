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

package matchers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
)

// quietTB is the test of the examples: a reconciletest.Harness logs and fails through it. It
// prints failures only; an example has no end at which to run cleanups, and the harness registers
// none, so Cleanup drops them, and Failed reports false.
type quietTB struct{}

func (quietTB) Helper()                           {}
func (quietTB) Name() string                      { return "Example" }
func (quietTB) Context() context.Context          { return context.Background() }
func (quietTB) Cleanup(func())                    {}
func (quietTB) Failed() bool                      { return false }
func (quietTB) Logf(format string, args ...any)   {}
func (quietTB) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }
func (quietTB) Fatalf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }

var _ reconciletest.TB = quietTB{}

// Assertions on the result of one reconcile: a poll is requeued after its interval, and is not
// done.
func ExampleBeRequeuedAfter() {
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(message) })
	poll := reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	})
	c := faults.Record(fake.NewClientBuilder().Build())
	h := &reconciletest.Harness{Reconciler: poll, Client: c}

	step := h.Reconcile(quietTB{}, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: "settings"}})

	g.Expect(step).To(matchers.BeRequeuedAfter(time.Minute))
	g.Expect(step).To(matchers.BeRequeued())
	g.Expect(step).NotTo(matchers.HaveFailed())
	g.Expect(step).To(matchers.BeDone())

	// Output:
	// Expected the reconcile of default/settings to be done
	// but it returned requeue after 1m0s
	//   step 1: requeue after 1m0s (no calls)
}
