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
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenon-dev/tenon/hack/bench/harness"
)

func shardRun(k int, ready float64, peakMiB, baselineMiB int64, assigned ...int) harness.ShardScaleResult {
	run := harness.ShardScaleResult{Shards: k, Clusters: 300, DNSLatency: "500ms", ReadySeconds: ready, WritesPerCluster: 11, SteadyLeaseWrites: 4 * k,
		Assigned: map[string]int{}, CPUSeconds: 30}
	for i, n := range assigned {
		run.Assigned[string(rune('a'+i))] = n
		run.PeakRSSBytes = append(run.PeakRSSBytes, peakMiB<<20)
		run.BaselineRSSBytes = append(run.BaselineRSSBytes, baselineMiB<<20)
		run.LiveHeapBytes = append(run.LiveHeapBytes, 10<<20)
	}
	return run
}

func TestShardsSection(t *testing.T) {
	big := func(run harness.ShardScaleResult) harness.ShardScaleResult { run.Clusters = 2000; return run }
	s := &Shards{Command: "make bench-shards", Results: []harness.ShardScaleResult{
		big(shardRun(4, 120, 95, 70, 580, 500, 470, 450)), shardRun(2, 60, 79, 70, 174, 126), big(shardRun(1, 400, 150, 70, 2000)),
		shardRun(1, 90, 82, 70, 300),
	}}
	r, err := New(Input{Shards: s})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.writeShards(&b)
	var rows []string
	for line := range strings.SplitSeq(b.String(), "\n") {
		if strings.HasPrefix(line, "| 300 ") || strings.HasPrefix(line, "| 2000 ") {
			rows = append(rows, line)
		}
	}
	// Sorted by Clusters, then ring size; the model is 70 + (82 − 70) / k at 300 Clusters and
	// 70 + (150 − 70) / k at 2,000, each from the one-shard run on as many Clusters.
	want := []string{
		"| 300 | 1 | 90.0 s | 1.00 | 1.00 | 11.00 | 0 (4) | 82 MiB | 70 MiB | 82 MiB | 10 MiB | 30.0 s |",
		"| 300 | 2 | 60.0 s | 0.67 | 0.58 | 11.00 | 0 (8) | 79 MiB | 70 MiB | 76 MiB | 10 MiB | 30.0 s |",
		"| 2000 | 1 | 400.0 s | 1.00 | 1.00 | 11.00 | 0 (4) | 150 MiB | 70 MiB | 150 MiB | 10 MiB | 30.0 s |",
		"| 2000 | 4 | 120.0 s | 0.30 | 0.29 | 11.00 | 0 (16) | 95 MiB | 70 MiB | 90 MiB | 10 MiB | 30.0 s |",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s\n%s", diff, b.String())
	}
	if problems := CheckShards(s); len(problems) != 0 {
		t.Errorf("CheckShards found %v in runs that hold", problems)
	}
}

func TestCheckShardsNamesWhatDoesNotHold(t *testing.T) {
	steady, drained, failed := shardRun(2, 60, 79, 70, 150, 150), shardRun(3, 50, 79, 70, 100, 100, 100), shardRun(4, 0, 0, 0)
	steady.SteadyWrites, drained.Drains, failed.Failure = 3, 5, "go test failed"
	got := CheckShards(&Shards{Results: []harness.ShardScaleResult{steady, drained, failed}})
	want := []string{"2 shards: 3 writes at steady state, want 0", "3 shards: 5 drains, want 0", "4 shards: go test failed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckShards (-want +got):\n%s", diff)
	}
}

func TestShardsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shards.json")
	s := Shards{Command: "make bench-shards", Results: []harness.ShardScaleResult{shardRun(1, 90, 82, 70, 300)}}
	if err := WriteShards(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadShards(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Results, got.Results); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	missing, err := LoadShards(filepath.Join(t.TempDir(), "none.json"))
	if missing != nil || err != nil {
		t.Errorf("a missing file: %v, %v; want nil, nil", missing, err)
	}
}

func TestSameWritesNamesARingThatWroteMore(t *testing.T) {
	one, two := shardRun(1, 90, 82, 70, 300), shardRun(2, 60, 79, 70, 150, 150)
	if !sameWrites([]harness.ShardScaleResult{one, two}) {
		t.Error("rings that wrote as one shard did are reported as writing more")
	}
	two.WritesPerCluster = 14.25
	if sameWrites([]harness.ShardScaleResult{one, two}) {
		t.Error("a ring that wrote 14.25 per Cluster against one shard's 11 is reported as writing the same")
	}
	two.WritesPerCluster, two.SteadyWrites = 11, 360
	if sameWrites([]harness.ShardScaleResult{one, two}) {
		t.Error("a ring that wrote at steady state is reported as writing the same")
	}
}
