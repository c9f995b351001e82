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
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// ChartScale is the chart of the example operator at scale: peak RSS and writes per Cluster
// against N.
const ChartScale = "scale.png"

// Scale is the example operator measured at several N (`make bench-scale`), saved apart from the
// contenders' measurements so that `make bench` keeps it.
type Scale struct {
	// Command is the command that measured it.
	Command string `json:"command"`
	// Started and Finished bound the measurement.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Environment is where it was measured.
	Environment Environment `json:"environment"`
	// Results holds one run per N, with the operator's cache transforms, and runs without
	// them for comparison.
	Results []harness.ClusterOperatorResult `json:"results"`
}

// WriteScale writes s to path as JSON.
func WriteScale(path string, s Scale) error {
	s.Environment = describeEnvironment()
	return saveJSON(path, s, "the scale measurements")
}

// LoadScale reads what WriteScale wrote; nil when path does not exist.
func LoadScale(path string) (*Scale, error) {
	return loadJSON[Scale](path, "the scale measurements")
}

// saveJSON writes v to path as indented JSON; what names it in errors.
func saveJSON(path string, v any, what string) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to encode %s: %w", what, err)
	}
	return writeFile(path, append(data, '\n'))
}

// loadJSON reads a T that saveJSON wrote to path; nil when path does not exist. what names it
// in errors.
func loadJSON[T any](path, what string) (*T, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", what, err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("failed to decode %s in %s: %w", what, path, err)
	}
	return &v, nil
}

// scaleRuns returns the example operator's runs with the cache transforms (with is true) or
// without, by N.
func (s *Scale) scaleRuns(with bool) []harness.ClusterOperatorResult {
	var out []harness.ClusterOperatorResult
	for _, r := range s.Results {
		if !r.Floor && r.NoCacheTransforms != with {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b harness.ClusterOperatorResult) int { return a.Clusters - b.Clusters })
	return out
}

// floorPair is a run of the example operator and the floor operator's run at the same N.
type floorPair struct {
	tenon, floor harness.ClusterOperatorResult
}

// floorPairs returns, by N, the example operator's runs with its cache transforms, each with
// the floor operator's run at the same N; N without a floor run are left out.
func (s *Scale) floorPairs() []floorPair {
	var pairs []floorPair
	for _, t := range s.scaleRuns(true) {
		for _, f := range s.Results {
			if f.Floor && f.Clusters == t.Clusters {
				pairs = append(pairs, floorPair{tenon: t, floor: f})
				break
			}
		}
	}
	return pairs
}

// auditWritesPerCluster is the writes per Cluster the audit log recorded, or the proxy's count
// when there is no audit.
func auditWritesPerCluster(r harness.ClusterOperatorResult) float64 {
	if r.Audit != nil && r.Clusters > 0 {
		return float64(r.Audit.Writes) / float64(r.Clusters)
	}
	return r.WritesPerCluster
}

