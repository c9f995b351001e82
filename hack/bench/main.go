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

// Command bench measures tenon against the libraries operator authors would otherwise use, and
// against the fewest writes the API server needs (the floor), on one envtest control plane in
// one run, and writes the report docs/benchmarks.md with its charts.
//
// Each contender (see package contender) reconciles the same Widget CRD under a real
// controller-runtime manager. For every run and contender, in an order that alternates between
// runs, the benchmark creates N Widgets in a fresh namespace and measures four workloads on them
// (see package harness): converge, steady-state resync, contention with concurrent writers, and
// delete. It counts every request the manager sends with a counting transport, checks those
// counts against the API server's audit log, checks the final state field by field, and reports
// medians, spreads and ratios to the floor.
//
// Then, once, it measures the example operator (examples/cluster-operator) at N Clusters with
// that module's own scale test (see harness.RunClusterOperator): time until all are Ready,
// writes per Cluster, time to delete them, and the manager's peak RSS.
//
// Usage (from hack/bench; `make bench` and `make bench-smoke` at the repository root run it):
//
//	go run . -objects 1000 -runs 5 -out ../../docs/benchmarks.md -charts ../../docs/benchmarks
//
// With -strict it exits 1 when an invariant tenon claims does not hold (see report.Check), so CI
// can run a small configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/hack/bench/contender"
	"github.com/tenon-dev/tenon/hack/bench/harness"
	"github.com/tenon-dev/tenon/hack/bench/report"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	f, err := parseFlags()
	if err != nil {
		return err
	}
	selected, err := contender.Select(f.contenders)
	if err != nil {
		return err
	}
	ctrl.SetLogger(logr.Discard())

	if f.shards != "" && f.from == "" {
		return runShardsOnly(f.shards, f.shardsClusters, f.shardsWorkers, f.shardsLatency, f.shardsResults, f.command, f.strict)
	}
	if (f.scale != "" || f.scaleImport != "") && f.from == "" {
		return runScaleOnly(f.scale, f.scaleWithout, f.scaleImport, f.scaleResults, f.charts, f.command, f.strict)
	}
	in, err := f.input(selected)
	if err != nil {
		return err
	}
	rep, err := report.New(in)
	if err != nil {
		return err
	}
	fmt.Fprint(os.Stderr, rep.Summary())
	if err := f.write(rep); err != nil {
		return err
	}
	if problems := rep.Check(); len(problems) > 0 {
		for _, pr := range problems {
			fmt.Fprintln(os.Stderr, "bench: FAIL:", pr)
		}
		if f.strict {
			return fmt.Errorf("%d invariants do not hold", len(problems))
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench: every invariant holds")
	}
	return nil
}

// flags are the command line's flags.
type flags struct {
	p          harness.Params
	contenders string
	out        string
	charts     string
	raw        string
	micro      string
	microRaw   string
	command    string
	from       string
	clusters   int
	strict     bool
	// requireQuiet gates the example operator's steady-state and duplicate-Event checks.
	requireQuiet bool
	// scale, scaleWithout and scaleResults configure the example operator at scale.
	scale, scaleWithout, scaleResults, scaleImport string
	// shards, shardsClusters, shardsWorkers, shardsLatency and shardsResults configure the
	// example operator as rings of shards.
	shards, shardsResults         string
	shardsClusters, shardsWorkers string
	shardsLatency                 time.Duration
}

