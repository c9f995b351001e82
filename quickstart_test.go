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

package tenon_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/reconciletest"
)

// The README's quick-start reconciler polls at steady state and writes nothing there: it passes
// the idempotency harness.
func TestTheQuickStartReconcilerIsIdempotent(t *testing.T) {
	cluster := &Cluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 1}, Spec: ClusterSpec{Replicas: 3}}
	c := newClient(cluster)
	r := &ClusterReconciler{
		Client:    c,
		Lifecycle: &finalizer.Lifecycle[*Cluster]{Finalizer: "apps.example.com/cleanup", Client: c},
		Writer:    patch.NewWriter(c, patch.WriterOptions{}),
	}
	h := &reconciletest.Harness{Reconciler: r, Client: c}

	h.AssertIdempotent(t, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cluster)})
}