// writeScale writes the section on the example operator at scale.
func (r *Report) writeScale(b *strings.Builder, chartDir string) {
	s := r.in.Scale
	b.WriteString("## The example operator at 10,000 Clusters\n\n")
	if s == nil || len(s.Results) == 0 {
		b.WriteString("Not measured yet: run `make bench-scale`.\n\n")
		return
	}
	with := s.scaleRuns(true)
	fmt.Fprintf(b, "Measured by `%s` (%s, %s UTC), with the same scale test as the section above, but with the simulated "+
		"kubelet and DNS API acting at once, so that what is measured is the operator: each run creates N Clusters "+
		"(%s replicas each; every Cluster has 5 children, so about 6 × N objects), starts the manager binary, waits "+
		"until every Cluster is Ready, holds a steady state in which the operator must send no write, then deletes "+
		"every Cluster (a DeleteCollection, sent again until every Cluster is marked for deletion: at 10,000 the "+
		"API server takes minutes to mark them, while the operator already cleans up) and waits until all are gone; "+
		"*deleted after* counts from the moment every Cluster was marked. The operator's cache drops the managedFields of Clusters and of "+
		"the DNS Secret (`--cache-transforms`, on by default); the runs marked *without* keep every object whole. "+
		"Writes are counted from the API server's audit log; peak RSS is the manager's VmHWM once every Cluster was "+
		"Ready.\n\n", s.Command, s.Environment.CPU, s.Started.UTC().Format("2006-01-02 15:04"), replicasOf(with))
	if len(with) == 0 {
		b.WriteString("No run with the cache transforms.\n\n")
		return
	}
	base := with[0]
	b.WriteString("| Clusters (N) | writes per Cluster | × N=" + fmt.Sprint(base.Clusters) + " | Events per Cluster | GETs per Cluster | all Ready after | per Cluster | deleted after | per Cluster | peak RSS | per 1,000 Clusters | steady-state writes |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, run := range with {
		if run.Failure != "" && run.Audit == nil {
			fmt.Fprintf(b, "| %d | failed | | | | | | | | | | |\n", run.Clusters)
			continue
		}
		events, gets, steady := math.NaN(), math.NaN(), "–"
		if run.Audit != nil {
			events, gets = run.Audit.EventsPerCluster, run.Audit.GetsPerCluster
			steady = fmt.Sprintf("%d in %s s", run.Audit.SteadyWriteCount(), fmtNum(run.Audit.Steady.Seconds(), 0))
		}
		n := float64(run.Clusters)
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s s | %s ms | %s s | %s ms | %s MiB | %s MiB | %s |\n",
			run.Clusters, fmtNum(auditWritesPerCluster(run), 2), fmtNum(auditWritesPerCluster(run)/auditWritesPerCluster(base), 3),
			fmtNum(events, 2), fmtNum(gets, 2),
			fmtNum(run.Ready.Seconds(), 1), fmtNum(run.Ready.Seconds()*1000/n, 2),
			fmtNum(run.Delete.Seconds(), 1), fmtNum(run.Delete.Seconds()*1000/n, 2),
			fmtNum(mib(run.PeakRSS), 0), fmtNum(mib(run.PeakRSS)*1000/n, 1), steady)
	}
	b.WriteString("\n")
	writeFloorComparison(b, s.floorPairs())
	writeTransformsSaving(b, with, s.scaleRuns(false))
	for _, run := range s.Results {
		if run.Failure != "" {
			fmt.Fprintf(b, "**Failed** at N = %d:\n\n```text\n%s\n```\n\n", run.Clusters, strings.TrimSpace(run.Failure))
		}
	}
	if chartDir != "" {
		fmt.Fprintf(b, "![Peak RSS and writes per Cluster against N](%s/%s)\n\n", chartDir, ChartScale)
	}
}

// replicasOf names the replicas of runs, "3" when they all have 3.
func replicasOf(runs []harness.ClusterOperatorResult) string {
	var seen []string
	for _, r := range runs {
		n := r.Replicas
		if n == 0 {
			n = 3
		}
		if v := fmt.Sprint(n); !slices.Contains(seen, v) {
			seen = append(seen, v)
		}
	}
	return strings.Join(seen, " or ")
}

// WriteScaleChart writes the chart of the measurements at scale (ChartScale) into dir, and
// nothing when there are none.
func (r *Report) WriteScaleChart(dir string) error { return r.writeScaleChart(dir) }

// writeScaleChart draws peak RSS (left) and writes per Cluster (right) against N, on a
// logarithmic N axis, with and without the cache transforms.
// writeTransformsSaving writes the peak RSS of the runs with the cache transforms beside those
// without, at each N measured both ways.
func writeTransformsSaving(b *strings.Builder, with, without []harness.ClusterOperatorResult) {
	if len(without) == 0 {
		return
	}
	b.WriteString("Peak RSS with and without the cache transforms:\n\n| Clusters (N) | with | without | saved |\n|--:|--:|--:|--:|\n")
	for _, wo := range without {
		i := slices.IndexFunc(with, func(r harness.ClusterOperatorResult) bool { return r.Clusters == wo.Clusters })
		if i < 0 || wo.PeakRSS == 0 {
			continue
		}
		w := with[i]
		fmt.Fprintf(b, "| %d | %s MiB | %s MiB | %s %% |\n", wo.Clusters, fmtNum(mib(w.PeakRSS), 0), fmtNum(mib(wo.PeakRSS), 0),
			fmtNum(100*(1-float64(w.PeakRSS)/float64(wo.PeakRSS)), 1))
	}
	b.WriteString("\n")
}

