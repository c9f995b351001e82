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

func scaleRun(n int, writesPerCluster float64, rssMiB int64, without bool) harness.ClusterOperatorResult {
	return harness.ClusterOperatorResult{
		Clusters: n, Replicas: 3, NoSimulatorDelays: true, NoCacheTransforms: without,
		Ready: time.Duration(n) * 10 * time.Millisecond, Delete: time.Duration(n) * 5 * time.Millisecond,
		PeakRSS: rssMiB << 20, WritesPerCluster: writesPerCluster,
		Audit: &harness.ClusterOperatorAudit{Writes: int(writesPerCluster * float64(n)), EventsPerCluster: 1, Steady: 30 * time.Second, QuietRequired: true},
	}
}

// floorRun is the floor operator's run at n, and withCosts adds to run what the comparison with
// the floor reads.
func floorRun(n int, rssMiB, heapMB int64) harness.ClusterOperatorResult {
	return withCosts(scaleRun(n, 9.2, rssMiB, false), true, heapMB, map[string]int{"clusters": 1, "configmaps": 1})
}

func withCosts(run harness.ClusterOperatorResult, floor bool, heapMB int64, watches map[string]int) harness.ClusterOperatorResult {
	run.Floor, run.LiveHeap, run.Watches = floor, heapMB*1000*1000, watches
	run.CPU, run.TenonCPU = time.Duration(run.Clusters)*10*time.Millisecond, time.Duration(run.Clusters)*4*time.Millisecond
	run.SentBytes, run.ReceivedBytes, run.WatchBytes = int64(run.Clusters)*8000, int64(run.Clusters)*18000, int64(run.Clusters)*7000
	run.GuardBytes = int64(run.Clusters) * 800
	run.TenonClientCPU, run.TenonCallbackCPU = time.Duration(run.Clusters)*1500*time.Microsecond, time.Duration(run.Clusters)*500*time.Microsecond
	if floor {
		run.CPU, run.TenonCPU, run.GuardBytes = time.Duration(run.Clusters)*8*time.Millisecond, 0, 0
		run.TenonClientCPU, run.TenonCallbackCPU = 0, 0
	}
	return run
}

// withoutSplit is run as measured before the lab split tenon's CPU time.
func withoutSplit(run harness.ClusterOperatorResult) harness.ClusterOperatorResult {
	run.TenonClientCPU, run.TenonCallbackCPU = 0, 0
	return run
}

