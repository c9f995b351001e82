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

const (
	attackShardLabel      = "shard.alpha.sharding.timebertt.dev/cluster-operator"
	attackDrainLabel      = "drain.alpha.sharding.timebertt.dev/cluster-operator"
	attackOtherRingShard  = "shard.alpha.sharding.timebertt.dev/other-ring"
	attackSharderManager  = "sharder"
	attackChildName       = "child"
	attackAppLabel        = "app"
	attackAppLabelValue   = "web"
	attackDataKey         = "k"
	attackDataValue       = "v"
	attackOwnerShardValue = "shard-a"
)

// A desired child whose labels are only the sharder's (the owner's shard and drain labels
// copied, nothing else; or another ring's shard label): the Applier applies no label, the
// sharder's labels on the live child stay, and a second apply, by the same or a fresh Applier,
// sends nothing. Then the desired labels gain and lose a label of the operator's own: the
// Applier removes it again and keeps the sharder's. Passes: pins the edge of
// withoutShardLabels that deletes the labels map it emptied.
func TestAttackApplyWithOnlyTheSharderLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		// configuration applies an apply configuration instead of a typed object.
		configuration bool
	}{
		{name: "the owner's shard and drain labels", labels: map[string]string{attackShardLabel: attackOwnerShardValue, attackDrainLabel: "true"}},
		{name: "another ring's shard label", labels: map[string]string{attackOtherRingShard: "x"}},
		{name: "an apply configuration", labels: map[string]string{attackShardLabel: attackOwnerShardValue}, configuration: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			c := newCountingClient(t)
			apply := func(a *patch.Applier, l map[string]string) error {
				if tc.configuration {
					_, err := a.ApplyConfiguration(ctx, corev1ac.ConfigMap(attackChildName, ns).WithLabels(l).WithData(map[string]string{attackDataKey: attackDataValue}))
					return err
				}
				_, err := a.Apply(ctx, &corev1.ConfigMap{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: attackChildName, Namespace: ns, Labels: l},
					Data:       map[string]string{attackDataKey: attackDataValue},
				})
				return err
			}
			a := patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})
			g.Expect(apply(a, tc.labels)).To(Succeed())
			live := &corev1.ConfigMap{}
			key := client.ObjectKey{Namespace: ns, Name: attackChildName}
			g.Expect(env.Client().Get(ctx, key, live)).To(Succeed())
			g.Expect(live.Labels).To(BeEmpty(), "the sharder's labels were applied")

			g.Expect(env.Client().Patch(ctx, live, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+attackShardLabel+`":"shard-b"}}}`)), client.FieldOwner(attackSharderManager))).To(Succeed())
			for _, applier := range []*patch.Applier{a, patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})} {
				c.take()
				g.Expect(apply(applier, tc.labels)).To(Succeed())
				counts := c.take()
				g.Expect(counts["apply"]+counts["patch"]).To(BeZero(), "a request for an unchanged child: %v", counts)
			}

			// The operator adds a label of its own, then drops it again.
			withApp := map[string]string{attackAppLabel: attackAppLabelValue}
			for k, v := range tc.labels {
				withApp[k] = v
			}
			g.Expect(apply(a, withApp)).To(Succeed())
			g.Expect(env.Client().Get(ctx, key, live)).To(Succeed())
			g.Expect(live.Labels).To(Equal(map[string]string{attackAppLabel: attackAppLabelValue, attackShardLabel: "shard-b"}))
			g.Expect(apply(a, tc.labels)).To(Succeed())
			g.Expect(env.Client().Get(ctx, key, live)).To(Succeed())
			g.Expect(live.Labels).To(Equal(map[string]string{attackShardLabel: "shard-b"}), "the operator's label was not removed, or the sharder's was")
		})
	}
}
