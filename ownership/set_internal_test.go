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

package ownership

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/randfill"
)

var referencesSeed = flag.Int64("references.seed", 0, "the seed of TestUnstructuredOwnerReferencesAreWhatUnstructuredWrites's references (0: a fresh one)")

// TestUnstructuredOwnerReferencesAreWhatUnstructuredWrites fills random owner references, every
// field of the type included (a field added upstream is filled too), and sets them both ways.
func TestUnstructuredOwnerReferencesAreWhatUnstructuredWrites(t *testing.T) {
	seed := *referencesSeed
	if seed == 0 {
		seed = rand.Int64()
	}
	f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(1, 3)
	for i := range 500 {
		var refs []metav1.OwnerReference
		f.Fill(&refs)
		if refs == nil {
			continue
		}
		for _, content := range []func() map[string]any{
			func() map[string]any { return map[string]any{"kind": "ConfigMap"} },
			func() map[string]any { return map[string]any{"metadata": map[string]any{"name": "a"}} },
		} {
			want := &unstructured.Unstructured{Object: content()}
			want.SetOwnerReferences(refs)
			got := content()
			if !setUnstructuredOwnerReferences(got, refs) {
				t.Fatalf("seed %d, case %d: not set", seed, i)
			}
			if diff := cmp.Diff(want.Object, got); diff != "" {
				t.Fatalf("seed %d, case %d (replay: -references.seed=%d): (-Unstructured.SetOwnerReferences +ours)\n%s", seed, i, seed, diff)
			}
		}
	}
	for _, content := range []map[string]any{nil, {"metadata": "x"}} {
		if setUnstructuredOwnerReferences(content, []metav1.OwnerReference{{Name: "a"}}) {
			t.Fatalf("%v: set, where Unstructured.SetOwnerReferences makes its own choice", content)
		}
	}
}
