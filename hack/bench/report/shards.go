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

// CheckShards returns what does not hold in s: a run that failed, a write at steady state, a
// drain (every shard joins before the sharder starts, so each Cluster is assigned once), or
// more writes per Cluster until Ready than the one-shard run on as many Clusters made, by more
// than 1% (a retried conflict or two; the 14.25 against 11.00 of a sharder that labelled
// children late is what it catches).
func CheckShards(s *Shards) []string {
	var problems []string
	for _, run := range s.Results {
		one, hasOne := oneReplicaOn(s.Results, run.Clusters)
		switch {
		case run.Failure != "":
			problems = append(problems, fmt.Sprintf("%s: %s", run, run.Failure))
		case run.SteadyWrites != 0:
			problems = append(problems, fmt.Sprintf("%s: %d writes at steady state, want 0", run, run.SteadyWrites))
		case run.Drains != 0:
			problems = append(problems, fmt.Sprintf("%s: %d drains, want 0", run, run.Drains))
		case hasOne && run.WritesPerCluster > one.WritesPerCluster*1.01:
			problems = append(problems, fmt.Sprintf("%s: %s writes per Cluster until Ready, want those of one shard, %s",
				run, fmtNum(run.WritesPerCluster, 2), fmtNum(one.WritesPerCluster, 2)))
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
	slices.SortFunc(runs, func(a, b harness.ShardScaleResult) int {
		return cmp.Or(a.Clusters-b.Clusters, b.WorkersPerShard()-a.WorkersPerShard(), a.Shards-b.Shards)
	})
	writeShardsIntro(b, s, runs)
	f, why := workingReplica(runs)
	writeShardsModel(b, f, why)
	b.WriteString("| Clusters | shards (k) | workers per shard | all Ready after | × 1 shard | largest shard's share | writes per Cluster | steady-state writes (Lease renewals) | peak RSS per shard | with nothing assigned | model | × model | live heap per shard | CPU until Ready |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, run := range runs {
		ratio, model, toModel := againstOneShard(run, runs, f)
		fmt.Fprintf(b, "| %d | %d | %d | %s s | %s | %s | %s | %d (%d) | %s MiB | %s MiB | %s | %s | %s MiB | %s s |\n",
			run.Clusters, run.Shards, run.WorkersPerShard(), fmtNum(run.ReadySeconds, 1), ratio,
			fmtNum(run.LargestShare(), 2), fmtNum(run.WritesPerCluster, 2), run.SteadyWrites, run.SteadyLeaseWrites,
			rangeMiB(run.PeakRSSBytes), rangeMiB(run.BaselineRSSBytes), model, toModel, rangeMiB(run.LiveHeapBytes), fmtNum(run.CPUSeconds, 1))
	}
	b.WriteString("\n")
	b.WriteString("The time to Ready follows the largest shard's share, not 1/k: consistent hashing gives shards unequal " +
		"shares of a few hundred Clusters, and the slowest shard finishes last. ")
	if slow := slowerThanShare(runs); len(slow) > 0 {
		fmt.Fprintf(b, "Not so for %s: more than 1.5 × the largest share of one replica's time, so something other than "+
			"the DNS wait bounds them on these two cores, which these runs do not tell apart. ", strings.Join(slow, "; "))
	}
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
			fmt.Fprintf(b, "**Failed**, %s:\n\n```text\n%s\n```\n\n", run, strings.TrimSpace(run.Failure))
		}
	}
}

