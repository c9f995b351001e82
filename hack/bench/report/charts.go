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
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// The chart files WriteCharts writes, relative to its directory.
const (
	ChartWrites     = "writes-per-object.png"
	ChartWall       = "wall-time-ratio.png"
	ChartContention = "contention.png"
)

// series is one group of bars: a label and a value per contender.
type series struct {
	label  string
	values []float64
}

// WriteCharts writes the report's charts into dir as PNG files.
func (r *Report) WriteCharts(dir string) error {
	names := r.names()
	var writes, wall []series
	for _, w := range harness.Workloads {
		ws := series{label: w}
		rs := series{label: w}
		for _, c := range names {
			ws.values = append(ws.values, r.Stat(c, w, WritesPerObject).Median)
			rs.values = append(rs.values, r.Ratio(c, w, WallSeconds).Median)
		}
		writes = append(writes, ws)
		wall = append(wall, rs)
	}
	if err := barChart(filepath.Join(dir, ChartWrites), names, writes,
		fmt.Sprintf("Write requests per object (median of %d runs, N=%d)", r.in.Params.Runs, r.in.Params.Objects),
		"writes / object", math.NaN()); err != nil {
		return err
	}
	if err := barChart(filepath.Join(dir, ChartWall), names, wall,
		"Wall time, ratio to the floor in the same run (median)", "× floor", 1); err != nil {
		return err
	}
	var cont []series
	for _, m := range []Metric{Conflicts409, ReconcileErrors, LostUpdates} {
		s := series{label: m.Name}
		for _, c := range names {
			s.values = append(s.values, r.Stat(c, harness.Contention, m).Median)
		}
		cont = append(cont, s)
	}
	if err := r.writeScaleChart(dir); err != nil {
		return err
	}
	return barChart(filepath.Join(dir, ChartContention), names, cont,
		fmt.Sprintf("Contention: %d writers × %d edits on %d objects (median)", r.in.Params.Writers, r.in.Params.OpsPerWriter, min(r.in.Params.HotObjects, r.in.Params.Objects)),
		"count", math.NaN())
}

// barChart draws grouped bars, one group per contender, one bar per series, and a dashed
// reference line at ref unless ref is NaN. Missing values (NaN) are drawn as zero.
func barChart(path string, names []string, groups []series, title, yLabel string, ref float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())

	width := vg.Points(60 / float64(len(groups)))
	for i, g := range groups {
		vals := make(plotter.Values, len(g.values))
		for j, v := range g.values {
			if !math.IsNaN(v) {
				vals[j] = v
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("failed to draw %s: %w", path, err)
		}
		bars.LineStyle.Width = vg.Length(0)
		bars.Color = plotutil.Color(i)
		bars.Offset = width * vg.Length(float64(i)-float64(len(groups)-1)/2)
		p.Add(bars)
		p.Legend.Add(g.label, bars)
	}
	if !math.IsNaN(ref) {
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: ref}, {X: float64(len(names)) - 0.5, Y: ref}})
		if err != nil {
			return fmt.Errorf("failed to draw %s: %w", path, err)
		}
		line.Color = color.Gray{Y: 80}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
	}
	p.NominalX(names...)
	// Leave room above the tallest bar for the legend.
	p.Y.Max *= 1.25
	if err := p.Save(vg.Length(len(names))*vg.Points(95)+vg.Points(60), 4*vg.Inch, path); err != nil {
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	return nil
}
