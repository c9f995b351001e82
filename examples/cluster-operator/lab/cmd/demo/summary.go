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
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"

	"github.com/tenon-dev/tenon/testing/faults"
)

// writes counts the operator's writes for one Cluster.
type writes struct {
	// metadata are patches of the Cluster itself: its finalizer, added and removed, and the state
	// of its DNS record (the external.tenon.dev/dns-record annotation), stored before a create.
	metadata int
	// status are patches of the Cluster's status subresource.
	status int
	// applies are server-side applies of its children.
	applies int
	// deletes are deletions of its children: the tracked directory entry.
	deletes int
	// children are the distinct children written, by kind, namespace and name.
	children map[string]bool
}

// summaryFormat is the format of the summary's table.
const summaryFormat = "      %-10s %-9s %-19s %-7s %-26s %s\n"

func (w writes) total() int { return w.metadata + w.status + w.applies + w.deletes }

// summary prints what the demo did, from what the operator's client recorded and what the
// control plane and the DNS provider report, and fails when anything was left behind.
func (d *demo) summary(ctx context.Context) error {
	s, err := d.snapshot(ctx)
	if err != nil {
		return err
	}
	t := d.countWrites()
	fmt.Fprintf(d.out, "\nSummary: done in %s\n\n", seconds(time.Since(d.start)))
	fmt.Fprintf(d.out, summaryFormat, "CLUSTER", "REPLICAS", "READY AFTER", "WRITES", "CLUSTER: METADATA/STATUS", "CHILDREN: APPLY/DELETE")
	children := 0
	for _, name := range d.names {
		w := t.byCluster[name]
		children += len(w.children)
		readyAfter := seconds(d.ready[name])
		if name == d.scaled {
			readyAfter += ", scaled " + seconds(d.rescaled)
		}
		fmt.Fprintf(d.out, summaryFormat, name, d.replicas(name), readyAfter, fmt.Sprint(w.total()),
			fmt.Sprintf("%d / %d", w.metadata, w.status), fmt.Sprintf("%d / %d (%d children)", w.applies, w.deletes, len(w.children)))
	}
	fmt.Fprintln(d.out)
	d.note("objects: %d Clusters and their %d children: per Cluster a ConfigMap, two Services and a StatefulSet", len(d.names), children)
	d.note("  (owner references), and an entry in %s (tracked by labels, deleted by the finalizer)", directoryNamespace)
	d.note("API writes: %d in all, over %d reconciles, recorded by the operator's client (Events not counted)", t.all, reconciles())
	if t.conflicts > 0 {
		d.note("  %d writes met a 409 Conflict, resolved by patch's three-way merge or a quiet requeue", t.conflicts)
	}
	if t.unattributed > 0 {
		d.note("  %d writes concerned no Cluster of the demo", t.unattributed)
	}
	requests := d.dns.Requests()
	d.note("DNS API: %d requests (%s)", requests["GET"]+requests["PUT"]+requests["DELETE"], methods(requests))
	d.note("left behind: %d Clusters, %d DNS records, %d children or directory entries", len(s.clusters), len(s.records), s.children)
	if len(s.clusters)+len(s.records)+s.children > 0 {
		return fmt.Errorf("the demo left %d Clusters, %d DNS records and %d children behind", len(s.clusters), len(s.records), s.children)
	}
	return nil
}

// tally counts the operator's writes: per Cluster, the conflicts, and those of no Cluster.
type tally struct {
	byCluster                    map[string]*writes
	all, conflicts, unattributed int
}

// countWrites counts the writes the operator's client recorded.
func (d *demo) countWrites() tally {
	t := tally{byCluster: map[string]*writes{}}
	for _, name := range d.names {
		t.byCluster[name] = &writes{children: map[string]bool{}}
	}
	for _, call := range d.calls.Writes() {
		t.all++
		if apierrors.IsConflict(call.Err) {
			t.conflicts++
		}
		name, ok := d.owner(call)
		w := t.byCluster[name]
		if !ok || w == nil {
			t.unattributed++
			continue
		}
		w.add(call)
	}
	return t
}

// add counts call, a write to a Cluster or one of its children.
func (w *writes) add(call faults.Call) {
	switch {
	case call.GVK.Kind == "Cluster" && call.Subresource == "status":
		w.status++
	case call.GVK.Kind == "Cluster":
		w.metadata++
	case call.Verb == faults.Delete:
		w.deletes++
		w.children[call.GVK.Kind+" "+call.Key.String()] = true
	default:
		w.applies++
		w.children[call.GVK.Kind+" "+call.Key.String()] = true
	}
}

// owner returns the name of the Cluster a call wrote to, or one of whose children it wrote.
func (d *demo) owner(call faults.Call) (string, bool) {
	key := call.Key
	switch key.Namespace {
	case namespace:
		if call.GVK.Kind == "Cluster" {
			return key.Name, true
		}
		for _, name := range d.names {
			if key.Name == name || key.Name == name+"-config" || key.Name == name+"-peers" {
				return name, true
			}
		}
	case directoryNamespace:
		return strings.CutPrefix(key.Name, namespace+".")
	}
	return "", false
}

// replicas describes the replicas of the Cluster name over the demo.
func (d *demo) replicas(name string) string {
	from, ok := d.initialReplicas[name]
	if !ok {
		return "?"
	}
	if name == d.scaled {
		return fmt.Sprintf("%d → %d", from, from+2)
	}
	return fmt.Sprint(from)
}

// reconciles returns how many reconciles the cluster controller ran, from controller-runtime's
// controller_runtime_reconcile_total.
func reconciles() int {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0
	}
	total := 0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller.Name {
					total += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return total
}

// methods lists request counts by method, in a stable order.
func methods(requests map[string]int) string {
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(requests)) {
		parts = append(parts, fmt.Sprintf("%d %s", requests[m], m))
	}
	return strings.Join(parts, ", ")
}
