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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/reconciletest"
	"github.com/tenon-dev/tenon/testing/testenv"

	webappv1 "github.com/tenon-dev/tenon/examples/getting-started/api/v1"
)

// A Guestbook becomes Ready, and a reconcile after that writes nothing.
func TestAGuestbookBecomesReadyAndTheNextReconcileWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	// A manager for its cache only: the harness drives the reconciler, one reconcile at a time.
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	c := faults.Record(mgr.GetClient())
	testenv.StartManager(t, mgr)

	guestbook := &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec:       webappv1.GuestbookSpec{Message: "Hello, world"},
	}
	g.Expect(env.CreateAndWait(t.Context(), guestbook, mgr.GetCache())).To(Succeed())

	h := &reconciletest.Harness{Reconciler: newReconciler(mgr, c), Client: c, Cache: mgr.GetCache()}
	h.AssertIdempotent(t, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(guestbook)})

	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(guestbook), guestbook)).To(Succeed())
	g.Expect(guestbook).To(matchers.BeReady())
}
