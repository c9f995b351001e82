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

package realkinds_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{realkinds.CRDDirectory()}})
	os.Exit(env.Run(m))
}

// TestSeedsAreValidAndMostEditsAreAccepted creates each kind's seed and checks that the edits
// the generator draws from the kind's schema are, for the most part, ones the API server
// accepts: a generator whose edits the server refuses tests nothing but refusals. Refusals are
// expected too (immutable fields, CEL rules, patterns) and are counted.
func TestSeedsAreValidAndMostEditsAreAccepted(t *testing.T) {
	const edits = 40
	for _, k := range realkinds.Kinds() {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			obj := realkinds.Create(t, env.Client(), k, env.Namespace(t), "seed")
			s, err := realkinds.Load(t.Context(), env.Config(), k.GVK)
			g.Expect(err).NotTo(HaveOccurred())

			gen := &realkinds.Gen{R: rand.New(rand.NewPCG(1, uint64(len(k.GVK.Kind))))}
			accepted, refusals := 0, map[string]int{}
			for range edits {
				changed, e, ok := gen.EditObject(s, obj.Object, realkinds.Roots(k))
				if !ok {
					continue
				}
				u := &unstructured.Unstructured{Object: changed}
				err := env.Client().Update(ctx, u, client.DryRunAll)
				if err == nil && !k.NoStatus && strings.HasPrefix(e.Path, "status") {
					err = env.Client().Status().Update(ctx, &unstructured.Unstructured{Object: changed}, client.DryRunAll)
				}
				switch {
				case err == nil:
					accepted++
				case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err):
					refusals[refusalOf(err)]++
				default:
					t.Fatalf("the dry run of %s failed: %v", e, err)
				}
			}
			t.Logf("%s: %d of %d edits accepted; refusals: %v", k.GVK.Kind, accepted, edits, top(refusals))
			g.Expect(accepted).To(BeNumerically(">=", edits/3), "too few edits the API server accepts: %v", top(refusals))
		})
	}
}

func refusalOf(err error) string {
	var s apierrors.APIStatus
	if se, ok := err.(apierrors.APIStatus); ok {
		s = se
	}
	if s != nil && s.Status().Details != nil && len(s.Status().Details.Causes) > 0 {
		c := s.Status().Details.Causes[0]
		return fmt.Sprintf("%s: %s", c.Field, firstWords(c.Message))
	}
	return firstWords(err.Error())
}

func firstWords(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

func top(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d× %s", v, k))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}
