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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// The manager's client, configured with controller.ClientOptions as cmd/main.go configures it,
// reads its own writes from the cache at once. Without the option the cache lags behind each
// write by the watch event's trip, and a reconcile that follows closely reads the Cluster as it
// was: this test then fails, with near certainty over twenty writes.
func TestTheOperatorsClientReadsItsOwnWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{Client: controller.ClientOptions()}, ns)
	testenv.StartManager(t, mgr)
	op := &operator{namespace: ns}
	cluster := op.newCluster("ryw")
	g.Expect(env.CreateAndWait(ctx, cluster, mgr.GetCache())).To(Succeed())
	c := mgr.GetClient()

	for i := range 20 {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		before := cluster.DeepCopy()
		cluster.Status.ReadyReplicas = int32(i + 1)
		g.Expect(c.Status().Patch(ctx, cluster, client.MergeFrom(before))).To(Succeed())
		written := cluster.ResourceVersion

		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.ResourceVersion).To(Equal(written), "write %d: the read right after it sees it", i+1)
	}
}
