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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ShardScaleParams configures one run of the example operator as a ring of shards.
type ShardScaleParams struct {
	// Shards is how many shards the ring has.
	Shards int
	// Clusters is N, how many Clusters the ring converges.
	Clusters int
	// DNSLatency is how long every call to the simulated DNS API takes: the external call that
	// bounds each reconcile, which sharding spreads over the shards.
	DNSLatency time.Duration
	// Workers is each shard's number of concurrent reconciles (--max-concurrent-reconciles); 0
	// keeps the lab's, DefaultShardWorkers.
	Workers int
	// Timeout bounds the test, build included; 0 means 60 minutes.
	Timeout time.Duration
}

// DefaultShardWorkers is the number of concurrent reconciles the example lab gives each replica
// and shard of the operator (its --max-concurrent-reconciles).
const DefaultShardWorkers = 8

// ShardScaleResult is what one run of the example operator as a ring of shards measured (the
// example lab's TestShardScale).
type ShardScaleResult struct {
	Shards     int    `json:"shards"`
	Clusters   int    `json:"clusters"`
	DNSLatency string `json:"dnsLatency"`
	// Workers is each shard's number of concurrent reconciles; 0 in runs saved before it was
	// recorded, which had DefaultShardWorkers (see WorkersPerShard).
	Workers int `json:"workers,omitempty"`
	// Started is when the run began; zero in runs saved before it was recorded.
	Started time.Time `json:"started,omitzero"`
	// ReadySeconds runs from the sharder's start, once every shard held its Lease, until every
	// Cluster was Ready.
	ReadySeconds float64 `json:"readySeconds"`
	// WritesPerCluster counts the shards' writes until Ready from the audit log, Lease renewals
	// left out; SteadyWrites those of the steady state after it (which must be 0), and
	// SteadyLeaseWrites the renewals in it.
	WritesPerCluster  float64 `json:"writesPerCluster"`
	SteadyWrites      int     `json:"steadyWrites"`
	SteadyLeaseWrites int     `json:"steadyLeaseWrites"`
	// PeakRSSBytes, LiveHeapBytes and BaselineRSSBytes are each shard's: its VmHWM once every
	// Cluster was Ready, its live heap at steady state, and its VmHWM before the sharder assigned
	// it anything.
	PeakRSSBytes     []int64 `json:"peakRSSBytes"`
	LiveHeapBytes    []int64 `json:"liveHeapBytes"`
	BaselineRSSBytes []int64 `json:"baselineRSSBytes"`
	// CPUSeconds is the shards' CPU time together until Ready.
	CPUSeconds float64 `json:"cpuSeconds"`
	// Assigned counts the Clusters the sharder assigned to each shard; Drains its drains.
	Assigned map[string]int `json:"assigned"`
	Drains   int            `json:"drains"`
	// Failure is the test's failure after it measured, such as a write at steady state.
	Failure string `json:"failure,omitempty"`
}

// LargestShare is the share of the Clusters assigned to the shard that got the most.
func (r ShardScaleResult) LargestShare() float64 {
	if r.Clusters == 0 || len(r.Assigned) == 0 {
		return 0
	}
	return float64(slices.Max(slices.Collect(maps.Values(r.Assigned)))) / float64(r.Clusters)
}

// String names the run: "4 shards of 8 workers on 2000 Clusters".
func (r ShardScaleResult) String() string {
	return fmt.Sprintf("%d shards of %d workers on %d Clusters", r.Shards, r.WorkersPerShard(), r.Clusters)
}

// WorkersPerShard is each shard's number of concurrent reconciles in the run.
func (r ShardScaleResult) WorkersPerShard() int {
	if r.Workers == 0 {
		return DefaultShardWorkers
	}
	return r.Workers
}

// RunShardScale measures the example operator as p.Shards shards of a ring with the reference
// sharder of testing/sharder, on p.Clusters Clusters whose every DNS call takes p.DNSLatency, each
// shard with p.Workers concurrent reconciles: the time until all are Ready, the shards' writes,
// the steady state, and each shard's memory. It runs, in the example's lab,
//
//	go test ./chaos -count=1 -run '^TestShardScale$' -chaos=scale -chaos.clusters=n -chaos.shards=k -chaos.dns-latency=d \
//		-chaos.operator-args=--max-concurrent-reconciles=w -chaos.json=...
//
// and reads the JSON it writes; see RunClusterOperator for how failures are returned.
func RunShardScale(ctx context.Context, p ShardScaleParams) (ShardScaleResult, error) {
	if p.Shards < 1 || p.Clusters < 1 || p.Workers < 0 {
		return ShardScaleResult{}, fmt.Errorf("a ring needs at least 1 shard, 1 Cluster and no negative number of workers, not %d, %d and %d",
			p.Shards, p.Clusters, p.Workers)
	}
	if p.Timeout == 0 {
		p.Timeout = clusterOperatorTimeout
	}
	if p.Workers == 0 {
		p.Workers = DefaultShardWorkers
	}
	data, failure, err := runLabTest(ctx, "TestShardScale", func(out string) []string {
		return []string{"test", "./chaos", "-count=1", "-run", "^TestShardScale$", "-timeout", p.Timeout.String(),
			"-chaos=scale", fmt.Sprintf("-chaos.clusters=%d", p.Clusters), fmt.Sprintf("-chaos.shards=%d", p.Shards),
			"-chaos.dns-latency=" + p.DNSLatency.String(), fmt.Sprintf("-chaos.operator-args=--max-concurrent-reconciles=%d", p.Workers),
			"-chaos.json=" + out}
	})
	if err != nil {
		return ShardScaleResult{}, err
	}
	res, err := ReadShardScaleResult(data)
	if err != nil {
		return ShardScaleResult{}, errors.Join(failure, err)
	}
	if res.Shards != p.Shards || res.Clusters != p.Clusters {
		return ShardScaleResult{}, errors.Join(failure, fmt.Errorf("the shards' result is for %d shards and %d Clusters, not %d and %d",
			res.Shards, res.Clusters, p.Shards, p.Clusters))
	}
	res.Workers = p.Workers
	if failure != nil {
		res.Failure = failure.Error()
	}
	return res, nil
}

// ReadShardScaleResult decodes what the example lab's TestShardScale writes with -chaos.json
// (its type ShardScaleResult, whose fields JSON names as Go does).
func ReadShardScaleResult(data []byte) (ShardScaleResult, error) {
	var res ShardScaleResult
	if err := json.Unmarshal(data, &res); err != nil {
		return ShardScaleResult{}, fmt.Errorf("failed to decode the shards' result %s: %w", data, err)
	}
	return res, nil
}
