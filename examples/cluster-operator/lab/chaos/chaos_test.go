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

// Package chaos proves that the example operator, and the tenon blocks it is built from, lose
// nothing under the failures production brings: conflicts and server errors on a large share of
// writes, a flaky DNS provider, the operator killed at random moments, kube-apiserver restarted,
// the leader killed under leader election, the operator run as shards whose ring grows and loses
// shards, a namespace deleted while the DNS provider is down,
// writes denied by admission policies, etcd's history compacted under the informers, the connections to the API server black-holed, hostile input, and a token that must never leak.
//
// The scenarios run against an envtest control plane with its garbage collector and namespace
// controller, the simulated cloud DNS API and the simulated kubelet. The operator runs as the
// shipped manager binary, as a user bound to nothing but the generated RBAC, except in the fault
// storm, which runs it in this process so that tenon's fault plan can wrap its client.
//
// The package does nothing under a plain go test: its scenarios take minutes. Run them with
//
//	make chaos        # the full run; writes docs/reliability.md
//	make chaos-smoke  # a small run for CI
//
// or, in the lab module (examples/cluster-operator/lab), go test ./chaos -chaos=smoke
// -chaos.seed=N to replay a failed run with its seed.
package chaos

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"

	"github.com/tenon-dev/tenon/testing/testenv"
)

var (
	mode       = flag.String("chaos", "", `which run: "smoke" (CI, a few minutes), "full" (make chaos), or "scale" (the benchmark's example-operator workload, TestScale); empty runs only the harness's unit tests`)
	seedFlag   = flag.Uint64("chaos.seed", 0, "seed of every random choice; 0 picks one, which failures print")
	reportPath = flag.String("chaos.report", "", "write the report as Markdown to this file (make chaos: docs/reliability.md)")
	only       = flag.String("chaos.only", "", "run only the scenarios whose name contains this")
)

var (
	scheme = runtime.NewScheme()
	env    *testenv.Environment

	// moduleDir is the operator module's root directory; config/ is in it.
	moduleDir = filepath.Join("..", "..")
	// labDir is the lab module's root directory; the floor operator (cmd/floor) is in it.
	labDir = ".."
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	flag.Parse()
	switch *mode {
	case "":
		// Only the unit tests of the harness run; TestChaos skips itself.
		os.Exit(m.Run())
	case "smoke", "full", "scale":
	default:
		fmt.Fprintf(os.Stderr, "chaos: -chaos=%q: want smoke, full or scale\n", *mode)
		os.Exit(2)
	}
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join(moduleDir, "config", "crd", "bases")},
		Scheme:            scheme,
		GarbageCollector:  true,
		AuditLog:          true,
		// kube-controller-manager's garbage collector rediscovers the API every 30 seconds, and
		// after an etcd compaction and an API server restart it relists every resource before it
		// collects again: on 2 busy cores that took longer than the default minute.
		StartTimeout: 3 * time.Minute,
	})
	os.Exit(env.Run(m))
}

// sizes are the parameters of a run.
type sizes struct {
	// StormClusters is how many Clusters the fault storm creates, scales and deletes.
	StormClusters int
	// Crashes is how many times the crash loop kills the operator.
	Crashes int
	// CrashBatch is how many Clusters each crash-loop cycle creates.
	CrashBatch int
	// RestartClusters is how many Clusters are created before and after the API server restart.
	RestartClusters int
	// Downtime is how long kube-apiserver stays down.
	Downtime time.Duration
	// Failovers is how many times the leader is killed.
	Failovers int
	// FailoverClusters is how many Clusters are created in each leadership term.
	FailoverClusters int
	// Pauses is how many times the paused-leader scenario stops a fenced leader, and
	// UnfencedPauses an unfenced one, for comparison.
	Pauses, UnfencedPauses int
	// PauseClusters is how many Clusters are created before each pause.
	PauseClusters int
	// NamespaceClusters is how many Clusters the deleted namespace holds.
	NamespaceClusters int
	// AdmissionClusters is how many Clusters of each kind (allowed, denied child, denied status)
	// the admission scenario creates.
	AdmissionClusters int
	// BlackHoleClusters is how many Clusters the black-hole scenario creates in each phase.
	BlackHoleClusters int
	// BlackHole is how long the black hole, and then the latency, lasts.
	BlackHole time.Duration
	// Compactions is how many times the compaction scenario compacts etcd and restarts
	// kube-apiserver; CompactionClusters is how many Clusters each round creates.
	Compactions, CompactionClusters int
	// Soak is how long the soak scenario churns (-chaos.soak overrides it).
	Soak time.Duration
	// TwoControllerClusters is how many Clusters the two-controller scenario deletes.
	TwoControllerClusters int
	// ShardedClusters is how many Clusters the sharded ring creates, scales and deletes.
	ShardedClusters int
	// FuzzTime is the budget of each fuzz target.
	FuzzTime time.Duration
	// Timeout bounds each wait for convergence.
	Timeout time.Duration
	// NoSimulatorDelays makes the simulated DNS provider and kubelet act at once (no propagation
	// delay, every replica ready together), so that what is measured is the operator.
	NoSimulatorDelays bool
	// ListInterval is how often the waits for convergence and deletion list every Cluster;
	// default 200ms. The scale test lists less often at large N, where each list costs the API
	// server, on the operator's 2 cores, what a reconcile of hundreds of Clusters does.
	ListInterval time.Duration
}

