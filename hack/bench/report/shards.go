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
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// Shards is the example operator measured as rings of several shards (`make bench-shards`),
// saved apart from the other measurements so that `make bench` and `make bench-scale` keep it.
type Shards struct {
	// Command is the command that measured it.
	Command string `json:"command"`
	// Started and Finished bound the measurement.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Environment is where it was measured.
	Environment Environment `json:"environment"`
	// Results holds one run per ring size.
	Results []harness.ShardScaleResult `json:"results"`
}

// WriteShards writes s to path as JSON.
func WriteShards(path string, s Shards) error {
	s.Environment = describeEnvironment()
	return saveJSON(path, s, "the shards' measurements")
}

// LoadShards reads what WriteShards wrote; nil when path does not exist.
func LoadShards(path string) (*Shards, error) {
	return loadJSON[Shards](path, "the shards' measurements")
}

// CheckShards returns what does not hold in s: a run that failed, a write at steady state, or
// a drain (every shard joins before the sharder starts, so each Cluster is assigned once).
func CheckShards(s *Shards) []string {
	var problems []string
	for _, run := range s.Results {
		switch {
		case run.Failure != "":
			problems = append(problems, fmt.Sprintf("%d shards: %s", run.Shards, run.Failure))
		case run.SteadyWrites != 0:
			problems = append(problems, fmt.Sprintf("%d shards: %d writes at steady state, want 0", run.Shards, run.SteadyWrites))
		case run.Drains != 0:
			problems = append(problems, fmt.Sprintf("%d shards: %d drains, want 0", run.Shards, run.Drains))
		}
	}
	return problems
}

// meanMiB is the mean of byte counts, in MiB.
func meanMiB(bs []int64) float64 {
	if len(bs) == 0 {
		return 0
	}
	var sum int64
	for _, b := range bs {
		sum += b
	}
	return mib(sum) / float64(len(bs))
}

