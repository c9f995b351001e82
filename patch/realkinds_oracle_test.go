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

// The Applier's dry-run oracle on real kinds: the cases of apply_oracle_test.go, with objects,
// other managers' applies and updates, and this manager's changes drawn from the schemas of
// internal/realkinds instead of hand-written fields.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"

	"github.com/tenon-dev/tenon/internal/realkinds"
)

// maxNoChangeApplyRateRealKinds bounds the share of applies on real kinds that changed nothing.
// Real schemas have many more values the API server defaults or normalises inside what an apply
// declares (a container's defaulted fields, quantities) than the hand-written kinds; each such
// apply is sent because the proof declines it, and changes nothing.
const maxNoChangeApplyRateRealKinds = 0.35

func TestRealKindsApplySkipsOnlyWhatTheAPIServerConfirms(t *testing.T) {
	var kinds []*oracleKind
	for _, k := range loadRealKinds(t) {
		ok := &oracleKind{gvk: k.GVK, real: k, newTyped: k.New}
		if k.Builtin() {
			ok.newConfiguration = func() runtime.ApplyConfiguration {
				ac, _ := applyconfigurations.ForKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind)).(runtime.ApplyConfiguration)
				return ac
			}
		}
		kinds = append(kinds, ok)
		if _, hasStatus := k.Seed()["status"]; hasStatus && !k.NoStatus {
			kinds = append(kinds, &oracleKind{gvk: k.GVK, real: k, newTyped: k.New, newConfiguration: ok.newConfiguration, status: true})
		}
	}
	runOracle(t, kinds, oracleBounds{noChangeRate: maxNoChangeApplyRateRealKinds, owned: true, configurations: true})
}

// realRoots returns the roots of k's objects the desired objects of an oracle case change: the
// status for a status kind, the rest otherwise.
func (k *oracleKind) realRoots() []string {
	if k.status {
		return []string{"status"}
	}
	var roots []string
	for _, r := range realkinds.Roots(k.real.Kind) {
		if r != "status" && !strings.HasPrefix(r, "status.") {
			roots = append(roots, r)
		}
	}
	return roots
}

// realDesired returns a desired object of a real kind: its seed (the status only, for a status
// kind) with up to two changes drawn from its schema.
func (k *oracleKind) realDesired(r *rand.Rand, ns, name string) map[string]any {
	seed := realkinds.Object(k.real.Kind, ns, name).Object
	m := k.identity(ns, name)
	if !k.real.Namespaced {
		delete(m["metadata"].(map[string]any), "namespace")
	}
	for key, v := range seed {
		if key != "metadata" && (key == "status") == k.status {
			m[key] = v
		}
	}
	k.realMutate(r, m, r.IntN(3))
	return m
}

// realPartial returns what another manager applies: one field of a changed seed.
func (k *oracleKind) realPartial(r *rand.Rand, ns, name string) map[string]any {
	full := k.realDesired(r, ns, name)
	gen := &realkinds.Gen{R: r}
	changed, e, ok := gen.EditObject(k.real.schema, full, k.realRoots())
	m := k.identity(ns, name)
	if !k.real.Namespaced {
		delete(m["metadata"].(map[string]any), "namespace")
	}
	if !ok {
		return m
	}
	// The field edited, or the list it is an element of.
	var path []string
	for _, p := range strings.Split(e.Path, ".") {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			break
		}
		path = append(path, p)
	}
	if v, found := lookupPath(changed, path); found && len(path) > 0 {
		setApplyPath(m, path, v)
	}
	return m
}

// realMutate makes n changes of m drawn from the kind's schema, in place, and says what they were.
func (k *oracleKind) realMutate(r *rand.Rand, m map[string]any, n int) string {
	gen := &realkinds.Gen{R: r}
	var did []string
	cur := m
	for range n {
		changed, e, ok := gen.EditObject(k.real.schema, cur, k.realRoots())
		if ok {
			cur = changed
			did = append(did, e.String())
		}
	}
	if len(did) > 0 {
		clear(m)
		for key, v := range cur {
			m[key] = v
		}
	}
	return strings.Join(did, ", ")
}

func lookupPath(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}
