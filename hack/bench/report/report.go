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

// Package report turns the benchmark's measurements into figures: medians and spreads per
// contender and workload, ratios to the floor, the invariants tenon claims, a Markdown report
// and charts.
//
// # Figures
//
// Every figure is computed per run, then summarised over the runs as the median with the
// smallest and largest value (the spread). Ratios to the floor are taken within each run (the
// contender's figure divided by the floor's in the same run, on the same control plane) and then
// summarised the same way, so drift of the machine between runs cancels out.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/hack/bench/contender"
	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// Input is what a report is made of.
type Input struct {
	Params     harness.Params
	Contenders []contender.Contender
	Runs       []harness.RunResult
	// ClusterOperator is the example-operator workload's result, or nil when it was not run
	// (or the saved measurements predate it).
	ClusterOperator *harness.ClusterOperatorResult
	// ClusterOperatorFloor is the floor operator's result on the same workload, measured right
	// after ClusterOperator, or nil.
	ClusterOperatorFloor *harness.ClusterOperatorResult
	// Scale is the example operator at several N (`make bench-scale`), or nil.
	Scale *Scale
	// ScaleLoaded reports that Scale was read from a file rather than measured now: the report
	// shows it, and Check leaves it to the command that measured it.
	ScaleLoaded bool
	// Shards is the example operator as rings of shards (`make bench-shards`), or nil.
	Shards *Shards
	// Command is the command that produced the measurements, printed in the report.
	Command string
	// Started and Finished bound the measurement.
	Started, Finished time.Time
	// MicroFile is a file of benchstat output to include, or empty.
	MicroFile string
	// MicroRaw is the `go test -bench -benchmem` output of the micro-benchmarks, from which the
	// report computes its own tables, or empty.
	MicroRaw string
	// RenderedFrom names the file of saved measurements the report was rendered from, when it was
	// not rendered right after measuring.
	RenderedFrom string
	// Environment describes where the measurements were taken; nil means this machine, now.
	// A report re-rendered from saved measurements passes the environment saved with them.
	Environment *Environment
}

// Report holds the measurements and the figures computed from them.
type Report struct {
	in       Input
	micro    string
	microSet *microSet
	env      Environment
	// ryw selects the read-your-writes runs (those after Params.Runs) instead of the main ones.
	ryw bool
}

// New computes a report from in. It fails when the micro-benchmark file cannot be read.
func New(in Input) (*Report, error) {
	r := &Report{in: in}
	if in.Environment != nil {
		r.env = *in.Environment
	} else {
		r.env = describeEnvironment()
	}
	if in.MicroFile != "" {
		data, err := readFile(in.MicroFile)
		if err != nil {
			return nil, fmt.Errorf("failed to read micro-benchmark results: %w", err)
		}
		r.micro = data
	}
	if in.MicroRaw != "" {
		data, err := readFile(in.MicroRaw)
		if err != nil {
			return nil, fmt.Errorf("failed to read micro-benchmark results: %w", err)
		}
		if r.microSet, err = parseMicro(data); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Metric extracts one figure from a workload's result.
type Metric struct {
	// Name is a short label, Unit what the figure counts.
	Name, Unit string
	// Value returns the figure, and false when the workload has none.
	Value func(w *harness.WorkloadResult) (float64, bool)
}

// The metrics the report shows.
var (
	WritesPerObject = Metric{Name: "writes per object", Unit: "requests", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return perObject(w, w.Requests.Writes().Requests)
	}}
	ReadsPerObject = Metric{Name: "reads per object", Unit: "requests", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return perObject(w, w.Requests.Reads().Requests)
	}}
	WriteBytesPerObject = Metric{Name: "write bytes per object", Unit: "bytes", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return perObject(w, int(w.Requests.Writes().RequestBytes))
	}}
	VersionsPerObject = Metric{Name: "new versions per object", Unit: "versions", Value: func(w *harness.WorkloadResult) (float64, bool) {
		if w.Versions < 0 {
			return 0, false
		}
		return perObject(w, w.Versions)
	}}
	Conflicts409 = Metric{Name: "409 responses", Unit: "responses", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.Requests.All().Conflicts), true
	}}
	ReconcileErrors = Metric{Name: "reconcile errors", Unit: "errors", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.Reconcile.Errors), true
	}}
	ConflictErrors = Metric{Name: "of which 409", Unit: "errors", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.Reconcile.ConflictErrors), true
	}}
	QuietRequeues = Metric{Name: "requeues without error", Unit: "requeues", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.Reconcile.Requeues), true
	}}
	Reconciles = Metric{Name: "reconciles", Unit: "reconciles", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.Reconcile.Reconciles), true
	}}
	LostUpdates = Metric{Name: "lost updates", Unit: "fields", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return float64(w.LostUpdates), w.Workload == harness.Contention
	}}
	WallSeconds = Metric{Name: "wall time", Unit: "s", Value: func(w *harness.WorkloadResult) (float64, bool) {
		return w.Wall.Seconds(), true
	}}
	WriterSeconds = Metric{Name: "writers' duration", Unit: "s", Value: func(w *harness.WorkloadResult) (float64, bool) {
		if w.Writers == nil {
			return 0, false
		}
		return w.Writers.Duration.Seconds(), true
	}}
	SettleSeconds = Metric{Name: "settle after the writers", Unit: "s", Value: func(w *harness.WorkloadResult) (float64, bool) {
		if w.Writers == nil {
			return 0, false
		}
		return (w.Wall - w.Writers.Duration).Seconds(), true
	}}
	WriterEdits = Metric{Name: "writer edits", Unit: "edits", Value: func(w *harness.WorkloadResult) (float64, bool) {
		if w.Writers == nil {
			return 0, false
		}
		return float64(w.Writers.Ops - w.Writers.Errors), true
	}}
)

