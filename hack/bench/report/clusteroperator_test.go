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

package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenon-dev/tenon/hack/bench/harness"
)

func TestClusterOperatorSection(t *testing.T) {
	measured := &harness.ClusterOperatorResult{
		Clusters: 100, Ready: 12300 * time.Millisecond, Delete: 4 * time.Second,
		Requests: map[string]int{"PATCH clusters/status": 300, "PATCH statefulsets": 100, "POST events": 250, "GET secrets": 5, "DELETE x": 1},
		Writes:   651, WritesPerCluster: 6.51, PeakRSS: 50 << 20,
		Audit: &harness.ClusterOperatorAudit{Writes: 651, WritesPerClusterByResource: map[string]float64{"clusters.apps.tenon.dev/status": 3, "events.events.k8s.io": 2.5},
			EventsPerCluster: 2.5, GetsPerCluster: 0.05, Steady: 30 * time.Second, QuietRequired: true},
	}
	withAudit := func(change func(a *harness.ClusterOperatorAudit)) *harness.ClusterOperatorResult {
		co := *measured
		a := *measured.Audit
		change(&a)
		co.Audit = &a
		return &co
	}
	steadyWrites := func(a *harness.ClusterOperatorAudit) {
		a.SteadyWrites = map[string]int{"patch events.events.k8s.io": 2}
		a.SteadyWriteSamples = []string{"patch events.events.k8s.io ns/c.1 → 200 at 12:00:00.000"}
	}
	for _, tc := range []struct {
		name      string
		in        Input
		want, not []string
		problems  int
	}{
		{
			name: "measured",
			in:   Input{ClusterOperator: measured},
			want: []string{"| 100 | 12.3 s | 6.51 | 4.0 s | 50 MiB |", "`PATCH clusters/status` 3.00, `POST events` 2.50, `PATCH statefulsets` 1.00, `DELETE x` 0.01.",
				"| `GET secrets` | 5 | 0.05 |"},
			not: []string{"Not measured"},
		},
		{
			name: "the audit log's figures are shown",
			in:   Input{ClusterOperator: measured},
			want: []string{"It agrees with the proxy on every kind of write", "| 6.51 | 2.50 | 0.05 | 0 | 0 | 30 s | 0 |",
				"`clusters.apps.tenon.dev/status` 3.00, `events.events.k8s.io` 2.50."},
		},
		{
			name:     "writes at steady state fail",
			in:       Input{ClusterOperator: withAudit(steadyWrites)},
			want:     []string{"| 30 s | 2 |", "patch events.events.k8s.io ns/c.1"},
			problems: 1,
		},
		{
			name: "writes at steady state are shown, not checked, when the run did not require quiet",
			in: Input{ClusterOperator: withAudit(func(a *harness.ClusterOperatorAudit) {
				steadyWrites(a)
				a.QuietRequired = false
			})},
			want: []string{"| 30 s | 2 |", "measured, not checked"},
		},
		{
			name: "duplicate Events fail",
			in: Input{ClusterOperator: withAudit(func(a *harness.ClusterOperatorAudit) {
				a.DuplicateEvents, a.DuplicateEventSamples = 1, []string{"events.events.k8s.io ns/c.1"}
			})},
			want:     []string{"| 1 | 0 | 30 s |", "Duplicate Events, such as: events.events.k8s.io ns/c.1."},
			problems: 1,
		},
		{
			name:     "a disagreement between the proxy and the audit log fails",
			in:       Input{ClusterOperator: withAudit(func(a *harness.ClusterOperatorAudit) { a.Disagreements = []string{"POST events: proxy 0, audit log 1"} })},
			want:     []string{"**It disagrees with the proxy**: POST events: proxy 0, audit log 1."},
			problems: 1,
		},
		{
			name:     "a fresh measurement without the audit log's figures fails",
			in:       Input{ClusterOperator: &harness.ClusterOperatorResult{Clusters: 100, Ready: time.Second}},
			want:     []string{"no counts from the API server's audit log"},
			problems: 1,
		},
		{
			name:     "failed",
			in:       Input{ClusterOperator: &harness.ClusterOperatorResult{Clusters: 100, Failure: "go test failed\nlast line"}},
			want:     []string{"**Failed** in this run, at N = 100", "last line"},
			problems: 1,
		},
		{
			name: "old results",
			in:   Input{RenderedFrom: "results.json"},
			want: []string{"Not measured in this run: the saved measurements have no result for it."},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Environment = &Environment{}
			r, err := New(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			r.writeClusterOperator(&b)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("section does not contain %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("section contains %q:\n%s", w, b.String())
				}
			}
			if got := len(r.Check()); got != tc.problems {
				t.Errorf("Check() = %d problems, want %d", got, tc.problems)
			}
		})
	}
}

func TestClusterOperatorSavedAndLoaded(t *testing.T) {
	want := &harness.ClusterOperatorResult{Clusters: 3, Ready: 1500 * time.Millisecond, Delete: time.Second,
		Requests: map[string]int{"POST events": 6}, Writes: 6, WritesPerCluster: 2, PeakRSS: 1 << 25}
	r, err := New(Input{ClusterOperator: want, Environment: &Environment{}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	in, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, in.ClusterOperator); diff != "" {
		t.Errorf("loaded result differs (-want +got):\n%s", diff)
	}

	// Measurements saved before the workload existed have none.
	if err := os.WriteFile(path, []byte(`{"runs": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if in, err = Load(path); err != nil {
		t.Fatal(err)
	}
	if in.ClusterOperator != nil {
		t.Errorf("loaded %+v from measurements without it", in.ClusterOperator)
	}
}
