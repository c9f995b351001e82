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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// TestAnEmptyAffinityIsAppliedUntilTheServerKeepsIt applies a Deployment's pod template affinity
// (a pointer to a struct in the Go type) with a rule, then empty, again and again, and the rule
// once more (A, B, B, B, A, B, B): the server prunes the affinity the apply emptied, and the next
// apply of the same empty affinity sets it. At each step the apply is sent exactly when a dry run
// says it changes something.
func TestAnEmptyAffinityIsAppliedUntilTheServerKeepsIt(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	a := patch.NewApplier(c, "deployer", patch.ApplierOptions{})
	dep := func(affinity map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": ns},
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"affinity": affinity, "containers": []any{map[string]any{"name": "c", "image": "nginx",
						"resources": map[string]any{}, "securityContext": map[string]any{}}}}}}}}
	}
	rule := map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
		map[string]any{"weight": int64(1), "podAffinityTerm": map[string]any{"topologyKey": "zone", "labelSelector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}}}}}
	for i, aff := range []map[string]any{rule, {}, {}, {}, rule, {}, {}, {}} {
		diff := ""
		if i > 0 {
			diff = dryRunDiff(t, dep(aff), "deployer")
		}
		_, err := a.Apply(ctx, dep(aff))
		g.Expect(err).NotTo(HaveOccurred())
		sent := c.take()["apply"]
		if i > 0 {
			g.Expect(sent == 0).To(Equal(diff == ""), "step %d: sent %d, diff %s", i, sent, diff)
		}
	}
}

// TestAnOmittedEmptyMapAnotherWriterOwnsIsApplied: a ConfigMap created by another writer with a
// key in binaryData, the key taken over by this manager with ForceConflicts and given up by an
// apply of an empty binaryData. The stored form omits the empty map, but the other writer still
// owns binaryData itself: applying the empty map again, without force, is a conflict the API
// server reports, not a fixed point to skip (for the Applier that remembers the apply and for a
// fresh one that proves from managedFields). Found by TestApplySkipsOnlyWhatTheAPIServerConfirms
// (TENON_APPLY_SEED=3416598429427990460 TENON_APPLY_CASE=27).
func TestAnOmittedEmptyMapAnotherWriterOwnsIsApplied(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bin", Namespace: ns},
		BinaryData: map[string][]byte{"bin": []byte("theirs")}}
	g.Expect(env.Client().Create(ctx, created, client.FieldOwner("other-creator"))).To(Succeed())
	configMap := func(binaryData map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "bin", "namespace": ns}, "binaryData": binaryData}}
	}
	c := newCountingClient(t)
	a := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})
	_, err := a.Apply(ctx, configMap(map[string]any{"bin": "b3Vycw=="}), patch.ForceConflicts(true))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = a.Apply(ctx, configMap(map[string]any{}))
	g.Expect(err).NotTo(HaveOccurred(), "giving up the key conflicts with no one")
	live := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(created), live)).To(Succeed())
	g.Expect(live.BinaryData).To(BeEmpty())
	c.take()

	for name, applier := range map[string]*patch.Applier{"the same Applier": a, "a fresh Applier": patch.NewApplier(c, "tenon-test", patch.ApplierOptions{})} {
		_, err = applier.Apply(ctx, configMap(map[string]any{}))
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%s: the API server reports the conflict: %v", name, err)
		g.Expect(c.take()["apply"]).To(Equal(1), "%s: the apply is sent", name)
	}
}