func (r *Report) writeScaleChart(dir string) error {
	s := r.in.Scale
	if s == nil || len(s.scaleRuns(true)) == 0 {
		return nil
	}
	rss := plot.New()
	rss.Title.Text = "Manager peak RSS"
	rss.X.Label.Text = "Clusters (N)"
	rss.Y.Label.Text = "MiB"
	writes := plot.New()
	writes.Title.Text = "Writes per Cluster (audit log)"
	writes.X.Label.Text = "Clusters (N)"
	writes.Y.Label.Text = "writes / Cluster"
	for _, p := range []*plot.Plot{rss, writes} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min = 0
		p.Legend.Top = true
		p.Legend.Left = true
		p.Add(plotter.NewGrid())
	}
	for i, with := range []bool{true, false} {
		runs := s.scaleRuns(with)
		var m, w plotter.XYs
		for _, run := range runs {
			if run.PeakRSS > 0 {
				m = append(m, plotter.XY{X: float64(run.Clusters), Y: mib(run.PeakRSS)})
			}
			if v := auditWritesPerCluster(run); v > 0 {
				w = append(w, plotter.XY{X: float64(run.Clusters), Y: v})
			}
		}
		label := "with cache transforms"
		if !with {
			label = "without"
		}
		if err := addLine(rss, m, label, plotutil.Color(i)); err != nil {
			return err
		}
		if with {
			if err := addLine(writes, w, label, plotutil.Color(i)); err != nil {
				return err
			}
		}
	}
	writes.Y.Max *= 1.3
	rss.Y.Max *= 1.15
	return savePair(filepath.Join(dir, ChartScale), rss, writes)
}

// savePair draws left and right side by side into a PNG file at path.
func savePair(path string, left, right *plot.Plot) error {
	img := vgimg.New(10*vg.Inch, 4*vg.Inch)
	canvases := plot.Align([][]*plot.Plot{{left, right}}, draw.Tiles{Rows: 1, Cols: 2, PadX: 8 * vg.Millimeter}, draw.New(img))
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	return f.Close()
}

// addLine adds xys to p as a line with points, unless it is empty.
func addLine(p *plot.Plot, xys plotter.XYs, label string, c color.Color) error {
	if len(xys) == 0 {
		return nil
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("failed to draw %s: %w", label, err)
	}
	line.Color, points.Color = c, c
	p.Add(line, points)
	p.Legend.Add(label, line, points)
	return nil
}