// parseFlags parses the command line and checks its flags.
func parseFlags() (*flags, error) {
	f := &flags{}
	flag.IntVar(&f.p.Objects, "objects", 1000, "number of Widgets (N) per run")
	flag.IntVar(&f.p.Runs, "runs", 5, "number of runs; the order of contenders alternates between runs")
	flag.IntVar(&f.p.Workers, "workers", 4, "MaxConcurrentReconciles of each controller")
	flag.IntVar(&f.p.Writers, "writers", 8, "concurrent writers in the contention workload")
	flag.IntVar(&f.p.HotObjects, "hot", 100, "Widgets the writers edit in the contention workload")
	flag.IntVar(&f.p.OpsPerWriter, "ops", 150, "edits per writer in the contention workload")
	flag.DurationVar(&f.p.Timeout, "timeout", 5*time.Minute, "timeout of each workload")
	flag.IntVar(&f.p.ReadYourWritesRuns, "ryw-runs", 0, "extra runs with controller-runtime's read-your-writes consistency on for every contender (the floor always has it)")
	flag.Int64Var(&f.p.Seed, "seed", 1, "seed of the writers' random choices")
	flag.IntVar(&f.clusters, "clusters", 0, "number of Clusters in the example-operator workload (0: as many as -objects; -1: skip the workload)")
	flag.StringVar(&f.contenders, "contenders", "", "comma-separated contenders to run (default all; the floor always runs)")
	flag.StringVar(&f.out, "out", "", "write the Markdown report to this file")
	flag.StringVar(&f.charts, "charts", "", "write the charts (PNG) to this directory, referenced from the report")
	flag.StringVar(&f.raw, "raw", "", "write every measurement as JSON to this file")
	flag.StringVar(&f.micro, "micro", "", "benchstat output of the micro-benchmarks to include in the report")
	flag.StringVar(&f.microRaw, "micro-raw", "", "go test -bench -benchmem output of the micro-benchmarks, for the report's own tables")
	flag.StringVar(&f.command, "command", "", "the command that produced the report, to print in it (default: this program's arguments)")
	flag.StringVar(&f.from, "from", "", "render the report from measurements saved with -raw instead of measuring")
	flag.BoolVar(&f.requireQuiet, "operator-require-quiet", true, "fail the example-operator workload when the audit log shows it writing at steady state or sending an Event twice (its -chaos.require-quiet)")
	flag.StringVar(&f.scale, "scale", "", "comma-separated N at which to measure the example operator at scale, with its simulators acting at once (`make bench-scale`); without -from, only that is measured, and written to -scale-results and -charts")
	flag.StringVar(&f.scaleWithout, "scale-without-transforms", "", "comma-separated N at which to measure it at scale again without its cache transforms, for comparison")
	flag.StringVar(&f.scaleImport, "scale-import", "", "comma-separated JSON files the example operator's TestScale wrote (-chaos.json), to add to the measurements at scale")
	flag.StringVar(&f.scaleResults, "scale-results", "", "the JSON file of the measurements at scale: written after -scale, read otherwise (when it exists) for the report")
	flag.StringVar(&f.shards, "shards", "", "comma-separated ring sizes at which to measure the example operator as shards of a ring (`make bench-shards`); without -from, only that is measured, and written to -shards-results")
	flag.StringVar(&f.shardsClusters, "shards-clusters", "300", "comma-separated numbers of Clusters at which to measure each ring of shards; the saved runs of other sizes are kept")
	flag.StringVar(&f.shardsWorkers, "shards-workers", strconv.Itoa(harness.DefaultShardWorkers), "comma-separated numbers of concurrent reconciles per shard at which to measure each ring of shards")
	flag.DurationVar(&f.shardsLatency, "shards-dns-latency", 500*time.Millisecond, "how long every call to the simulated DNS API takes in the rings of shards")
	flag.StringVar(&f.shardsResults, "shards-results", "", "the JSON file of the measurements of rings of shards: written after -shards, read otherwise (when it exists) for the report")
	flag.BoolVar(&f.strict, "strict", false, "exit 1 when an invariant tenon claims does not hold or a workload failed")
	flag.Parse()

	p := f.p
	if p.Objects < 1 || p.Runs < 1 || p.Workers < 1 || p.Writers < 1 || p.HotObjects < 1 || p.OpsPerWriter < 1 {
		return nil, errors.New("objects, runs, workers, writers, hot and ops must be at least 1")
	}
	if f.clusters == 0 {
		f.clusters = p.Objects
	} else if f.clusters < -1 {
		return nil, errors.New("clusters must be at least 1, or 0 (as many as objects) or -1 (skip)")
	}
	if f.command == "" {
		f.command = "go run . " + joinArgs(os.Args[1:])
	}
	return f, nil
}

