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

package sharding_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// A child tracked in another namespace is never assigned by the sharder, so a shard's cache,
// selected by the shard label, never holds it: DeleteTracked through that cache would count 0
// while it exists, and the owner's finalizer would go and leak it. For an owner assigned to a
// shard, DeleteTracked requires the API reader.
func TestDeleteTrackedOfAShardsOwnerRequiresTheAPIReader(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns, remote := env.Namespace(t), env.Namespace(t)
	shard := mustShard(t, "shard-a")

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner", Labels: map[string]string{shard.ShardLabel(): shard.Name}}}
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: remote, Name: "tracked"}}
	how, _, err := ownership.Set(owner, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(how).To(Equal(ownership.TrackingLabels), "a child in another namespace is tracked")
	g.Expect(env.Client().Create(ctx, child)).To(Succeed())

	var opts manager.Options
	g.Expect(shard.SelectCache(&opts.Cache, &corev1.ConfigMap{})).To(Succeed())
	mgr := env.NewManager(t, opts, ns, remote)
	testenv.StartManager(t, mgr)
	cached := mgr.GetClient()
	g.Eventually(func() error { return cached.Get(ctx, client.ObjectKeyFromObject(owner), &corev1.ConfigMap{}) }).
		WithTimeout(30*time.Second).Should(Succeed(), "the shard's cache holds its owner")
	err = cached.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the shard's cache never holds the tracked child: %v", err)
	lists := []client.ObjectList{&corev1.ConfigMapList{}}

	remaining, err := ownership.DeleteTracked(ctx, cached, owner, lists)
	g.Expect(err).To(MatchError(And(ContainSubstring("assigned to a shard"), ContainSubstring("ownership.APIReader"))))
	g.Expect(remaining).To(BeZero())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})).To(Succeed(), "the child is still there")

	remaining, err = ownership.DeleteTracked(ctx, cached, owner, lists, ownership.APIReader(mgr.GetAPIReader()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(1), "the API server has the child: it is deleted and counted")
	g.Eventually(func() error { return env.Client().Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{}) }).
		WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))

	remaining, err = ownership.DeleteTracked(ctx, cached, owner, lists, ownership.APIReader(mgr.GetAPIReader()))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero(), "none left on the API server either")
}
