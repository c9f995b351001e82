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

package chaos

import (
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// profileSample returns a profile sample whose stack holds the functions named, the leaf first.
func profileSample(functions ...string) *profile.Sample {
	s := &profile.Sample{}
	for _, name := range functions {
		s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: name}}}})
	}
	return s
}

func TestClassifyTellsTenonsComputationFromItsCallsAndTheOperatorsCode(t *testing.T) {
	const (
		reconcile = "github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller.(*ClusterReconciler).Reconcile"
		backoff   = "github.com/tenon-dev/tenon/requeue.(*backoff).Reconcile"
		apply     = "github.com/tenon-dev/tenon/patch.(*Applier).Apply"
		ensure    = "github.com/tenon-dev/tenon/external.(*Resource[go.shape.*uint8]).Ensure"
		observe   = "github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns.ClusterRecord.Observe"
		do        = "k8s.io/client-go/rest.(*Request).Do"
		roundTrip = "net/http.(*Transport).RoundTrip"
		malloc    = "runtime.mallocgc"
	)
	for _, c := range []struct {
		name  string
		stack []string
		want  sampleKind
	}{
		{"the operator's own code", []string{malloc, reconcile, backoff}, notTenon},
		{"the informers", []string{"k8s.io/client-go/tools/cache.(*Reflector).watch"}, notTenon},
		{"tenon converting", []string{malloc, "github.com/tenon-dev/tenon/internal/objects.ToMap", apply, reconcile, backoff}, tenonComputation},
		{"tenon's request", []string{malloc, "encoding/json.Unmarshal", do, "sigs.k8s.io/controller-runtime/pkg/client.(*client).Patch", apply, reconcile, backoff}, tenonClientCall},
		{"the HTTP round trip", []string{"syscall.Syscall", roundTrip, apply}, tenonClientCall},
		{"the provider tenon calls", []string{malloc, observe, ensure, reconcile, backoff}, tenonCallback},
		{"the provider's own HTTP calls", []string{roundTrip, "github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns.(*Client).do", observe, ensure}, tenonCallback},
		{"tenon called by the provider", []string{malloc, apply, observe, ensure}, tenonComputation},
	} {
		if got := classify(profileSample(c.stack...)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}

	var totals cpuTotals
	totals.add(profileSample(malloc, apply), 3*time.Millisecond)
	totals.add(profileSample(do, apply), 5*time.Millisecond)
	totals.add(profileSample(observe, ensure), 7*time.Millisecond)
	totals.add(profileSample(malloc, reconcile), 11*time.Millisecond)
	if want := (cpuTotals{all: 26 * time.Millisecond, tenon: 15 * time.Millisecond, clientCalls: 5 * time.Millisecond, callbacks: 7 * time.Millisecond}); totals != want {
		t.Errorf("totals %+v, want %+v", totals, want)
	}
}