// input returns what the report is made from: measurements loaded with -from or made now, and
// those at scale made now or loaded from -scale-results.
func (f *flags) input(selected []contender.Contender) (report.Input, error) {
	var in report.Input
	var err error
	if f.from != "" {
		in, err = report.Load(f.from)
		if err != nil {
			return in, err
		}
		in.RenderedFrom = f.from
	} else {
		in, err = measureAll(selected, f.p, f.clusters, f.requireQuiet, f.command)
		if err != nil {
			return in, err
		}
	}
	if f.scale != "" {
		in.Scale = &report.Scale{Command: f.command, Started: time.Now()}
		if err := measureScale(in.Scale, f.scale, f.scaleWithout, f.scaleResults); err != nil {
			return in, err
		}
	} else if f.scaleResults != "" {
		if in.Scale, err = report.LoadScale(f.scaleResults); err != nil {
			return in, err
		}
		in.ScaleLoaded = true
	}
	if f.shardsResults != "" {
		if in.Shards, err = report.LoadShards(f.shardsResults); err != nil {
			return in, err
		}
	}
	in.MicroFile, in.MicroRaw = f.micro, f.microRaw
	return in, nil
}

// write writes the report's JSON, charts and Markdown where the flags ask for them.
func (f *flags) write(rep *report.Report) error {
	if f.raw != "" {
		if err := rep.WriteJSON(f.raw); err != nil {
			return err
		}
	}
	if f.charts != "" {
		if err := rep.WriteCharts(f.charts); err != nil {
			return err
		}
	}
	if f.out != "" {
		if err := rep.WriteMarkdown(f.out, f.charts); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", f.out)
	}
	return nil
}

// measureAll starts the control plane, measures the contenders and stops it; then it measures
// the example operator at the given number of Clusters (none when negative), on a control plane
// of its own.
func measureAll(contenders []contender.Contender, p harness.Params, clusters int, requireQuiet bool, command string) (report.Input, error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	in := report.Input{Params: p, Contenders: contenders, Command: command, Started: time.Now()}
	fmt.Fprintf(os.Stderr, "bench: starting envtest; %d contenders × %d+%d runs, N=%d\n",
		len(contenders), p.Runs, p.ReadYourWritesRuns, p.Objects)
	env, err := harness.StartEnv()
	if err != nil {
		return in, err
	}
	results, err := measure(ctx, env, contenders, p)
	// Stopped before the example operator runs: its test starts a control plane of its own.
	if stopErr := env.Stop(); stopErr != nil {
		err = errors.Join(err, stopErr)
	}
	if err == nil && clusters > 0 {
		in.ClusterOperator, err = measureClusterOperator(ctx, clusters, requireQuiet, false)
	}
	if err == nil && in.ClusterOperator != nil && in.ClusterOperator.Failure == "" {
		in.ClusterOperatorFloor, err = measureClusterOperator(ctx, clusters, requireQuiet, true)
	}
	in.Runs, in.Finished = results, time.Now()
	return in, err
}

// measureClusterOperator runs the example-operator workload (see harness.RunClusterOperator),
// with the floor operator when floor is set. A failure is recorded in the result, for the report
// and report.Check; only an interrupt is an error.
func measureClusterOperator(ctx context.Context, clusters int, requireQuiet, floor bool) (*harness.ClusterOperatorResult, error) {
	name := "example operator"
	if floor {
		name = "floor operator"
	}
	fmt.Fprintf(os.Stderr, "bench: %s at %d Clusters (builds and runs its scale test)\n", name, clusters)
	res, err := harness.RunClusterOperator(ctx, harness.ClusterOperatorParams{Clusters: clusters, RequireQuiet: requireQuiet, Floor: floor})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		res = harness.ClusterOperatorResult{Clusters: clusters, Floor: floor, Failure: err.Error()}
	}
	if !requireQuiet {
		fmt.Fprintln(os.Stderr, "bench: the example operator's steady-state writes and duplicate Events are measured, not checked (-operator-require-quiet=false)")
	}
	fmt.Fprintln(os.Stderr, report.ClusterOperatorLine(res))
	return &res, nil
}