func TestScaleSection(t *testing.T) {
	oneEach := map[string]int{"clusters": 1, "configmaps": 1}
	for _, tc := range []struct {
		name     string
		scale    *Scale
		want     []string
		problems int
	}{
		{
			name: "not measured",
			want: []string{"Not measured yet: run `make bench-scale`."},
		},
		{
			name: "measured",
			scale: &Scale{Command: "make bench-scale", Results: []harness.ClusterOperatorResult{
				scaleRun(10000, 9.1, 800, false), scaleRun(100, 9, 40, false), scaleRun(1000, 9.05, 110, false),
				scaleRun(1000, 9.05, 130, true),
			}},
			want: []string{
				"| 100 | 9.00 | 1.000 | 1.00 | 0.00 | 1.0 s | 10.00 ms | 0.5 s | 5.00 ms | 40 MiB | 400.0 MiB | 0 in 30 s |",
				"| 10000 | 9.10 | 1.011 |", "| 80.0 MiB | 0 in 30 s |",
				"| 1000 | 110 MiB | 130 MiB | 15.4 % |",
				"(3 replicas each;",
				"![Peak RSS and writes per Cluster against N](benchmarks/scale.png)",
			},
		},
		{
			name: "against the floor",
			scale: &Scale{Results: []harness.ClusterOperatorResult{
				withCosts(scaleRun(100, 9, 80, false), false, 9, oneEach), floorRun(100, 45, 6),
				withCosts(scaleRun(1000, 9, 110, false), false, 28, oneEach), floorRun(1000, 80, 24),
			}},
			want: []string{
				"| tenon's code per Cluster | its own computation | sent per Cluster |", "*its own computation* is what is left",
				"| 100 | example (tenon) | 90.0 KB | 1.50 | 80 MiB | 10.00 ms | 1.25 | 4.00 ms | 2.00 ms | 8000 B | 1.11 | 18000 B | 7000 B | 2 |",
				"| 100 | floor | 60.0 KB | 1 | 45 MiB | 8.00 ms | 1 | 0.00 ms | – | 8000 B | – | 18000 B | 7000 B | 2 |",
				"| 100 | floor | 60.0 KB | 1 | 45 MiB | 8.00 ms | 1 | 0.00 ms |",
				"| 1000 | example (tenon) | 28.0 KB | 1.17 |",
				"Peak RSS grows by 35.0 KB per Cluster from N=100 to N=1000, the floor's by 40.8 KB (0.86×).",
			},
		},
		{
			name: "against the floor, measured before tenon's CPU was split",
			scale: &Scale{Results: []harness.ClusterOperatorResult{
				withoutSplit(withCosts(scaleRun(100, 9, 80, false), false, 9, oneEach)), floorRun(100, 45, 6),
			}},
			want: []string{
				"| tenon's code per Cluster | sent per Cluster |",
				"| 100 | example (tenon) | 90.0 KB | 1.50 | 80 MiB | 10.00 ms | 1.25 | 4.00 ms | 8000 B | 1.11 | 18000 B | 7000 B | 2 |",
				"| 100 | floor | 60.0 KB | 1 | 45 MiB | 8.00 ms | 1 | 0.00 ms | 8000 B | – | 18000 B | 7000 B | 2 |",
			},
		},
		{
			name: "a second informer or a heap over the floor's limit fails",
			scale: &Scale{Results: []harness.ClusterOperatorResult{
				withCosts(scaleRun(100, 9, 80, false), false, 10, map[string]int{"clusters": 2, "configmaps": 1}), floorRun(100, 45, 6),
				withCosts(scaleRun(1000, 9, 110, false), false, 32, oneEach), floorRun(1000, 80, 24),
			}},
			want:     []string{"| 1000 | example (tenon) | 32.0 KB | 1.33 |"},
			problems: 3, // 2 watches of clusters and 1.67× at N=100, 1.33× at N=1,000
		},
		{
			name: "more than 5% apart fails",
			scale: &Scale{Results: []harness.ClusterOperatorResult{
				scaleRun(100, 9, 40, false), scaleRun(10000, 9.5, 800, false),
			}},
			want:     []string{"| 10000 | 9.50 | 1.056 |"},
			problems: 1,
		},
		{
			name: "a failed run is shown and fails",
			scale: &Scale{Results: []harness.ClusterOperatorResult{
				scaleRun(100, 9, 40, false), {Clusters: 10000, Failure: "did not converge\nlast line"},
			}},
			want:     []string{"| 10000 | failed |", "**Failed** at N = 10000", "last line"},
			problems: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Input{Scale: tc.scale, Environment: &Environment{}})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			r.writeScale(&b, "benchmarks")
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("section does not contain %q:\n%s", w, b.String())
				}
			}
			if got := r.Check(); len(got) != tc.problems {
				t.Errorf("Check() = %q, want %d problems", got, tc.problems)
			}
		})
	}
}

func TestScaleSavedLoadedAndCharted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scale.json")
	if s, err := LoadScale(path); err != nil || s != nil {
		t.Fatalf("LoadScale of a missing file = %v, %v; want nil, nil", s, err)
	}
	s := Scale{Command: "make bench-scale", Results: []harness.ClusterOperatorResult{scaleRun(100, 9, 40, false), scaleRun(1000, 9, 100, false), scaleRun(1000, 9, 120, true)}}
	if err := WriteScale(path, s); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadScale(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Results, loaded.Results); diff != "" {
		t.Errorf("loaded results differ (-saved +loaded):\n%s", diff)
	}
	r, err := New(Input{Scale: loaded, Environment: &Environment{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.writeScaleChart(dir); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, ChartScale)); err != nil || info.Size() == 0 {
		t.Errorf("no chart written: %v", err)
	}
}
