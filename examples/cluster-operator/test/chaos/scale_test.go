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

package chaos

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	scaleClusters = flag.Int("chaos.clusters", 1000, "with -chaos=scale: how many Clusters")
	scaleJSON     = flag.String("chaos.json", "", "with -chaos=scale: write the measurements as JSON to this file")
)

// ScaleResult is what the scale run measures; hack/bench reads it as JSON.
type ScaleResult struct {
	// Clusters is how many Clusters the operator converged.
	Clusters int `json:"clusters"`
	// ReadySeconds is the time from the operator's start until every Cluster was Ready.
	ReadySeconds float64 `json:"readySeconds"`
	// DeleteSeconds is the time from deleting every Cluster until all were gone.
	DeleteSeconds float64 `json:"deleteSeconds"`
	// Requests counts the operator's requests until every Cluster was Ready, by method and
	// resource, such as "PATCH clusters/status".
	Requests map[string]int `json:"requests"`
	// Writes is the number of write requests (POST, PUT, PATCH, DELETE) in Requests.
	Writes int `json:"writes"`
	// WritesPerCluster is Writes / Clusters.
	WritesPerCluster float64 `json:"writesPerCluster"`
	// PeakRSSBytes is the manager process's peak resident set size (VmHWM) once every Cluster
	// was Ready.
	PeakRSSBytes int64 `json:"peakRSSBytes"`
}

// TestScale is the example-operator workload of the benchmarks (hack/bench): the manager binary,
// as the generated RBAC's user, converges N Clusters created before it starts.
func TestScale(t *testing.T) {
	if *mode != "scale" {
		t.Skip("run with -chaos=scale")
	}
	w := newWorld(t, uint64(time.Now().UnixNano()), sizes{Timeout: 30 * time.Minute})
	n := *scaleClusters
	ns := w.namespace(t, "scale")
	w.createClusters(t, ns, "c", n, 3)

	log := &writes{}
	p := newProxy(t, "scale", w.user.Config(), log)
	started := time.Now()
	proc := w.startOperator(t, "scale", p)
	w.waitConverged(t, ns)
	ready := time.Since(started)
	rss, err := peakRSS(proc.cmd.Process.Pid)
	if err != nil {
		t.Fatalf("failed to read the manager's peak RSS: %v", err)
	}
	requests := log.counts()
	writes := 0
	for k, v := range requests {
		switch strings.SplitN(k, " ", 2)[0] {
		case "POST", "PUT", "PATCH", "DELETE":
			writes += v
		}
	}
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)

	res := ScaleResult{Clusters: n, ReadySeconds: ready.Seconds(), DeleteSeconds: deletion.Seconds(), Requests: requests,
		Writes: writes, WritesPerCluster: float64(writes) / float64(n), PeakRSSBytes: rss}
	t.Logf("%d Clusters Ready in %s, %d writes (%.2f per Cluster), deleted in %s, manager peak RSS %d MiB",
		n, secs(ready), writes, res.WritesPerCluster, secs(deletion), rss>>20)
	if *scaleJSON != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*scaleJSON, data, 0o644); err != nil {
			t.Fatalf("failed to write %s: %v", *scaleJSON, err)
		}
	}
}

// peakRSS returns the peak resident set size (VmHWM) of process pid, in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