// measure runs every contender p.Runs times, then p.ReadYourWritesRuns times with
// read-your-writes consistency for all. Odd runs go through the contenders in order, even
// runs in reverse, so that no contender always runs on a fresher or more loaded control plane.
func measure(ctx context.Context, env *harness.Env, contenders []contender.Contender, p harness.Params) ([]harness.RunResult, error) {
	var results []harness.RunResult
	for run := 1; run <= p.Runs+p.ReadYourWritesRuns; run++ {
		order := slices.Clone(contenders)
		if run%2 == 0 {
			slices.Reverse(order)
		}
		ryw := run > p.Runs
		for pos, c := range order {
			r, err := env.Run(ctx, c, p, run, pos+1, ryw)
			if err != nil {
				return results, fmt.Errorf("failed to run %s (run %d): %w", c.Name, run, err)
			}
			results = append(results, r)
			fmt.Fprintln(os.Stderr, report.Line(r))
			if err := ctx.Err(); err != nil {
				return results, fmt.Errorf("interrupted: %w", err)
			}
		}
	}
	return results, nil
}

func joinArgs(args []string) string {
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}

// measureScale runs the example operator at each N of the comma-separated list ns, with its
// simulators acting at once, and again at each N of without with its cache transforms off,
// adding the results to s; it saves s to results (when set) after each run, so that an
// interrupted measurement keeps what it measured.
func measureScale(s *report.Scale, ns, without, results string) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	parse := func(list string) ([]int, error) {
		var out []int
		for f := range strings.SplitSeq(list, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-scale: %q is not a number of Clusters", f)
			}
			out = append(out, n)
		}
		return out, nil
	}
	with, err := parse(ns)
	if err != nil {
		return err
	}
	wo, err := parse(without)
	if err != nil {
		return err
	}
	runs := make([]harness.ClusterOperatorParams, 0, len(with)+len(wo))
	for _, n := range with {
		runs = append(runs, harness.ClusterOperatorParams{Clusters: n, NoSimulatorDelays: true, RequireQuiet: true, Timeout: 4 * time.Hour},
			harness.ClusterOperatorParams{Clusters: n, NoSimulatorDelays: true, RequireQuiet: true, Floor: true, Timeout: 4 * time.Hour})
	}
	for _, n := range wo {
		runs = append(runs, harness.ClusterOperatorParams{Clusters: n, NoSimulatorDelays: true, NoCacheTransforms: true, RequireQuiet: true, Timeout: 4 * time.Hour})
	}
	for _, p := range runs {
		fmt.Fprintf(os.Stderr, "bench: example operator at %d Clusters, simulators at once, cache transforms %t, floor %t\n", p.Clusters, !p.NoCacheTransforms, p.Floor)
		res, err := harness.RunClusterOperator(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			res = harness.ClusterOperatorResult{Clusters: p.Clusters, NoSimulatorDelays: true, NoCacheTransforms: p.NoCacheTransforms, Floor: p.Floor, Failure: err.Error()}
		}
		fmt.Fprintln(os.Stderr, report.ClusterOperatorLine(res))
		s.Results = append(s.Results, res)
		s.Finished = time.Now()
		if results != "" {
			if err := report.WriteScale(results, *s); err != nil {
				return err
			}
		}
	}
	return nil
}

// runScaleOnly measures the example operator at scale without the contenders: it writes the
// measurements to results (for `make bench` and -from to include) and the chart into charts,
// and checks them.
func runScaleOnly(ns, without, imports, results, charts, command string, strict bool) error {
	s := &report.Scale{Command: command, Started: time.Now(), Finished: time.Now()}
	for f := range strings.SplitSeq(imports, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("-scale-import: %w", err)
		}
		res, err := harness.ReadScaleResult(data)
		if err != nil {
			return fmt.Errorf("-scale-import %s: %w", f, err)
		}
		s.Results = append(s.Results, res)
	}
	if err := measureScale(s, ns, without, results); err != nil {
		return err
	}
	if results != "" {
		if err := report.WriteScale(results, *s); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", results)
	}
	rep, err := report.New(report.Input{Scale: s})
	if err != nil {
		return err
	}
	if charts != "" {
		if err := rep.WriteScaleChart(charts); err != nil {
			return err
		}
	}
	if problems := rep.Check(); len(problems) > 0 {
		for _, pr := range problems {
			fmt.Fprintln(os.Stderr, "bench: FAIL:", pr)
		}
		if strict {
			return fmt.Errorf("%d invariants do not hold", len(problems))
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench: every invariant holds")
	}
	return nil
}

