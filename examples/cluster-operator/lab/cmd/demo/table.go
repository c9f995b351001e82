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

package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"

	"github.com/tenon-dev/tenon/conditions"
)

// snapshot is what the demo sees at one moment.
type snapshot struct {
	// clusters are the Clusters that exist, by name.
	clusters map[string]*appsv1alpha1.Cluster
	// records are the DNS provider's records, by name.
	records map[string]clouddns.Record
	// children counts the operator's children (ConfigMaps, Services, StatefulSets) that exist.
	children int
}

// snapshot reads the Clusters, their children and the DNS records, as a person with kubectl
// and the provider's console would: directly, not through the operator's cache.
func (d *demo) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{clusters: map[string]*appsv1alpha1.Cluster{}, records: map[string]clouddns.Record{}}
	var clusters appsv1alpha1.ClusterList
	if err := d.admin.List(ctx, &clusters, client.InNamespace(namespace)); err != nil {
		return s, fmt.Errorf("failed to list Clusters: %w", err)
	}
	for i := range clusters.Items {
		s.clusters[clusters.Items[i].Name] = &clusters.Items[i]
	}
	for _, r := range d.dns.Records() {
		s.records[r.Name] = r
	}
	managed := client.MatchingLabels{desired.ManagedByLabel: desired.ManagedBy}
	for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &corev1.ServiceList{}, &appsv1.StatefulSetList{}} {
		if err := d.admin.List(ctx, list, managed); err != nil {
			return s, fmt.Errorf("failed to list the operator's children: %w", err)
		}
		switch l := list.(type) {
		case *corev1.ConfigMapList:
			s.children += len(l.Items)
		case *corev1.ServiceList:
			s.children += len(l.Items)
		case *appsv1.StatefulSetList:
			s.children += len(l.Items)
		}
	}
	return s, nil
}

// table prints a row for a Cluster whenever what the row shows changes, so that the output reads
// as a log of the Clusters' progress: stable, and as fast as the Clusters change, no faster.
type table struct {
	out   io.Writer
	start time.Time
	names []string
	// last is the last row printed for each Cluster, without its time.
	last map[string]string
	// stale reports whether a row with a condition of an older generation was printed since the
	// last header, to explain the marker once.
	stale bool
}

const (
	rowFormat = "      %7s  %-10s %3s %3s  %-6s %-6s %-8s %-7s %-11s %-8s  %s\n"
	// detailWidth is the most of a detail a row shows.
	detailWidth = 96
)

func newTable(out io.Writer, start time.Time, names []string) *table {
	return &table{out: out, start: start, names: names, last: map[string]string{}}
}

// header prints the column names, and makes the next update print every row.
func (t *table) header() {
	fmt.Fprintf(t.out, "\n"+rowFormat, "TIME", "CLUSTER", "GEN", "OBS", "READY", "CONFIG", "WORKLOAD", "DNS", "RECONCILING", "RECORD", "DETAIL")
	t.last = map[string]string{}
	t.stale = false
}

// update prints the rows that changed since they were last printed.
func (t *table) update(s snapshot) {
	elapsed := fmt.Sprintf("+%.1fs", time.Since(t.start).Seconds())
	for _, name := range t.names {
		c, exists := s.clusters[name]
		var cells []any
		if exists {
			cells = t.row(c, s.records)
		} else {
			if _, printed := t.last[name]; !printed {
				continue
			}
			cells = []any{name, "-", "-", "-", "-", "-", "-", "-", "-", "gone: the finalizer is done, and the object deleted"}
		}
		row := fmt.Sprint(cells...)
		if t.last[name] == row {
			continue
		}
		t.last[name] = row
		fmt.Fprintf(t.out, rowFormat, append([]any{elapsed}, cells...)...)
	}
}

// row returns the cells of c's row.
func (t *table) row(c *appsv1alpha1.Cluster, records map[string]clouddns.Record) []any {
	cell := func(ct conditions.Type) string {
		cond := conditions.Get(c, ct)
		if cond == nil {
			return "-"
		}
		if cond.ObservedGeneration < c.Generation {
			t.stale = true
			return string(cond.Status) + "*"
		}
		return string(cond.Status)
	}
	observed := "-"
	if c.Status.ObservedGeneration > 0 {
		observed = strconv.FormatInt(c.Status.ObservedGeneration, 10)
	}
	record := "-"
	if r, ok := records[c.Spec.DNSName]; ok {
		record = r.Status
	}
	return []any{c.Name, strconv.FormatInt(c.Generation, 10), observed,
		cell(conditions.Ready), cell(appsv1alpha1.ConfigReady), cell(appsv1alpha1.WorkloadReady), cell(appsv1alpha1.DNSReady),
		cell(conditions.Reconciling), record, truncate(detail(c), detailWidth)}
}

// footnote explains the marker of stale conditions, when a row showed one.
func (t *table) footnote() string {
	if !t.stale {
		return ""
	}
	return "* the condition describes an older generation than metadata.generation: it is not to be trusted yet"
}

// detail is the one thing a person most wants to know about c right now.
func detail(c *appsv1alpha1.Cluster) string {
	ready := conditions.Get(c, conditions.Ready)
	switch {
	case c.DeletionTimestamp != nil:
		if d := conditions.Get(c, conditions.Deleting); d != nil {
			return "Deleting: " + d.Message
		}
		return "Deleting: waiting for the operator"
	case conditions.IsTrue(c, conditions.Stalled):
		return "Stalled: " + conditions.Get(c, conditions.Stalled).Message
	case ready == nil:
		return "waiting for the operator"
	case ready.Status == "True":
		return fmt.Sprintf("%s ready; endpoint %s", plural(int(c.Status.ReadyReplicas), "replica"), c.Status.Endpoint)
	default:
		return ready.Message
	}
}

// truncate shortens s to at most n runes, ending in "…" when it had to.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}