func perObject(w *harness.WorkloadResult, n int) (float64, bool) {
	if w.Objects == 0 {
		return 0, false
	}
	return float64(n) / float64(w.Objects), true
}

// Stat summarises a figure over runs.
type Stat struct {
	Median, Min, Max float64
	// N is the number of runs that had the figure.
	N int
}

// summarize returns the median, minimum and maximum of values.
func summarize(values []float64) Stat {
	if len(values) == 0 {
		return Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Stat{Median: m, Min: v[0], Max: v[len(v)-1], N: len(v)}
}

// values returns the metric's value for contender c and the workload in every run that has it,
// by run number.
func (r *Report) values(c, workload string, m Metric) map[int]float64 {
	out := map[int]float64{}
	for i := range r.in.Runs {
		run := &r.in.Runs[i]
		if run.Contender != c || (run.Run > r.in.Params.Runs) != r.ryw {
			continue
		}
		w := run.Workload(workload)
		if w == nil || w.Failure != "" {
			continue
		}
		if v, ok := m.Value(w); ok {
			out[run.Run] = v
		}
	}
	return out
}

// Stat returns the metric for contender c and the workload over all runs.
func (r *Report) Stat(c, workload string, m Metric) Stat {
	vals := r.values(c, workload, m)
	list := make([]float64, 0, len(vals))
	for _, v := range vals {
		list = append(list, v)
	}
	return summarize(list)
}

// Ratio returns the metric for contender c divided by the floor's in the same run, over all runs.
// Runs where the floor's figure is zero are left out; with none left the Stat has N == 0.
func (r *Report) Ratio(c, workload string, m Metric) Stat {
	mine := r.values(c, workload, m)
	floor := r.values(contender.FloorName, workload, m)
	var list []float64
	for run, v := range mine {
		if f, ok := floor[run]; ok && f != 0 {
			list = append(list, v/f)
		}
	}
	if len(list) == 0 {
		return Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	return summarize(list)
}

// readYourWrites returns a view of the report on the read-your-writes runs.
func (r *Report) readYourWrites() *Report {
	v := *r
	v.ryw = true
	return &v
}

// names returns the contenders' names, in the order of the input.
func (r *Report) names() []string {
	out := make([]string, len(r.in.Contenders))
	for i, c := range r.in.Contenders {
		out[i] = c.Name
	}
	return out
}

// Line describes one run of one contender in one line, for progress output.
func Line(r harness.RunResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d #%d %-14s", r.Run, r.Position, r.Contender)
	for i := range r.Workloads {
		w := &r.Workloads[i]
		writes, _ := WritesPerObject.Value(w)
		fmt.Fprintf(&b, " | %s %.1fs %.2f w/obj", w.Workload, w.Wall.Seconds(), writes)
		if w.Reconcile.Errors > 0 {
			fmt.Fprintf(&b, " %d err", w.Reconcile.Errors)
		}
		if c := w.Requests.All().Conflicts; c > 0 {
			fmt.Fprintf(&b, " %d×409", c)
		}
		if w.Workload == harness.Contention {
			fmt.Fprintf(&b, " %d lost", w.LostUpdates)
		}
		if w.Audit != nil && len(w.Audit.Disagreements) > 0 {
			fmt.Fprintf(&b, " AUDIT LOG DISAGREES (%d kinds)", len(w.Audit.Disagreements))
		}
		if w.Failure != "" {
			fmt.Fprintf(&b, " FAILED: %s", w.Failure)
		}
	}
	return b.String()
}

// Summary returns the headline figures as plain text.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-15s %10s %10s %10s %10s %8s %8s %10s\n", "contender", "converge", "steady", "contention", "delete", "errors", "lost", "wall×floor")
	for _, c := range r.names() {
		fmt.Fprintf(&b, "%-15s", c)
		for _, w := range harness.Workloads {
			fmt.Fprintf(&b, " %10.2f", r.Stat(c, w, WritesPerObject).Median)
		}
		fmt.Fprintf(&b, " %8.0f %8.0f %10.2f\n",
			r.Stat(c, harness.Contention, ReconcileErrors).Median,
			r.Stat(c, harness.Contention, LostUpdates).Median,
			r.Ratio(c, harness.Converge, WallSeconds).Median)
	}
	b.WriteString("(writes per object, median; errors and lost updates in the contention workload; converge wall time / floor's)\n")
	if co := r.in.ClusterOperator; co != nil {
		b.WriteString(ClusterOperatorLine(*co) + "\n")
	}
	if f := r.in.ClusterOperatorFloor; f != nil {
		b.WriteString(ClusterOperatorLine(*f) + "\n")
	}
	return b.String()
}

// ClusterOperatorLine describes the example-operator workload's result in one line.
func ClusterOperatorLine(co harness.ClusterOperatorResult) string {
	if co.Failure != "" {
		first, _, _ := strings.Cut(co.Failure, "\n")
		return fmt.Sprintf("example operator, %d Clusters: FAILED: %s", co.Clusters, first)
	}
	name := "example operator"
	if co.Floor {
		name = "floor operator"
	}
	line := fmt.Sprintf("%s, %d Clusters: all Ready in %.1fs, %.2f writes per Cluster, deleted in %.1fs, manager peak RSS %s MiB",
		name, co.Clusters, co.Ready.Seconds(), co.WritesPerCluster, co.Delete.Seconds(), fmtNum(mib(co.PeakRSS), 0))
	if co.LiveHeap > 0 {
		n := float64(co.Clusters)
		line += fmt.Sprintf(", live heap %s KB and CPU %s ms per Cluster (tenon's %s ms), watches %v",
			fmtNum(float64(co.LiveHeap)/n/1000, 1), fmtNum(co.CPU.Seconds()*1000/n, 2), fmtNum(co.TenonCPU.Seconds()*1000/n, 2), co.Watches)
	}
	if a := co.Audit; a != nil {
		line += fmt.Sprintf("; audit log: %d writes, %.2f Events and %.2f GETs per Cluster, %d duplicate Events, %d writes in %s of steady state",
			a.Writes, a.EventsPerCluster, a.GetsPerCluster, a.DuplicateEvents, a.SteadyWriteCount(), a.Steady.Round(time.Second))
	}
	return line
}

// mib converts bytes to MiB.
func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// Check returns the invariants that do not hold:
//
//   - every workload of every contender finished, and so did the example-operator workload when
//     it ran;
//   - for every workload of every contender, the API server's audit log and the counting
//     transport agree on the number of requests of each kind and of 409 responses (see
//     harness.CompareAudit);
//   - for tenon and tenon-ssa, in every run, a steady-state resync sent no write by either count,
//     and the contention workload lost no update and surfaced no reconcile error;
//   - the example operator's proxy and the audit log agree on its writes, and (unless its run
//     had -operator-require-quiet=false) the audit log has no write of it at steady state,
//     Events included, and no duplicate Event;
//   - the same for every run of the example operator at scale measured now (not one read from a
//     file), and its writes per Cluster at the largest N are within 5% of those at the smallest.
func (r *Report) Check() []string {
	var problems []string
	if co := r.in.ClusterOperator; co != nil {
		problems = append(problems, r.checkClusterOperator(co)...)
		if f := r.in.ClusterOperatorFloor; f != nil {
			problems = append(problems, r.checkClusterOperator(f)...)
			if r.in.RenderedFrom == "" {
				problems = append(problems, checkAgainstFloor(co, f)...)
			}
		}
	}
	if s := r.in.Scale; s != nil && !r.in.ScaleLoaded {
		problems = append(problems, r.checkScale(s)...)
	}
	for i := range r.in.Runs {
		problems = append(problems, r.checkRun(&r.in.Runs[i])...)
	}
	return problems
}

// checkScale checks the runs of the example operator at scale measured now.
func (r *Report) checkScale(s *Scale) []string {
	var problems []string
	for i := range s.Results {
		for _, p := range r.checkClusterOperator(&s.Results[i]) {
			problems = append(problems, fmt.Sprintf("at scale, N=%d: %s", s.Results[i].Clusters, p))
		}
	}
	for _, pair := range s.floorPairs() {
		for _, p := range checkAgainstFloor(&pair.tenon, &pair.floor) {
			problems = append(problems, "at scale: "+p)
		}
	}
	with := slices.DeleteFunc(s.scaleRuns(true), func(r harness.ClusterOperatorResult) bool { return r.Audit == nil })
	if len(with) > 1 {
		lo, hi := with[0], with[len(with)-1]
		if a, b := auditWritesPerCluster(lo), auditWritesPerCluster(hi); a > 0 && math.Abs(b/a-1) > 0.05 {
			problems = append(problems, fmt.Sprintf("at scale: %.2f writes per Cluster at N=%d, %.2f at N=%d: more than 5%% apart", b, hi.Clusters, a, lo.Clusters))
		}
	}
	return problems
}

// checkRun checks one run of the contenders' workloads: each ran and agrees with the audit log,
// and a tenon contender wrote nothing at steady state and lost no update under contention.
func (r *Report) checkRun(run *harness.RunResult) []string {
	var problems []string
	for j := range run.Workloads {
		w := &run.Workloads[j]
		if w.Failure != "" {
			problems = append(problems, fmt.Sprintf("%s run %d: %s failed: %s", run.Contender, run.Run, w.Workload, w.Failure))
		}
		if w.Audit == nil && w.Failure == "" && r.in.RenderedFrom == "" {
			problems = append(problems, fmt.Sprintf("%s run %d: %s: no counts from the audit log", run.Contender, run.Run, w.Workload))
		}
		if w.Audit != nil && len(w.Audit.Disagreements) > 0 {
			problems = append(problems, fmt.Sprintf("%s run %d: %s: the audit log and the client's counter disagree: %s",
				run.Contender, run.Run, w.Workload, strings.Join(w.Audit.Disagreements, "; ")))
		}
	}
	if len(run.Workloads) < len(harness.Workloads) && (len(run.Workloads) == 0 || run.Workloads[len(run.Workloads)-1].Failure == "") {
		problems = append(problems, fmt.Sprintf("%s run %d: only %d of %d workloads ran", run.Contender, run.Run, len(run.Workloads), len(harness.Workloads)))
	}
	if !isTenon(run.Contender) {
		return problems
	}
	return append(problems, checkTenonRun(run)...)
}

// checkTenonRun checks the invariants tenon claims on a run of a tenon contender: no write at
// steady state, no lost update and no reconcile error under contention.
func checkTenonRun(run *harness.RunResult) []string {
	var problems []string
	if w := run.Workload(harness.Steady); w != nil && w.Failure == "" {
		if n := w.Requests.Writes().Requests; n != 0 {
			problems = append(problems, fmt.Sprintf("%s run %d: steady-state resync sent %d writes, want 0", run.Contender, run.Run, n))
		}
		if w.Audit != nil {
			if n := w.Audit.Requests.Writes().Requests; n != 0 {
				problems = append(problems, fmt.Sprintf("%s run %d: the audit log has %d writes of the steady-state resync, want 0", run.Contender, run.Run, n))
			}
		}
	}
	if w := run.Workload(harness.Contention); w != nil && w.Failure == "" {
		if w.LostUpdates != 0 {
			problems = append(problems, fmt.Sprintf("%s run %d: %d lost updates under contention, want 0: %s", run.Contender, run.Run, w.LostUpdates, strings.Join(w.LostSamples, "; ")))
		}
		if w.Reconcile.Errors != 0 {
			problems = append(problems, fmt.Sprintf("%s run %d: %d reconcile errors under contention, want 0: %s", run.Contender, run.Run, w.Reconcile.Errors, strings.Join(w.ErrorSamples, "; ")))
		}
	}
	return problems
}

// The most live heap the example operator may hold, as a multiple of the floor operator's on the
// same workload: at 1,000 Clusters and more, where the objects dominate; and below, where the
// fixed part (tenon's packages, its metrics, the larger binary) still weighs: at 100 Clusters the
// floor holds about 6 MB, of which about 3.5 MB is not the objects.
const (
	maxHeapRatio      = 1.3
	maxHeapRatioSmall = 1.6
	heapRatioAtScale  = 1000
)

// checkAgainstFloor returns what does not hold of the example operator (co) against the floor
// operator (floor) on the same workload: both finished with their measurements; the operator
// had no more watches open at once than the floor, resource by resource, and none of a resource
// the floor did not watch (one informer per kind: no second, unstructured copy of a kind); and
// its live heap is within
// maxHeapRatio of the floor's (maxHeapRatioSmall below heapRatioAtScale Clusters).
func checkAgainstFloor(co, floor *harness.ClusterOperatorResult) []string {
	if co.Failure != "" || floor.Failure != "" || co.Clusters != floor.Clusters {
		return nil // reported as failures
	}
	var problems []string
	if co.LiveHeap == 0 || floor.LiveHeap == 0 || len(co.Watches) == 0 || len(floor.Watches) == 0 {
		return []string{fmt.Sprintf("example operator at %d Clusters: no live heap or watch counts to compare with the floor (measured before they existed?)", co.Clusters)}
	}
	for _, res := range slices.Sorted(maps.Keys(co.Watches)) {
		if n, f := co.Watches[res], floor.Watches[res]; n > f {
			problems = append(problems, fmt.Sprintf("example operator at %d Clusters: %d watches of %s open at once until Ready, the floor %d: an informer the floor does not need",
				co.Clusters, n, res, f))
		}
	}
	limit := maxHeapRatio
	if co.Clusters < heapRatioAtScale {
		limit = maxHeapRatioSmall
	}
	if ratio := float64(co.LiveHeap) / float64(floor.LiveHeap); ratio > limit {
		problems = append(problems, fmt.Sprintf("example operator at %d Clusters: live heap %s MiB, %.2f× the floor's %s MiB, want at most %.1f×",
			co.Clusters, fmtNum(mib(co.LiveHeap), 1), ratio, fmtNum(mib(floor.LiveHeap), 1), limit))
	}
	return problems
}

// checkClusterOperator returns the example operator's invariants that do not hold.
func (r *Report) checkClusterOperator(co *harness.ClusterOperatorResult) []string {
	var problems []string
	name := "example operator"
	if co.Floor {
		name = "floor operator"
	}
	if co.Failure != "" {
		problems = append(problems, fmt.Sprintf("%s at %d Clusters failed: %s", name, co.Clusters, co.Failure))
	}
	a := co.Audit
	if a == nil {
		if co.Failure == "" && r.in.RenderedFrom == "" {
			problems = append(problems, fmt.Sprintf("example operator at %d Clusters: no counts from the audit log", co.Clusters))
		}
		return problems
	}
	if len(a.Disagreements) > 0 {
		problems = append(problems, fmt.Sprintf("example operator at %d Clusters: the proxy and the audit log disagree: %s", co.Clusters, strings.Join(a.Disagreements, "; ")))
	}
	if !a.QuietRequired {
		return problems
	}
	if n := a.SteadyWriteCount(); n > 0 {
		problems = append(problems, fmt.Sprintf("example operator at %d Clusters: %d writes in %s of steady state, want 0: %s",
			co.Clusters, n, a.Steady.Round(time.Second), strings.Join(a.SteadyWriteSamples, "; ")))
	}
	if a.DuplicateEvents > 0 {
		problems = append(problems, fmt.Sprintf("example operator at %d Clusters: %d Events sent twice, want 0: %s",
			co.Clusters, a.DuplicateEvents, strings.Join(a.DuplicateEventSamples, ", ")))
	}
	return problems
}

// isTenon reports whether the contender is one of tenon's, whose claims Check verifies.
func isTenon(name string) bool { return name == contender.TenonName || name == "tenon-ssa" }
