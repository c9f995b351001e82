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

package harness

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The lab writes its ShardScaleResult with Go's field names.
func TestReadShardScaleResultReadsTheLabsJSON(t *testing.T) {
	data := []byte(`{"Shards": 2, "Clusters": 300, "DNSLatency": "500ms", "ReadySeconds": 58.3, "WritesPerCluster": 11,
		"SteadyWrites": 0, "SteadyLeaseWrites": 24, "PeakRSSBytes": [1, 2], "LiveHeapBytes": [3, 4], "CPUSeconds": 31.5,
		"BaselineRSSBytes": [5, 6], "Assigned": {"shard-0": 174, "shard-1": 126}, "Drains": 0}`)
	got, err := ReadShardScaleResult(data)
	if err != nil {
		t.Fatal(err)
	}
	want := ShardScaleResult{Shards: 2, Clusters: 300, DNSLatency: "500ms", ReadySeconds: 58.3, WritesPerCluster: 11, SteadyLeaseWrites: 24,
		PeakRSSBytes: []int64{1, 2}, LiveHeapBytes: []int64{3, 4}, BaselineRSSBytes: []int64{5, 6}, CPUSeconds: 31.5,
		Assigned: map[string]int{"shard-0": 174, "shard-1": 126}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if share := got.LargestShare(); share != 0.58 {
		t.Errorf("LargestShare = %v, want 0.58", share)
	}
}
