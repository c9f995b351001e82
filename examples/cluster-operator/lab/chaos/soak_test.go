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
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
)

var soakFlag = flag.Duration("chaos.soak", 0, "how long the soak scenario churns; 0 for the run's default (make soak: 30m)")

// sample is one reading of the manager's resident memory and goroutines.
type sample struct {
	At         time.Duration
	RSS        int64 // bytes
	Goroutines int
}

// soak: Clusters are created, scaled and deleted at a steady rate for a while, with a bounded
// number alive at once; the manager's resident memory and goroutines are read every two seconds.
// Once the caches are warm they must level off: the median of the last quarter of the run may
// exceed the median of the second quarter only by a margin, or the process leaks.
func soak(t *testing.T, w *world) *result {
	ctx := t.Context()
	d := w.sizes.Soak
	if *soakFlag > 0 {
		d = *soakFlag
	}
	ns := w.namespace(t, "soak")
	log := &writes{}
	p := w.newProxy(t, "soak", w.user.Config(), log)
	port := freePort(t)
	proc := w.startOperator(t, "soak", p, fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--metrics-secure=false")
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)

	const alive = 10
	var live []string
	created, scaled, deleted := 0, 0, 0
	var samples []sample
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; time.Since(start) < d; i++ {
		<-tick.C
		name := fmt.Sprintf("s%d", i)
		if err := w.admin.Create(ctx, newCluster(ns, name, 1)); err != nil {
			t.Fatalf("failed to create Cluster %s: %v", name, err)
		}
		created++
		live = append(live, name)
		if len(live) > 1 {
			w.setReplicas(t, ns, []string{live[w.intn(len(live)-1)]}, []int32{1, 3, 5}[w.intn(3)])
			scaled++
		}
		if len(live) > alive {
			if err := w.admin.Delete(ctx, &appsv1alpha1.Cluster{ObjectMeta: metaName(ns, live[0])}); err != nil {
				t.Fatalf("failed to delete Cluster %s: %v", live[0], err)
			}
			deleted++
			live = live[1:]
		}
		if i%2 == 0 {
			s, err := readSample(ctx, proc.cmd.Process.Pid, metricsURL)
			if err != nil {
				t.Fatalf("failed to read the manager's memory and goroutines: %v", err)
			}
			s.At = time.Since(start)
			samples = append(samples, s)
		}
	}
	churn := time.Since(start)
	converge := w.waitConverged(t, ns)
	restarts := 0
	if !proc.running() {
		restarts++
		t.Errorf("the operator exited during the soak: %v", proc.err)
	}
	mid := w.settledAudit(t, ns)
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)

	wedged := 0
	var problems []string
	rssGrowth, goGrowth, ok := growth(samples)
	if !ok {
		problems = append(problems, fmt.Sprintf("only %d samples: the soak must run for at least a minute", len(samples)))
		wedged++
	}
	rssBound := max(32<<20, medianOf(samples, func(s sample) float64 { return float64(s.RSS) })/4)
	goBound := max(30, medianOf(samples, func(s sample) float64 { return float64(s.Goroutines) })/5)
	if ok && rssGrowth > rssBound {
		wedged++
		problems = append(problems, fmt.Sprintf("resident memory grew by %s from the second to the last quarter of the run (bound %s)", mib(rssGrowth), mib(rssBound)))
	}
	if ok && goGrowth > goBound {
		wedged++
		problems = append(problems, fmt.Sprintf("goroutines grew by %.0f from the second to the last quarter of the run (bound %.0f)", goGrowth, goBound))
	}
	peak := slices.MaxFunc(samples, func(a, b sample) int { return int(a.RSS - b.RSS) })
	first, last := samples[0], samples[len(samples)-1]
	return &result{
		Operations: fmt.Sprintf("%s of churn: %d creates, %d scales, %d deletes (at most %d Clusters alive); %d API writes by the operator", secs(churn), created, scaled, deleted+len(live), alive+1, countWrites(log.list(), false)),
		Faults: fmt.Sprintf("none; %d samples: RSS %s → %s (peak %s), goroutines %d → %d; growth from the second to the last quarter %s (bound %s) and %.0f goroutines (bound %.0f)",
			len(samples), mib(float64(first.RSS)), mib(float64(last.RSS)), mib(float64(peak.RSS)), first.Goroutines, last.Goroutines, mib(rssGrowth), mib(rssBound), goGrowth, goBound),
		Convergence: fmt.Sprintf("converged %s after the churn, delete %s", secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: restarts + mid.Missing, Wedged: wedged + mid.Wedged + final.Wedged,
		Problems: slices.Concat(problems, mid.Problems, final.Problems),
		Details: []string{
			fmt.Sprintf("Every second a Cluster is created, a random live one scaled to 1, 3 or 5 replicas, and the oldest deleted once more than %d are alive; every two seconds the manager's resident memory (/proc/<pid>/status, VmRSS) and goroutines (go_goroutines on its metrics endpoint) are read. make soak runs it for 30 minutes.", alive),
			"The first quarter is the warm-up (caches filling, workers starting). A leak shows as a level that keeps rising: the median of the last quarter may exceed the median of the second quarter by at most a quarter of the run's median RSS (at least 32 MiB) and a fifth of its median goroutines (at least 30); a process above either bound counts as wedged.",
			"Series (time, RSS, goroutines): " + series(samples, 8),
		},
	}
}

// readSample reads the resident memory of process pid and the goroutines its metrics report.
func readSample(ctx context.Context, pid int, metricsURL string) (sample, error) {
	var s sample
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return s, fmt.Errorf("failed to read VmRSS %q: %w", line, err)
			}
			s.RSS = kb << 10
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, http.NoBody)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return s, fmt.Errorf("failed to read go_goroutines %q: %w", v, err)
			}
			s.Goroutines = int(n)
			return s, nil
		}
	}
	return s, fmt.Errorf("%s has no go_goroutines (status %s)", metricsURL, resp.Status)
}

// growth returns by how much the median RSS and goroutines of the last quarter of samples exceed
// those of the second quarter; ok is false with fewer than 8 samples.
func growth(samples []sample) (rss, goroutines float64, ok bool) {
	n := len(samples)
	if n < 8 {
		return 0, 0, false
	}
	second, last := samples[n/4:n/2], samples[n*3/4:]
	byRSS := func(s sample) float64 { return float64(s.RSS) }
	byGo := func(s sample) float64 { return float64(s.Goroutines) }
	return medianOf(last, byRSS) - medianOf(second, byRSS), medianOf(last, byGo) - medianOf(second, byGo), true
}

func medianOf(samples []sample, f func(sample) float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	vs := make([]float64, len(samples))
	for i, s := range samples {
		vs[i] = f(s)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// series returns about n evenly spaced samples as text.
func series(samples []sample, n int) string {
	var parts []string
	step := max(1, len(samples)/n)
	for i := 0; i < len(samples); i += step {
		s := samples[i]
		parts = append(parts, fmt.Sprintf("%s %s %d", secs(s.At), mib(float64(s.RSS)), s.Goroutines))
	}
	return strings.Join(parts, "; ")
}

func mib(bytes float64) string { return fmt.Sprintf("%.0f MiB", bytes/(1<<20)) }

// freePort returns a local TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("failed to find a free port: %v", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}
