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
// owner's labels, the owner's shard and drain labels among them (or carries only those, or
// another ring's), must not make the Applier's field manager own them. Otherwise the next apply
// after the sharder moved the child would put the old shard back. The sharder's label on the
// child must not defeat the no-op proof, of the Applier that applied or of a fresh one; and the
// operator's own labels still come and go around it.
func TestApplyNeverAppliesTheSharderLabels(t *testing.T) {
	const (
		shardLabel     = "shard.alpha.sharding.timebertt.dev/cluster-operator"
		drainLabel     = "drain.alpha.sharding.timebertt.dev/cluster-operator"
		otherRingShard = "shard.alpha.sharding.timebertt.dev/other-ring"
	)
	configMap := func(ns string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: labels},
			Data:       map[string]string{"k": "v"},
		}
	}
	forms := []struct {
		name  string
		apply func(t *testing.T, a *patch.Applier, ns string, labels map[string]string) error
	}{{
		name: "a typed object",
		apply: func(t *testing.T, a *patch.Applier, ns string, labels map[string]string) error {
			_, err := a.Apply(t.Context(), configMap(ns, labels))
			return err
		},
	}, {
		name: "an apply configuration",
		apply: func(t *testing.T, a *patch.Applier, ns string, labels map[string]string) error {
			_, err := a.ApplyConfiguration(t.Context(), corev1ac.ConfigMap("child", ns).WithLabels(labels).WithData(map[string]string{"k": "v"}))
			return err
		},
	}, {
		name: "an unstructured object",
		apply: func(t *testing.T, a *patch.Applier, ns string, labels map[string]string) error {
			_, err := a.Apply(t.Context(), asUnstructured(t, configMap(ns, labels)))
			return err
		},
	}}
	labelSets := []struct {
		name   string
		labels map[string]string
		// own is what the Applier applies of labels.
		own map[string]string
	}{
		{name: "the owner's labels copied", labels: map[string]string{"app": "web", shardLabel: "shard-a", drainLabel: "true"}, own: map[string]string{"app": "web"}},
		{name: "only the owner's shard and drain labels", labels: map[string]string{shardLabel: "shard-a", drainLabel: "true"}, own: map[string]string{}},
		{name: "another ring's shard label", labels: map[string]string{otherRingShard: "x"}, own: map[string]string{}},
	}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for mk, mv := range m {
			out[mk] = mv
		}
		return out
	}
	for _, form := range forms {
		for _, set := range labelSets {
			t.Run(form.name+"/"+set.name, func(t *testing.T) {
				g := NewWithT(t)
				ctx := t.Context()
				ns := env.Namespace(t)
				c := newCountingClient(t)
				a := patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})
				g.Expect(form.apply(t, a, ns, set.labels)).To(Succeed())

				live := &corev1.ConfigMap{}
				labelsOf := func() map[string]string {
					g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "child"}, live)).To(Succeed())
					if live.Labels == nil {
						return map[string]string{}
					}
					return live.Labels
				}
				g.Expect(labelsOf()).To(Equal(set.own), "the sharder's labels were applied")

				// The sharder assigns the child to the shard of its owner's new home.
				g.Expect(env.Client().Patch(ctx, live, client.RawPatch(types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"`+shardLabel+`":"shard-b"}}}`)), client.FieldOwner("sharder"))).To(Succeed())
				moved := with(set.own, shardLabel, "shard-b")

				for _, applier := range []struct {
					name string
					a    *patch.Applier
				}{{"the Applier that applied", a}, {"a freshly started Applier", patch.NewApplier(c, "cluster-operator", patch.ApplierOptions{})}} {
					c.take()
					g.Expect(form.apply(t, applier.a, ns, set.labels)).To(Succeed())
					counts := c.take()
					g.Expect(counts["apply"]+counts["patch"]).To(BeZero(), "%s sent a request for an unchanged child: %v", applier.name, counts)
					g.Expect(labelsOf()).To(Equal(moved), "%s changed the sharder's label", applier.name)
				}

				// The operator adds a label of its own, then drops it again.
				g.Expect(form.apply(t, a, ns, with(set.labels, "tier", "front"))).To(Succeed())
				g.Expect(labelsOf()).To(Equal(with(moved, "tier", "front")))
				g.Expect(form.apply(t, a, ns, set.labels)).To(Succeed())
				g.Expect(labelsOf()).To(Equal(moved), "the operator's label was not removed, or the sharder's was")
			})
		}
	}
}