// writeFloorComparison writes the table of the example operator against the floor operator, on
// the same workloads: what each holds, uses and moves per Cluster.
func writeFloorComparison(b *strings.Builder, pairs []floorPair) {
	if len(pairs) == 0 {
		return
	}
	// The split of tenon's CPU time is shown once a run has it (measurements before it lack it).
	split := slices.ContainsFunc(pairs, func(p floorPair) bool { return p.tenon.TenonClientCPU > 0 || p.tenon.TenonCallbackCPU > 0 })
	splitText, splitHeader, splitAlign := "", "", ""
	if split {
		splitText = "*its own computation* is what is left of that without the client calls (the REST client down) and without the " +
			"operator's own code that tenon calls back (the DNS provider behind `external.Resource`), – for the floor and for runs that " +
			"predate the split; "
		splitHeader, splitAlign = " its own computation |", "--:|"
	}
	fmt.Fprintf(b, "Against the floor: the same operator written with controller-runtime alone (the example's `lab/cmd/floor`: "+
		"the same children with `controllerutil.CreateOrPatch`, the same DNS record and status with merge patches, the same "+
		"objects cached, typed, with the children's managedFields; none of tenon's crash safety, adoption checks, field "+
		"ownership or condition Events and metrics), on the same workload, right after. *Live heap* is the Go heap after a "+
		"garbage collection at the end of the steady state; *CPU* is the process's user and system time from its start until "+
		"every Cluster was Ready, and *tenon's code* the part of it that CPU profiles find in tenon's functions and the "+
		"client calls they make; %s*sent* and *received* are request and response bodies until Ready, watch streams apart; "+
		"*× minimum* compares what was sent with the least the same writes need: the same changes, in the same requests and encodings, "+
		"with only the object's identity as a guard (its uid, tested in each JSON patch; an apply's create-only precondition), that is, without the "+
		"test operations that guard against other writers (– for the floor, which sends no JSON patch, and for runs that predate the count); *watches* are the most watches open at once, one per informer and resource (a watch the API server ends after its timeout is opened again after it, not beside it).\n\n", splitText)
	fmt.Fprintf(b, "| Clusters (N) | operator | live heap per Cluster | × floor | peak RSS | CPU per Cluster | × floor | tenon's code per Cluster |%s sent per Cluster | × minimum | received per Cluster | watch streams per Cluster | watches |\n", splitHeader)
	fmt.Fprintf(b, "|--:|---|--:|--:|--:|--:|--:|--:|%s--:|--:|--:|--:|--:|\n", splitAlign)
	for _, p := range pairs {
		n := float64(p.tenon.Clusters)
		for _, run := range []harness.ClusterOperatorResult{p.tenon, p.floor} {
			name, heapX, cpuX := "example (tenon)", fmtNum(float64(run.LiveHeap)/float64(p.floor.LiveHeap), 2), fmtNum(run.CPU.Seconds()/p.floor.CPU.Seconds(), 2)
			if run.Floor {
				name, heapX, cpuX = "floor", "1", "1"
			}
			watches := 0
			for _, c := range run.Watches {
				watches += c // the most open at once, for each resource
			}
			overMinimum := "–" // the floor sends no JSON patch; measurements that predate the count of guards
			if run.GuardBytes > 0 {
				overMinimum = fmtNum(float64(run.SentBytes)/float64(run.SentBytes-run.GuardBytes), 2)
			}
			computation := ""
			switch {
			case run.TenonClientCPU > 0 || run.TenonCallbackCPU > 0:
				computation = " " + fmtNum((run.TenonCPU-run.TenonClientCPU-run.TenonCallbackCPU).Seconds()*1000/n, 2) + " ms |"
			case split:
				computation = " – |" // the floor; measurements that predate the split
			}
			fmt.Fprintf(b, "| %d | %s | %s KB | %s | %s MiB | %s ms | %s | %s ms |%s %s B | %s | %s B | %s B | %d |\n",
				run.Clusters, name, fmtNum(float64(run.LiveHeap)/n/1000, 1), heapX, fmtNum(mib(run.PeakRSS), 0),
				fmtNum(run.CPU.Seconds()*1000/n, 2), cpuX, fmtNum(run.TenonCPU.Seconds()*1000/n, 2), computation,
				fmtNum(float64(run.SentBytes)/n, 0), overMinimum, fmtNum(float64(run.ReceivedBytes)/n, 0), fmtNum(float64(run.WatchBytes)/n, 0), watches)
		}
	}
	b.WriteString("\n")
	if len(pairs) > 1 {
		lo, hi := pairs[0], pairs[len(pairs)-1]
		dn := float64(hi.tenon.Clusters - lo.tenon.Clusters)
		slope := func(a, b harness.ClusterOperatorResult) float64 { return float64(b.PeakRSS-a.PeakRSS) / dn / 1000 }
		st, sf := slope(lo.tenon, hi.tenon), slope(lo.floor, hi.floor)
		fmt.Fprintf(b, "Peak RSS grows by %s KB per Cluster from N=%d to N=%d, the floor's by %s KB (%s×).\n\n",
			fmtNum(st, 1), lo.tenon.Clusters, hi.tenon.Clusters, fmtNum(sf, 1), fmtNum(st/sf, 2))
	}
}
