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

package names_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenon-dev/tenon/internal/names"
)

var seedFlag = flag.Uint64("names.seed", 0, "the seed of the random names (0: a fresh one)")

// agree fails t unless the names package and apimachinery's validation agree on s.
func agree(t *testing.T, s, replay string) {
	t.Helper()
	if got, want := names.IsLabelValue(s), len(content.IsLabelValue(s)) == 0; got != want {
		t.Fatalf("IsLabelValue(%q) = %v; apimachinery: %v%s", s, got, want, replay)
	}
	if got, want := names.IsQualifiedName(s), len(validation.ValidateFinalizerName(s, field.NewPath("f"))) == 0; got != want {
		t.Fatalf("IsQualifiedName(%q) = %v; apimachinery's ValidateFinalizerName: %v%s", s, got, want, replay)
	}
}

// TestNamesAgreeWithApimachinery draws names from the characters and lengths where the rules
// change (63 and 253 characters, dots, slashes, case), and pins a few.
func TestNamesAgreeWithApimachinery(t *testing.T) {
	for _, s := range []string{"", "a", "-", "a-", "a/b", "/b", "a/", "a//b", "example.com/cleanup", "Example.com/cleanup",
		"a.b/c", "a..b/c", ".a/c", "a-.b/c", "0b7f4e4c-3f1d-4d3e-9a43-1f0e6c2d5a10", "a_b", "_a", "a.", "é",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b"} {
		agree(t, s, "")
	}
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	r := rand.New(rand.NewPCG(seed, 0))
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "-", "_", ".", "/", "é", " ", "\x00"}
	for i := range 50000 {
		var b strings.Builder
		n := []int{r.IntN(8), 60 + r.IntN(8), 250 + r.IntN(10)}[r.IntN(3)]
		for range n {
			if r.IntN(4) == 0 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteString(alphabet[r.IntN(6)])
			}
		}
		name := b.String()
		if r.IntN(2) == 0 {
			// A finalizer's shape: a subdomain of labels of random lengths, '/' and a name, with
			// a character changed now and then.
			var p strings.Builder
			for j := range 1 + r.IntN(4) {
				if j > 0 {
					p.WriteByte('.')
				}
				for range 1 + []int{r.IntN(3), r.IntN(70)}[r.IntN(2)] {
					p.WriteByte("abz09-"[r.IntN(6)])
				}
			}
			name = p.String() + "/" + name
			if at := r.IntN(len(name)); r.IntN(3) == 0 {
				name = name[:at] + alphabet[r.IntN(len(alphabet))] + name[at+1:]
			}
		}
		agree(t, name, fmt.Sprintf(" (replay: -names.seed=%d, name %d)", seed, i))
	}
}
