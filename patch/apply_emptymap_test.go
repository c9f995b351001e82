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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
