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

package patch_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// The sharder's labels on a child belong to the sharder: a desired child that copies its
// owner's labels, the owner's shard and drain labels among them, must not make the Applier's
// field manager own them. Otherwise the next apply after the sharder moved the child would put
// the old shard back. And the sharder's label on the child must not defeat the no-op proof.
func TestApplyNeverAppliesTheSharderLabels(t *testing.T) {
	const (
		shardLabel = "shard.alpha.sharding.timebertt.dev/cluster-operator"
		drainLabel = "drain.alpha.sharding.timebertt.dev/cluster-operator"
	)
	copied := map[string]string{"app": "web", shardLabel: "shard-a", drainLabel: "true"}
	for _, tc := range []struct {
		name  string
		apply func(t *testing.T, a *patch.Applier, ns string) error
	}{{
		name: "a typed object",
		apply: func(t *testing.T, a *patch.Applier, ns string) error {
			_, err := a.Apply(t.Context(), &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: copied},
				Data:       map[string]string{"k": "v"},
			})
			return err
		},
	}, {
		name: "an apply configuration",
		apply: func(t *testing.T, a *patch.Applier, ns string) error {
			_, err := a.ApplyConfiguration(t.Context(), corev1ac.ConfigMap("child", ns).WithLabels(copied).WithData(map[string]string{"k": "v"}))
			return err
		},
	}, {
		name: "an unstructured object",
		apply: func(t *testing.T, a *patch.Applier, ns string) error {
			_, err := a.Apply(t.Context(), asUnstructured(t, &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: copied},
				Data:       map[string]string{"k": "v"},
			}))
			return err
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			c := newCountingClient(t)
			a := patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})
			g.Expect(tc.apply(t, a, ns)).To(Succeed())

			live := &corev1.ConfigMap{}
			g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "child"}, live)).To(Succeed())
			g.Expect(live.Labels).To(Equal(map[string]string{"app": "web"}), "the sharder's labels were applied")

			// The sharder assigns the child to the shard of its owner's new home.
			g.Expect(env.Client().Patch(ctx, live, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+shardLabel+`":"shard-b"}}}`)), client.FieldOwner("sharder"))).To(Succeed())

			for _, applier := range []struct {
				name string
				a    *patch.Applier
			}{{"the Applier that applied", a}, {"a freshly started Applier", patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})}} {
				c.take()
				g.Expect(tc.apply(t, applier.a, ns)).To(Succeed())
				counts := c.take()
				g.Expect(counts["apply"]+counts["patch"]).To(BeZero(), "%s sent a request for an unchanged child: %v", applier.name, counts)
				g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(live), live)).To(Succeed())
				g.Expect(live.Labels).To(Equal(map[string]string{"app": "web", shardLabel: "shard-b"}), "%s changed the sharder's label", applier.name)
			}
		})
	}
}
