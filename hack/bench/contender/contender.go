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

package contender

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Contender is one implementation of the benchmark's controller.
type Contender struct {
	// Name identifies the contender in flags, tables and charts.
	Name string

	// Library names what the contender uses to write, for the report.
	Library string

	// ReadYourWrites turns on controller-runtime's read-your-writes consistency for the manager's
	// client (client.CacheOptions.EnableReadYourWritesConsistency, experimental in v0.25): a read
	// from the cache waits until the cache has seen the reconciler's own earlier writes. The
	// floor needs it to be the floor: without it, a reconcile that runs before the informer
	// delivered the previous reconcile's status write sees a stale object and writes again.
	ReadYourWrites bool

	// New returns the contender's reconciler. c is the manager's client: reads come from the
	// informer cache, writes go to the API server. fieldOwner is the field manager to write with.
	New func(c client.Client, fieldOwner string) reconcile.Reconciler
}

// TenonName is the name of the contender that uses tenon's patch.Helper as its documentation
// shows, on controller-runtime's default manager (a cached client that does not read its own
// writes).
const TenonName = "tenon (default manager)"

// FloorName is the name of the baseline the others are compared with.
const FloorName = "floor"

// All returns every contender, the floor first.
func All() []Contender {
	return []Contender{
		{Name: FloorName, Library: "controller-runtime client only, hand-written minimal writes", ReadYourWrites: true, New: newFloor},
		{Name: "naive", Library: "kubebuilder sample style: Update, meta.SetStatusCondition, Status().Update", New: newNaive},
		{Name: "controllerutil", Library: "controller-runtime controllerutil.CreateOrPatch", New: newControllerutil},
		{Name: "flux", Library: "fluxcd/pkg/runtime patch + conditions", New: newFlux},
		{Name: "cluster-api", Library: "cluster-api util/patch + util/conditions + util/finalizers", New: newClusterAPI},
		{Name: TenonName, Library: "tenon finalizer.Ensure + conditions + patch.Helper with a patch.History + requeue", New: newTenon},
		{Name: "tenon-ssa", Library: "tenon finalizer.Ensure + patch.Applier.ApplyStatus", New: newTenonSSA},
	}
}

// Select returns the contenders named in names (comma-separated), in the order of All, or all of
// them for an empty string. The floor is always included: every figure is a ratio to it.
func Select(names string) ([]Contender, error) {
	all := All()
	if strings.TrimSpace(names) == "" {
		return all, nil
	}
	want := map[string]bool{FloorName: true}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, c := range all {
			if c.Name == n {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("failed to select contenders: unknown contender %q", n)
		}
		want[n] = true
	}
	var out []Contender
	for _, c := range all {
		if want[c.Name] {
			out = append(out, c)
		}
	}
	return out, nil
}