// rangeMiB prints byte counts as a range of MiB, such as "70–75".
func rangeMiB(bs []int64) string {
	if len(bs) == 0 {
		return "–"
	}
	lo, hi := fmtNum(mib(slices.Min(bs)), 0), fmtNum(mib(slices.Max(bs)), 0)
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// writeShards writes the section on the example operator as a ring of shards.
func (r *Report) writeShards(b *strings.Builder) {
	s := r.in.Shards
	b.WriteString("## The example operator as a ring of shards\n\n")
	if s == nil || len(s.Results) == 0 {
		b.WriteString("Not measured yet: run `make bench-shards`.\n\n")
		return
	}
	runs := slices.Clone(s.Results)
	slices.SortFunc(runs, func(a, b harness.ShardScaleResult) int { return cmp.Or(a.Clusters-b.Clusters, a.Shards-b.Shards) })
	var when []string
	for i, run := range runs {
		if i == 0 || run.Clusters != runs[i-1].Clusters {
			started := run.Started
			if started.IsZero() {
				started = s.Started
			}
			when = append(when, fmt.Sprintf("%d Clusters on %s UTC", run.Clusters, started.UTC().Format("2006-01-02 15:04")))
		}
	}
	fmt.Fprintf(b, "Measured by `%s` (%s; %s). Each run starts the manager binary as k shards of a ring "+
		"(`--controller-ring`, see [Scaling out: shards](production.md#scaling-out-shards)), each its own user, waits "+
		"until every shard holds its Lease, then starts the reference sharder of `testing/sharder` on the Clusters created "+
		"beforehand, so that each Cluster is assigned once; it waits until every Cluster is Ready, then through a steady "+
		"state. Every call to the simulated DNS API takes %s, so that a reconcile waits on an external system as a real "+
		"one does: that wait is what shards spread. Writes come from the API server's audit log (the shards' Lease "+
		"renewals counted apart); peak RSS is each shard's VmHWM once every Cluster was Ready, and *with nothing "+
		"assigned* its VmHWM before the sharder started. The model column is what each shard would hold if a shard cost "+
		"its fixed part plus its share of one replica's variable part, from the one-shard run on as many Clusters: "+
		"baseline + (one shard's peak − baseline) / k.\n\n",
		s.Command, s.Environment.CPU, strings.Join(when, ", "), runs[0].DNSLatency)
	b.WriteString("| Clusters | shards (k) | all Ready after | × 1 shard | largest shard's share | writes per Cluster | steady-state writes (Lease renewals) | peak RSS per shard | with nothing assigned | model | live heap per shard | CPU until Ready |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, run := range runs {
		ratio, model := againstOneShard(run, runs)
		fmt.Fprintf(b, "| %d | %d | %s s | %s | %s | %s | %d (%d) | %s MiB | %s MiB | %s | %s MiB | %s s |\n",
			run.Clusters, run.Shards, fmtNum(run.ReadySeconds, 1), ratio,
			fmtNum(run.LargestShare(), 2), fmtNum(run.WritesPerCluster, 2), run.SteadyWrites, run.SteadyLeaseWrites,
			rangeMiB(run.PeakRSSBytes), rangeMiB(run.BaselineRSSBytes), model, rangeMiB(run.LiveHeapBytes), fmtNum(run.CPUSeconds, 1))
	}
	b.WriteString("\n")
	b.WriteString("The time to Ready follows the largest shard's share, not 1/k: consistent hashing gives shards unequal " +
		"shares of a few hundred Clusters, and the slowest shard finishes last. ")
	if sameWrites(runs) {
		b.WriteString("Writes per Cluster stay those of one replica: a shard writes only what it holds, and no Cluster is written twice. ")
	} else {
		b.WriteString("Writes per Cluster should stay those of one replica (a shard writes only what it holds); a row that " +
			"shows more, or writes at steady state, does not: see [Scaling out: shards](production.md#scaling-out-shards) for " +
			"what is known of it. ")
	}
	b.WriteString("On two cores the shards, the API server and etcd share the CPU: a ring whose reconciles are bound by the " +
		"API server rather than by an external call cannot converge faster with more shards here, only spread its memory.\n\n")
	for _, run := range runs {
		if run.Failure != "" {
			fmt.Fprintf(b, "**Failed** with %d shards:\n\n```text\n%s\n```\n\n", run.Shards, strings.TrimSpace(run.Failure))
		}
	}
}

// sameWrites reports whether every run wrote as many times per Cluster as the one-shard run on as
// many Clusters, and nothing at steady state.
func sameWrites(runs []harness.ShardScaleResult) bool {
	for _, run := range runs {
		if run.SteadyWrites != 0 {
			return false
		}
		for _, one := range runs {
			if one.Clusters == run.Clusters && one.Shards == 1 && one.WritesPerCluster != run.WritesPerCluster {
				return false
			}
		}
	}
	return true
}

// againstOneShard returns run's time to Ready as a ratio of the one-shard run's on as many
// Clusters, and the model of its peak RSS per shard from that run; "–" for each without one.
func againstOneShard(run harness.ShardScaleResult, runs []harness.ShardScaleResult) (ratio, model string) {
	ratio, model = "–", "–"
	i := slices.IndexFunc(runs, func(o harness.ShardScaleResult) bool {
		return o.Clusters == run.Clusters && o.Shards == 1 && o.ReadySeconds > 0
	})
	if i < 0 {
		return ratio, model
	}
	one := runs[i]
	ratio = fmtNum(run.ReadySeconds/one.ReadySeconds, 2)
	if len(one.BaselineRSSBytes) > 0 && len(run.BaselineRSSBytes) > 0 {
		oneBaseline, onePeak := meanMiB(one.BaselineRSSBytes), meanMiB(one.PeakRSSBytes)
		model = fmtNum(oneBaseline+(onePeak-oneBaseline)/float64(run.Shards), 0) + " MiB"
	}
	return ratio, model
}