// runShardsOnly measures the example operator as a ring of each size of the comma-separated list
// sizes, on each number of Clusters of clusterCounts whose DNS calls take latency, with each
// number of concurrent reconciles per shard of workerCounts; it saves the measurements to results
// after each run (for `make bench` and -from to include) and checks them.
func runShardsOnly(sizes, clusterCounts, workerCounts string, latency time.Duration, results, command string, strict bool) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ks, err := positiveInts(sizes, "-shards", "shards")
	if err != nil {
		return err
	}
	ns, err := positiveInts(clusterCounts, "-shards-clusters", "Clusters")
	if err != nil {
		return err
	}
	ws, err := positiveInts(workerCounts, "-shards-workers", "workers")
	if err != nil {
		return err
	}
	s := &report.Shards{Command: command, Started: time.Now()}
	if s.Results, err = savedRunsBut(results, ns, ks, ws); err != nil {
		return err
	}
	for _, n := range ns {
		for _, w := range ws {
			for _, k := range ks {
				res, err := measureRing(ctx, harness.ShardScaleParams{Shards: k, Clusters: n, DNSLatency: latency, Workers: w, Timeout: time.Hour})
				if err != nil {
					return err
				}
				s.Results = append(s.Results, res)
				s.Finished = time.Now()
				if results != "" {
					if err := report.WriteShards(results, *s); err != nil {
						return err
					}
				}
			}
		}
	}
	if results != "" {
		fmt.Fprintln(os.Stderr, "bench: wrote", results)
	}
	if problems := report.CheckShards(s); len(problems) > 0 {
		for _, pr := range problems {
			fmt.Fprintln(os.Stderr, "bench: FAIL:", pr)
		}
		if strict {
			return fmt.Errorf("%d invariants do not hold", len(problems))
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench: every invariant holds")
	}
	return nil
}

// measureRing measures the example operator as the ring p describes; a run that failed is a
// result with its Failure, and only an interruption an error.
func measureRing(ctx context.Context, p harness.ShardScaleParams) (harness.ShardScaleResult, error) {
	fmt.Fprintf(os.Stderr, "bench: example operator as %d shards of %d workers, %d Clusters, DNS calls of %s\n", p.Shards, p.Workers, p.Clusters, p.DNSLatency)
	started := time.Now()
	res, err := harness.RunShardScale(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		res = harness.ShardScaleResult{Shards: p.Shards, Clusters: p.Clusters, DNSLatency: p.DNSLatency.String(), Workers: p.Workers, Failure: err.Error()}
	}
	res.Started = started
	fmt.Fprintf(os.Stderr, "bench: %d shards of %d workers, %d Clusters: Ready after %.1f s, largest share %.2f, %.2f writes per Cluster, %d at steady state\n",
		p.Shards, p.Workers, p.Clusters, res.ReadySeconds, res.LargestShare(), res.WritesPerCluster, res.SteadyWrites)
	return res, nil
}

// positiveInts parses the comma-separated positive numbers of the flag name, each a number of what.
func positiveInts(list, name, what string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a number of %s", name, f, what)
		}
		ns = append(ns, n)
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("%s: no number of %s given", name, what)
	}
	return ns, nil
}

// savedRunsBut returns the runs saved in results (when given and it exists) but those of a ring
// size in ks on a number of Clusters in ns with a number of workers per shard in ws, which are
// measured again, each with its start.
func savedRunsBut(results string, ns, ks, ws []int) ([]harness.ShardScaleResult, error) {
	if results == "" {
		return nil, nil
	}
	saved, err := report.LoadShards(results)
	if err != nil || saved == nil {
		return nil, err
	}
	for i := range saved.Results {
		if saved.Results[i].Started.IsZero() { // saved before runs recorded their start
			saved.Results[i].Started = saved.Started
		}
	}
	return slices.DeleteFunc(saved.Results, func(r harness.ShardScaleResult) bool {
		return slices.Contains(ns, r.Clusters) && slices.Contains(ks, r.Shards) && slices.Contains(ws, r.WorkersPerShard())
	}), nil
}
