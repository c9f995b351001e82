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
	fewer := big(shardRun(4, 380, 88, 70, 580, 500, 470, 450))
	fewer.Workers = 2
	s := &Shards{Command: "make bench-shards", Results: []harness.ShardScaleResult{
		big(shardRun(4, 120, 95, 70, 580, 500, 470, 450)), shardRun(2, 60, 79, 70, 174, 126), fewer, big(shardRun(1, 400, 150, 70, 2000)),
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
	// Sorted by Clusters, then workers per shard (most first; 0, saved before they were
	// recorded, is 8), then ring size. One replica (a shard of 8 workers) peaks 12 MiB above its
	// idle 70 MiB on 300 Clusters and 80 MiB above on 2,000: 0.04 MiB per Cluster, nothing to
	// work at all. The model is 70 + 0.04 × N / k.
	want := []string{
		"| 300 | 1 | 8 | 90.0 s | 1.00 | 1.00 | 11.00 | 0 (4) | 82 MiB | 70 MiB | 82 MiB | fit | 10 MiB | 30.0 s |",
		"| 300 | 2 | 8 | 60.0 s | 0.67 | 0.58 | 11.00 | 0 (8) | 79 MiB | 70 MiB | 76 MiB | 1.04 | 10 MiB | 30.0 s |",
		"| 2000 | 1 | 8 | 400.0 s | 1.00 | 1.00 | 11.00 | 0 (4) | 150 MiB | 70 MiB | 150 MiB | fit | 10 MiB | 30.0 s |",
		"| 2000 | 4 | 8 | 120.0 s | 0.30 | 0.29 | 11.00 | 0 (16) | 95 MiB | 70 MiB | 90 MiB | 1.06 | 10 MiB | 30.0 s |",
		"| 2000 | 4 | 2 | 380.0 s | 0.95 | 0.29 | 11.00 | 0 (16) | 88 MiB | 70 MiB | 90 MiB | 0.98 | 10 MiB | 30.0 s |",
	}
	if !strings.Contains(b.String(), "adds to its own idle VmHWM on 300 and 2000 Clusters (the line through both): 0.0 MiB to work at all, and 41.0 KiB per Cluster") {
		t.Errorf("the section does not give one replica's fixed part and its cost per Cluster:\n%s", b.String())
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s\n%s", diff, b.String())
	}
	if problems := CheckShards(s); len(problems) != 0 {
		t.Errorf("CheckShards found %v in runs that hold", problems)
	}
}

// renderShards returns the shards section of a report of runs.
func renderShards(t *testing.T, runs ...harness.ShardScaleResult) string {
	t.Helper()
	r, err := New(Input{Shards: &Shards{Command: "make bench-shards", Results: runs}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.writeShards(&b)
	return b.String()
}

func TestTheShardsModelNeedsOneReplicaOnTwoNumbersOfClusters(t *testing.T) {
	const noModel = "| 300 | 2 | 8 | 60.0 s | 0.67 | 0.58 | 11.00 | 0 (8) | 79 MiB | 70 MiB | – | – | 10 MiB | 30.0 s |"
	lone, two := shardRun(1, 90, 82, 70, 300), shardRun(2, 60, 79, 70, 174, 126)
	fewer := shardRun(1, 90, 60, 50, 300)
	fewer.Workers, fewer.Clusters = 2, 2000 // not one replica: a shard of 2 workers
	shrinking := shardRun(1, 400, 80, 70, 2000)
	shrinking.Clusters = 2000
	for _, tc := range []struct {
		name, why string
		runs      []harness.ShardScaleResult
	}{
		{"one replica on one number of Clusters", "The model column needs one-replica runs on two numbers of Clusters", []harness.ShardScaleResult{lone, two}},
		{"the other one-shard run has fewer workers", "The model column needs one-replica runs on two numbers of Clusters", []harness.ShardScaleResult{lone, fewer, two}},
		{"one replica's peak falls as the Clusters grow",
			"what one replica's peak RSS adds to its idle VmHWM on 300 and 2000 Clusters (12 and 10 MiB) does not make a line",
			[]harness.ShardScaleResult{lone, shrinking, two}},
	} {
		if got := renderShards(t, tc.runs...); !strings.Contains(got, noModel) || !strings.Contains(got, tc.why) {
			t.Errorf("%s: the model is not left out, or not with the reason %q:\n%s", tc.name, tc.why, got)
		}
	}
}

func TestCheckShardsNamesWhatDoesNotHold(t *testing.T) {
	one := shardRun(1, 90, 82, 70, 300)
	steady, drained, failed := shardRun(2, 60, 79, 70, 150, 150), shardRun(3, 50, 79, 70, 100, 100, 100), shardRun(4, 0, 0, 0)
	steady.SteadyWrites, drained.Drains, failed.Failure = 3, 5, "go test failed"
	retried, late := shardRun(2, 60, 79, 70, 150, 150), shardRun(4, 40, 79, 70, 75, 75, 75, 75)
	retried.WritesPerCluster = one.WritesPerCluster * 1.005
	late.WritesPerCluster = 14.25
	got := CheckShards(&Shards{Results: []harness.ShardScaleResult{one, steady, drained, failed, retried, late}})
	want := []string{"2 shards of 8 workers on 300 Clusters: 3 writes at steady state, want 0", "3 shards of 8 workers on 300 Clusters: 5 drains, want 0",
		"4 shards of 8 workers on 300 Clusters: go test failed",
		"4 shards of 8 workers on 300 Clusters: 14.25 writes per Cluster until Ready, want those of one shard, 11.00"}
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

func TestEachShardIsHeldToTheModelWithItsOwnIdleMemory(t *testing.T) {
	f := fit{Working: 10, PerCluster: 0.05, Lo: 300, Hi: 2000}
	run := harness.ShardScaleResult{Shards: 2, Clusters: 2000, ReadySeconds: 100,
		PeakRSSBytes: []int64{100 << 20, 90 << 20}, BaselineRSSBytes: []int64{50 << 20, 40 << 20}}
	// Each shard: its idle VmHWM + 10 + 0.05 × 2000 / 2 = idle + 60; the column shows the mean.
	_, model, toModel := againstOneShard(run, nil, f)
	if model != "105 MiB" || toModel != "0.90–0.91" {
		t.Errorf("model %q, × model %q; want 105 MiB and 0.90–0.91 (100 / 110 and 90 / 100)", model, toModel)
	}
}

func TestARingSlowerThanItsShareIsNamed(t *testing.T) {
	slow := shardRun(4, 60, 79, 70, 90, 70, 70, 70) // 0.67 of one replica's time, largest share 0.30
	got := renderShards(t, shardRun(1, 90, 82, 70, 300), shardRun(2, 60, 79, 70, 174, 126), slow)
	if !strings.Contains(got, "Not so for 4 shards on 300 Clusters (0.67 against a share of 0.30): more than") ||
		strings.Contains(got, "2 shards on 300 Clusters (") {
		t.Errorf("the ring slower than its share is not named, or one that is not is:\n%s", got)
	}
}