// listInterval returns ListInterval or its default.
func (s sizes) listInterval() time.Duration {
	if s.ListInterval <= 0 {
		return 200 * time.Millisecond
	}
	return s.ListInterval
}

func sizesFor(mode string) sizes {
	if mode == "full" {
		return sizes{StormClusters: 300, Crashes: 50, CrashBatch: 3, RestartClusters: 30, Downtime: 5 * time.Second,
			Failovers: 4, FailoverClusters: 8, Pauses: 20, UnfencedPauses: 5, PauseClusters: 3, NamespaceClusters: 30, AdmissionClusters: 10, BlackHoleClusters: 10, BlackHole: 20 * time.Second, Compactions: 5, CompactionClusters: 8, TwoControllerClusters: 100, ShardedClusters: 100, Soak: 10 * time.Minute, FuzzTime: time.Minute, Timeout: 10 * time.Minute}
	}
	return sizes{StormClusters: 40, Crashes: 10, CrashBatch: 2, RestartClusters: 8, Downtime: 3 * time.Second,
		Failovers: 2, FailoverClusters: 4, Pauses: 3, UnfencedPauses: 2, PauseClusters: 2, NamespaceClusters: 8, AdmissionClusters: 3, BlackHoleClusters: 3, BlackHole: 10 * time.Second, Compactions: 2, CompactionClusters: 3, TwoControllerClusters: 100, ShardedClusters: 12, Soak: 2 * time.Minute, FuzzTime: 10 * time.Second, Timeout: 4 * time.Minute}
}

// TestChaos runs every scenario in turn, prints a table of what each did and found, and fails
// when an invariant does not hold.
func TestChaos(t *testing.T) {
	if *mode != "smoke" && *mode != "full" {
		t.Skip("chaos: skipped; run make chaos or make chaos-smoke (go test ./chaos -chaos=smoke|full, in the lab module)")
	}
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos: replay this run with: go test ./chaos -chaos=%s -chaos.seed=%d -v", *mode, seed)
		}
	})
	s := sizesFor(*mode)
	w := newWorld(t, seed, s)
	started := time.Now()

	scenarios := []struct {
		name string
		run  func(t *testing.T, w *world) *result
	}{
		{"fault storm", faultStorm},
		{"crash loop", crashLoop},
		{"API server restart", apiServerRestart},
		{"leader failover", leaderFailover},
		{"paused leader", pausedLeader},
		{"sharded ring", shardedRing},
		{"namespace deletion", namespaceDeletion},
		{"admission denials", admissionDenials},
		{"black-holed API server", blackHole},
		{"etcd compaction", etcdCompaction},
		{"two controllers", twoControllers},
		{"soak", soak},
		{"hostile input", hostileInput},
		{"least privilege", leastPrivilege},
	}
	var results []*result
	for _, sc := range scenarios {
		if *only != "" && !strings.Contains(sc.name, *only) {
			continue
		}
		var r *result
		// The audit log witnesses the operator's writes of the scenario, until its operators
		// have stopped (the subtest's cleanup), against the proxies' record.
		before, proxiedBefore := w.mark(t), len(w.proxied.list())
		t.Run(sc.name, func(t *testing.T) {
			// Also when the scenario stops with t.Fatal: a failed scenario has a row.
			defer func() {
				if r == nil {
					r = &result{Problems: []string{"the scenario stopped before it finished: see the test's output"}}
				}
				r.Name, r.Failed = sc.name, t.Failed()
			}()
			r = sc.run(t, w)
		})
		if r == nil {
			// -test.run left the scenario out (use -chaos.only to pick scenarios).
			continue
		}
		after := w.mark(t)
		audited := w.operatorRequests(t, before, after)
		r.AuditWrites = len(audited.Writes())
		r.Witness = compareWrites(writesUntil(w.proxied.list()[proxiedBefore:], after.Time()), audited, w.sentDuringRestart)
		if r.InProcess != nil {
			all, err := env.AuditLog().Between(before, after)
			if err != nil {
				t.Fatalf("failed to read the audit log: %v", err)
			}
			line, disagreements := r.InProcess.witness(all)
			r.Audited, r.Witness = line+".", append(r.Witness, disagreements...)
		}
		results = append(results, r)
		t.Logf("\n%s", r.text())
	}
	if path := filepath.Join(os.TempDir(), fmt.Sprintf("tenon-chaos-%d.log", seed)); os.WriteFile(path, []byte(w.logs.String()), 0o644) == nil {
		t.Logf("the operators' output is in %s", path)
	}
	rep := &report{Mode: *mode, Seed: seed, Sizes: s, Results: results, Took: time.Since(started), Date: started}
	t.Logf("\n%s", rep.table())
	for _, r := range results {
		if n := r.Leaked + r.Duplicated + r.Lost + r.Wedged; n != 0 {
			t.Errorf("%s: %d invariant violations (leaked %d, duplicated %d, lost %d, wedged %d)", r.Name, n, r.Leaked, r.Duplicated, r.Lost, r.Wedged)
		}
		if len(r.Witness) > 0 {
			t.Errorf("%s: the proxies and the API server's audit log disagree on the operator's writes: %s", r.Name, strings.Join(r.Witness, "; "))
		}
	}
	switch {
	case *reportPath == "":
	case t.Failed():
		t.Logf("%s not written: the run failed", *reportPath)
	default:
		if err := os.WriteFile(*reportPath, []byte(rep.markdown()), 0o644); err != nil {
			t.Errorf("failed to write the report: %v", err)
		}
	}
}
