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
	"bufio"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// microResult is one micro-benchmark's samples: ns/op, B/op and allocs/op of every count.
type microResult struct {
	ns, bytes, allocs []float64
}

// microSet holds the samples of `go test -bench` output by benchmark, op and library, with the
// order in which each first appeared.
type microSet struct {
	results map[string]map[string]map[string]*microResult // benchmark → op → lib
	benches []string
	ops     map[string][]string
	libs    map[string][]string
}

// microLine matches the lines the micro-benchmarks print, such as
// "BenchmarkPatch/lib=tenon/op=noop-2   1234   84970 ns/op   10902 B/op   182 allocs/op".
var microLine = regexp.MustCompile(`^Benchmark(\w+)/lib=([^/\s]+)/op=(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) B/op\s+([\d.]+) allocs/op`)

// parseMicro reads `go test -bench -benchmem` output.
func parseMicro(text string) (*microSet, error) {
	s := &microSet{results: map[string]map[string]map[string]*microResult{}, ops: map[string][]string{}, libs: map[string][]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		m := microLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		bench, lib, op := m[1], m[2], m[3]
		var vals [3]float64
		for i := range vals {
			v, err := strconv.ParseFloat(m[4+i], 64)
			if err != nil {
				return nil, fmt.Errorf("failed to parse %q: %w", sc.Text(), err)
			}
			vals[i] = v
		}
		if s.results[bench] == nil {
			s.results[bench] = map[string]map[string]*microResult{}
			s.benches = append(s.benches, bench)
		}
		if s.results[bench][op] == nil {
			s.results[bench][op] = map[string]*microResult{}
			s.ops[bench] = append(s.ops[bench], op)
		}
		r := s.results[bench][op][lib]
		if r == nil {
			r = &microResult{}
			s.results[bench][op][lib] = r
			if !contains(s.libs[bench], lib) {
				s.libs[bench] = append(s.libs[bench], lib)
			}
		}
		r.ns, r.bytes, r.allocs = append(r.ns, vals[0]), append(r.bytes, vals[1]), append(r.allocs, vals[2])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read micro-benchmark results: %w", err)
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeMicroTables writes one table per benchmark: per op, each library's median time with its
// range and its ratio to the first library (the baseline), bytes and allocations per op.
func writeMicroTables(b *strings.Builder, s *microSet) {
	for _, bench := range s.benches {
		libs := s.libs[bench]
		fmt.Fprintf(b, "**%s** (median of %d counts [range]; ratio to %s)\n\n| op |", bench, len(s.results[bench][s.ops[bench][0]][libs[0]].ns), libs[0])
		for _, l := range libs {
			fmt.Fprintf(b, " %s |", bold(l))
		}
		b.WriteString("\n|---|" + strings.Repeat("--:|", len(libs)) + "\n")
		for _, op := range s.ops[bench] {
			fmt.Fprintf(b, "| %s |", op)
			base := summarize(s.results[bench][op][libs[0]].ns)
			for _, l := range libs {
				r := s.results[bench][op][l]
				if r == nil {
					b.WriteString(" – |")
					continue
				}
				t := summarize(r.ns)
				fmt.Fprintf(b, " %s [%s–%s] %s<br>%s B, %s allocs |", fmtDuration(t.Median), fmtDuration(t.Min), fmtDuration(t.Max),
					fmtTimes(t.Median/base.Median), fmtNum(summarize(r.bytes).Median, 0), fmtNum(summarize(r.allocs).Median, 0))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// microFinding is a micro-benchmark in which tenon takes longer than another library.
type microFinding struct {
	bench, op string
	tenon     Stat
	ahead     []string
	clear     bool
}

// microNotAhead returns the benchmarks in which tenon's median time is more than 10% above
// another library's; clear when the ranges do not overlap.
func microNotAhead(s *microSet) []microFinding {
	var out []microFinding
	for _, bench := range s.benches {
		for _, op := range s.ops[bench] {
			mine := s.results[bench][op]["tenon"]
			if mine == nil {
				continue
			}
			t := summarize(mine.ns)
			f := microFinding{bench: bench, op: op, tenon: t}
			for _, l := range s.libs[bench] {
				other := s.results[bench][op][l]
				if l == "tenon" || other == nil {
					continue
				}
				o := summarize(other.ns)
				if t.Median > o.Median*1.10 {
					f.ahead = append(f.ahead, fmt.Sprintf("%s %s", l, fmtDuration(o.Median)))
					if t.Min > o.Max {
						f.clear = true
					}
				}
			}
			if len(f.ahead) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

// microCauses explains, by benchmark and op, why tenon is slower where it was analysed.
var microCauses = map[string]string{
	"SetCondition/unchanged": "apimachinery's `meta.SetStatusCondition` does less: it does not stamp observedGeneration " +
		"and returns after comparing four fields. tenon's `Set` stamps the generation, replaces invalid UTF-8 in the " +
		"message as the API server would, and compares five fields. It does not allocate. (It no longer validates: an " +
		"invalid condition is refused when it is written.)",
	"SetCondition/changed": "As for `op=unchanged`, and keeping the position of the condition in the documented order, " +
		"truncating the transition time to seconds and copying the list rather than changing it in place (a slice read " +
		"before `Set` still holds the old conditions; that copy is its one allocation) cost more than apimachinery's " +
		"replace in place.",
	"Patch/noop": "Not profiled. The code paths differ in what runs before the no-op is detected: cluster-api's " +
		"`Patch` returns on `reflect.DeepEqual(obj, before)`; tenon's first sets `status.observedGeneration` through " +
		"reflection and compares with `equality.Semantic.DeepEqual`. Both include the fake client's Get (the same for all).",
}

func fmtDuration(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "–"
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}

func fmtTimes(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return ""
	}
	return fmt.Sprintf("(%.2f×)", r)
}