// writeShardsIntro writes how the runs were measured, and when.
func writeShardsIntro(b *strings.Builder, s *Shards, runs []harness.ShardScaleResult) {
	var when []string
	for i := 0; i < len(runs); {
		j := i
		first, last := startOf(runs[i], s), startOf(runs[i], s)
		for ; j < len(runs) && runs[j].Clusters == runs[i].Clusters; j++ {
			first, last = minTime(first, startOf(runs[j], s)), maxTime(last, startOf(runs[j], s))
		}
		const layout = "2006-01-02 15:04"
		if first.Equal(last) {
			when = append(when, fmt.Sprintf("%d Clusters on %s UTC", runs[i].Clusters, first.UTC().Format(layout)))
		} else {
			when = append(when, fmt.Sprintf("%d Clusters from %s to %s UTC", runs[i].Clusters, first.UTC().Format(layout), last.UTC().Format(layout)))
		}
		i = j
	}
	fmt.Fprintf(b, "Measured by `%s` (%s; %s). Each run starts the manager binary as k shards of a ring "+
		"(`--controller-ring`, see [Scaling out: shards](production.md#scaling-out-shards)), each its own user, waits "+
		"until every shard holds its Lease, then starts the reference sharder of `testing/sharder` on the Clusters created "+
		"beforehand, so that each Cluster is assigned once; it waits until every Cluster is Ready, then through a steady "+
		"state. Every call to the simulated DNS API takes %s, so that a reconcile waits on an external system as a real "+
		"one does: that wait is what shards spread. Writes come from the API server's audit log (the shards' Lease "+
		"renewals counted apart); peak RSS is each shard's VmHWM once every Cluster was Ready, and *with nothing "+
		"assigned* its VmHWM before the sharder started. Each shard runs %d reconciles at once, as the lab runs one "+
		"replica (`--max-concurrent-reconciles`), unless the workers column says otherwise.\n\n",
		s.Command, s.Environment.CPU, strings.Join(when, ", "), runs[0].DNSLatency, harness.DefaultShardWorkers)
}

// writeShardsModel writes what the model column is, from the fit f of one replica's memory, or
// why it is left out.
func writeShardsModel(b *strings.Builder, f fit, why string) {
	if why == "" {
		fmt.Fprintf(b, "The model column is what each shard would hold if a shard cost what an idle process holds, plus "+
			"what working costs a replica whatever its number of Clusters, plus an even share of what one replica "+
			"holds per Cluster: idle + working + per Cluster × N / k. The last two come from what one replica's peak "+
			"RSS adds to its own idle VmHWM on %d and %d Clusters (the line through both): %s MiB to work at all, and "+
			"%s KiB per Cluster. *× model* is each shard's peak against the model with its own idle VmHWM (*fit* for the "+
			"runs the line goes through). Two things the model leaves out: consistent hashing gives shards uneven "+
			"shares (see the largest shard's share), and every shard caches every Cluster's directory entry (a tracked "+
			"child, which the sharder does not assign), so that a shard also holds a little for each Cluster it does "+
			"not own.\n\n",
			f.Lo, f.Hi, fmtNum(f.Working, 1), fmtNum(f.PerCluster*1024, 1))
	} else {
		b.WriteString(why + "\n\n")
	}
}

// startOf returns when run started: its own start, or for runs saved before it was recorded,
// the measurement's.
func startOf(run harness.ShardScaleResult, s *Shards) time.Time {
	if run.Started.IsZero() {
		return s.Started
	}
	return run.Started
}

// minTime returns the earlier of a and b; maxTime the later.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// slowerThanShare names the runs of several shards, each with one replica's workers, whose time
// to Ready is more than 1.5 times their largest share of the one replica's on as many Clusters.
func slowerThanShare(runs []harness.ShardScaleResult) []string {
	var slow []string
	for _, run := range runs {
		if run.Shards == 1 || run.WorkersPerShard() != harness.DefaultShardWorkers || run.ReadySeconds == 0 {
			continue
		}
		if one, ok := oneReplicaOn(runs, run.Clusters); ok && run.ReadySeconds/one.ReadySeconds > 1.5*run.LargestShare() {
			slow = append(slow, fmt.Sprintf("%d shards on %d Clusters (%s against a share of %s)", run.Shards, run.Clusters,
				fmtNum(run.ReadySeconds/one.ReadySeconds, 2), fmtNum(run.LargestShare(), 2)))
		}
	}
	return slow
}

// sameWrites reports whether every run wrote as many times per Cluster as the one-shard run on as
// many Clusters, and nothing at steady state.
func sameWrites(runs []harness.ShardScaleResult) bool {
	for _, run := range runs {
		if run.SteadyWrites != 0 {
			return false
		}
		if one, ok := oneReplicaOn(runs, run.Clusters); ok && one.WritesPerCluster != run.WritesPerCluster {
			return false
		}
	}
	return true
}

