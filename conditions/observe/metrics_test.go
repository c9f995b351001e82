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

package observe_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// series lists the gauge's series as "kind/namespace/name type=status value", sorted.
func series(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("failed to gather: %v", err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out = append(out, fmt.Sprintf("%s/%s/%s %s=%s %g", l["kind"], l["namespace"], l["name"], l["type"], l["status"], value(m)))
		}
	}
	slices.Sort(out)
	return out
}

func value(m *dto.Metric) float64 { return m.GetGauge().GetValue() }

// named is a Widget named namespace/name with conditions cs.
func named(namespace, name string, cs ...string) *testtypes.Widget {
	w := widget()
	w.Namespace, w.Name = namespace, name
	for _, c := range cs {
		typ, status, _ := strings.Cut(c, "=")
		w.Status.Conditions = append(w.Status.Conditions, cond(typ, status, "R", ""))
	}
	return w
}

func TestMetricsChangeOnlyTheSeriesOfTheObjectRecordedOrForgotten(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := observe.NewMetrics()
	g.Expect(m.Register(reg)).To(Succeed())
	// Neighbours share the kind, the namespace or the name of the object changed.
	m.Record("Widget", named("a", "w", "Ready=True"))
	m.Record("Widget", named("b", "w", "Ready=True"))
	m.Record("Gadget", named("a", "w", "Ready=True"))
	m.Record("Widget", named("a", "w2", "Ready=True"))
	neighbours := series(t, reg)

	m.Record("Widget", named("a", "x", "Ready=False", "Stalled=True"))
	m.Record("Widget", named("a", "x", "Ready=True"))
	g.Expect(series(t, reg)).To(Equal(slices.Sorted(slices.Values(append(slices.Clone(neighbours),
		"Widget/a/x Ready=True 1", "Widget/a/x Ready=False 0", "Widget/a/x Ready=Unknown 0")))),
		"Stalled's series went with the condition; the neighbours' stayed")

	m.Forget("Widget", "a", "x")
	m.Forget("Widget", "a", "never-recorded")
	g.Expect(series(t, reg)).To(Equal(neighbours), cmp.Diff(neighbours, series(t, reg)))

	m.Record("Widget", named("a", "w"))
	g.Expect(series(t, reg)).NotTo(ContainElement(HavePrefix("Widget/a/w ")), "an object without conditions has no series")
	m.Record("Widget", named("a", "w", "Ready=Unknown"))
	g.Expect(series(t, reg)).To(ContainElement("Widget/a/w Ready=Unknown 1"), "and gets them back with its conditions")
}

func TestMetricsOfConditionsThatAreNotWellFormed(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := observe.NewMetrics()
	g.Expect(m.Register(reg)).To(Succeed())

	// A type listed twice has the series of its last entry; a status that is none of the three
	// sets every series to 0.
	m.Record("Widget", named("a", "w", "Ready=False", "Ready=True", "Synced=Maybe"))
	g.Expect(series(t, reg)).To(Equal([]string{
		"Widget/a/w Ready=False 0", "Widget/a/w Ready=True 1", "Widget/a/w Ready=Unknown 0",
		"Widget/a/w Synced=False 0", "Widget/a/w Synced=True 0", "Widget/a/w Synced=Unknown 0",
	}))

	// Recording the same conditions again changes nothing; another status moves the 1.
	m.Record("Widget", named("a", "w", "Ready=False", "Ready=True", "Synced=Maybe"))
	m.Record("Widget", named("a", "w", "Ready=True", "Synced=Unknown"))
	g.Expect(series(t, reg)).To(ContainElements("Widget/a/w Ready=True 1", "Widget/a/w Synced=Unknown 1"))
	g.Expect(series(t, reg)).To(HaveLen(6))
}

func TestMetricsAreSafeForConcurrentWorkers(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := observe.NewMetrics()
	g.Expect(m.Register(reg)).To(Succeed())
	var wg sync.WaitGroup
	for worker := range 8 {
		wg.Go(func() {
			for i := range 200 {
				name := fmt.Sprintf("w-%d-%d", worker, i%10)
				m.Record("Widget", named("ns", name, "Ready=False", "Stalled=True"))
				m.Record("Widget", named("ns", name, "Ready=True"))
				if i%3 == 0 {
					m.Forget("Widget", "ns", name)
				}
			}
		})
	}
	wg.Wait()

	// Each worker's last round (i = 190…199) left its ten objects with Ready=True, except those
	// it forgot last (i divisible by 3: 192, 195, 198).
	g.Expect(series(t, reg)).To(HaveLen(8 * 7 * 3))
	g.Expect(series(t, reg)).NotTo(ContainElement(ContainSubstring("Stalled")))
}

// BenchmarkMetricsRecord records one object's conditions among n objects with series: the cost
// stays the same as n grows.
func BenchmarkMetricsRecord(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			m := observe.NewMetrics()
			for i := range n {
				m.Record("Widget", named("ns", fmt.Sprintf("w-%d", i), "Ready=True", "Stalled=False", "Reconciling=False", "Available=True"))
			}
			w := named("ns", "w-0", "Ready=True", "Stalled=False", "Reconciling=False", "Available=True")
			b.ReportAllocs()
			for b.Loop() {
				m.Record("Widget", w)
			}
		})
	}
}

// BenchmarkMetricsMemory reports the heap that Metrics keeps per object with four conditions,
// beside the same series held in a prometheus.GaugeVec between scrapes (what Metrics did before
// it made its series at scrape time), and checks that a scrape still finds every series.
func BenchmarkMetricsMemory(b *testing.B) {
	const objects = 10000
	names := make([]*testtypes.Widget, objects)
	for i := range names {
		names[i] = named("ns", fmt.Sprintf("w-%d", i), "Ready=True", "Stalled=False", "Reconciling=False", "Available=True")
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	b.Run("metrics", func(b *testing.B) {
		for b.Loop() {
			before := heap()
			m := observe.NewMetrics()
			for _, w := range names {
				m.Record("Widget", w)
			}
			b.ReportMetric(float64(heap()-before)/objects, "B/object")
			reg := prometheus.NewRegistry()
			if err := m.Register(reg); err != nil {
				b.Fatal(err)
			}
			families, err := reg.Gather()
			if err != nil || len(families) != 1 || len(families[0].GetMetric()) != objects*4*3 {
				b.Fatalf("a scrape found %v (%v), want %d series", families, err, objects*4*3)
			}
		}
	})
	b.Run("gaugevec", func(b *testing.B) {
		for b.Loop() {
			before := heap()
			g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tenon_condition"}, []string{"kind", "namespace", "name", "type", "status"})
			for _, w := range names {
				for _, c := range w.Status.Conditions {
					for _, s := range []string{"True", "False", "Unknown"} {
						v := 0.0
						if string(c.Status) == s {
							v = 1
						}
						g.WithLabelValues("Widget", w.Namespace, w.Name, c.Type, s).Set(v)
					}
				}
			}
			b.ReportMetric(float64(heap()-before)/objects, "B/object")
			runtime.KeepAlive(g)
		}
	})
}