// againstOneShard returns run's time to Ready as a ratio of the one-shard run's on as many
// Clusters with the default number of workers, the model of its peak RSS per shard from f (none
// when f is zero; see writeShardsModel), and its shards' peaks as ratios of each one's model
// ("fit" for a run f was drawn through); "–" for each without one.
func againstOneShard(run harness.ShardScaleResult, runs []harness.ShardScaleResult, f fit) (ratio, model, toModel string) {
	ratio, model, toModel = "–", "–", "–"
	if one, ok := oneReplicaOn(runs, run.Clusters); ok {
		ratio = fmtNum(run.ReadySeconds/one.ReadySeconds, 2)
	}
	if f.PerCluster <= 0 || len(run.PeakRSSBytes) == 0 || len(run.BaselineRSSBytes) != len(run.PeakRSSBytes) {
		return ratio, model, toModel
	}
	variable := f.Working + f.PerCluster*float64(run.Clusters)/float64(run.Shards)
	model = fmtNum(meanMiB(run.BaselineRSSBytes)+variable, 0) + " MiB"
	if isOneReplica(run) && (run.Clusters == f.Lo || run.Clusters == f.Hi) {
		return ratio, model, "fit"
	}
	ratios := make([]float64, len(run.PeakRSSBytes))
	for i, peak := range run.PeakRSSBytes {
		ratios[i] = mib(peak) / (mib(run.BaselineRSSBytes[i]) + variable)
	}
	lo, hi := fmtNum(slices.Min(ratios), 2), fmtNum(slices.Max(ratios), 2)
	if toModel = lo; hi != lo {
		toModel = lo + "–" + hi
	}
	return ratio, model, toModel
}

// isOneReplica reports whether run is the operator as one shard with the default number of
// workers: one replica, from which the model of a ring's memory is made.
func isOneReplica(run harness.ShardScaleResult) bool {
	return run.Shards == 1 && run.WorkersPerShard() == harness.DefaultShardWorkers && run.ReadySeconds > 0 && len(run.PeakRSSBytes) > 0
}

// oneReplicaOn returns the run among runs of one replica (see isOneReplica) on clusters
// Clusters that did not fail, against which the rings on as many Clusters are measured.
func oneReplicaOn(runs []harness.ShardScaleResult, clusters int) (harness.ShardScaleResult, bool) {
	i := slices.IndexFunc(runs, func(o harness.ShardScaleResult) bool {
		return isOneReplica(o) && o.Clusters == clusters && o.Failure == ""
	})
	if i < 0 {
		return harness.ShardScaleResult{}, false
	}
	return runs[i], true
}

// fit is the line through what one replica's peak RSS adds to its own idle VmHWM, on the fewest
// and the most Clusters measured: what working costs a replica whatever its number of Clusters
// (Working, MiB) and per Cluster (PerCluster, MiB), from its runs on Lo and Hi Clusters. Each
// process's idle VmHWM varies from run to run by a few MiB; measured from its own, the line
// does not carry that variation.
type fit struct {
	Working, PerCluster float64
	Lo, Hi              int
}

// growth returns what run's peak RSS adds to its idle VmHWM, in MiB, on average over its shards.
func growth(run harness.ShardScaleResult) float64 {
	return meanMiB(run.PeakRSSBytes) - meanMiB(run.BaselineRSSBytes)
}

// workingReplica returns the fit of one replica's memory against its number of Clusters, or why
// there is none.
func workingReplica(runs []harness.ShardScaleResult) (f fit, why string) {
	var ones []harness.ShardScaleResult
	for _, run := range runs {
		if isOneReplica(run) && len(run.BaselineRSSBytes) > 0 {
			ones = append(ones, run)
		}
	}
	byClusters := func(a, b harness.ShardScaleResult) int { return a.Clusters - b.Clusters }
	if len(ones) == 0 || slices.MinFunc(ones, byClusters).Clusters == slices.MaxFunc(ones, byClusters).Clusters {
		return fit{}, "The model column needs one-replica runs on two numbers of Clusters, to tell what working costs a " +
			"replica whatever its number of Clusters."
	}
	lo, hi := slices.MinFunc(ones, byClusters), slices.MaxFunc(ones, byClusters)
	f = fit{Lo: lo.Clusters, Hi: hi.Clusters}
	f.PerCluster = (growth(hi) - growth(lo)) / float64(hi.Clusters-lo.Clusters)
	f.Working = growth(lo) - f.PerCluster*float64(lo.Clusters)
	if f.PerCluster <= 0 || f.Working < 0 {
		return fit{}, fmt.Sprintf("The model column is left out: what one replica's peak RSS adds to its idle VmHWM on %d and %d "+
			"Clusters (%s and %s MiB) does not make a line with a cost per Cluster and a fixed part of working that are positive.",
			lo.Clusters, hi.Clusters, fmtNum(growth(lo), 0), fmtNum(growth(hi), 0))
	}
	return f, ""
}
