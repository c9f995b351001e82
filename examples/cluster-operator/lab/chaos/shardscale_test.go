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
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var (
	shardScaleShards  = flag.Int("chaos.shards", 0, "with -chaos=scale: run TestShardScale, the operator as this many shards of a ring with the reference sharder")
	shardScaleLatency = flag.Duration("chaos.dns-latency", 50*time.Millisecond, "with -chaos.shards: the latency of every call to the simulated DNS provider, which bounds a reconcile")
)

// ShardScaleResult is what one run of TestShardScale measured.
type ShardScaleResult struct {
	Shards, Clusters int
	DNSLatency       string
	// OperatorArgs are the flags -chaos.operator-args added to each shard's.
	OperatorArgs string
	// ReadySeconds is the time from the sharder's start, once every shard held its Lease, until
	// every Cluster was Ready.
	ReadySeconds float64
	// WritesPerCluster counts the shards' writes until Ready, from the audit log; SteadyWrites
	// those in the steady state after it, which must be 0. Neither counts the renewals of the
	// shards' Leases: SteadyLeaseWrites counts those of the steady state.
	WritesPerCluster                float64
	SteadyWrites, SteadyLeaseWrites int
	// PeakRSSBytes and LiveHeapBytes are each shard's; CPUSeconds the shards' together until Ready.
	PeakRSSBytes, LiveHeapBytes []int64
	CPUSeconds                  float64
	// BaselineRSSBytes is each shard's peak RSS once it held its Lease, before the sharder
	// assigned it anything: what a shard costs with no Cluster.
	BaselineRSSBytes []int64
	// Assigned counts the sharder's first assignments of Clusters to each shard; Drains its
	// drains, which a run whose shards all joined before the sharder started has none of.
	Assigned map[string]int
	Drains   int
}

// TestShardScale runs the example operator as -chaos.shards shards of a ring, with the reference
// sharder, on -chaos.clusters Clusters, with every call to the DNS provider taking
// -chaos.dns-latency and the flags of -chaos.operator-args added to each shard's: the time to
// Ready, the writes, the steady state and each shard's memory.
func TestShardScale(t *testing.T) {
	if *mode != "scale" || *shardScaleShards <= 0 {
		t.Skip("run with -chaos=scale -chaos.shards=N")
	}
	n, k := *scaleClusters, *shardScaleShards
	interval := min(5*time.Second, max(200*time.Millisecond, time.Duration(n)*time.Millisecond/2))
	w := newWorld(t, uint64(time.Now().UnixNano()), sizes{Timeout: 2 * time.Hour, NoSimulatorDelays: true, ListInterval: interval})
	w.dns.SetFaults(clouddnstest.Faults{Latency: *shardScaleLatency})
	ns := w.namespace(t, "shardscale")
	w.createClusters(t, ns, "c", n, 1)

	s := newClusterSharder(t, ns, time.Second)
	start := w.mark(t)
	log := &writes{}
	procs := make([]*process, k)
	addrs := make([]string, k)
	for i := range k {
		name := shardName(i)
		addrs[i] = freeAddr(t)
		procs[i] = w.startOperator(t, name, w.newProxy(t, name, w.user.Config(), log),
			append([]string{"--controller-ring=" + ringName, "--shard-name=" + name, "--leader-election-namespace=" + systemNamespace,
				"--pprof-bind-address=" + addrs[i]}, strings.Fields(*scaleOperatorArgs)...)...)
	}
	// The sharder starts once every shard holds its Lease, so that it assigns each Cluster once,
	// to the ring of k, rather than to the first shard and then again as the others join.
	if err := poll(t.Context(), time.Minute, func(ctx context.Context) (bool, error) {
		shards, err := s.Shards(ctx)
		if err != nil {
			return false, err
		}
		ready := 0
		for _, sh := range shards {
			if sh.State == sharder.Ready {
				ready++
			}
		}
		return ready == k, nil
	}); err != nil {
		t.Fatalf("the %d shards did not all hold their Leases within a minute: %v\n%s", k, err, w.logs.tail(30))
	}
	baseline := make([]int64, k)
	for i, p := range procs {
		rss, err := peakRSS(p.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		baseline[i] = rss
		t.Logf("%s with nothing assigned: %s", p.name, memoryParts(t.Context(), p.cmd.Process.Pid, addrs[i]))
	}
	started := time.Now()
	runSharder(t, s)
	w.waitConverged(t, ns)
	ready := time.Since(started)
	readyMark := w.mark(t)
	res := ShardScaleResult{Shards: k, Clusters: n, DNSLatency: shardScaleLatency.String(), OperatorArgs: *scaleOperatorArgs, ReadySeconds: ready.Seconds(), BaselineRSSBytes: baseline}
	for _, p := range procs {
		cpu, err := cpuTime(p.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		res.CPUSeconds += cpu.Seconds()
		rss, err := peakRSS(p.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		res.PeakRSSBytes = append(res.PeakRSSBytes, rss)
	}
	res.WritesPerCluster = float64(len(w.operatorRequests(t, start, readyMark).Writes().Filter(notLease))) / float64(n)
	for i, p := range procs {
		t.Logf("%s at Ready: %s", p.name, memoryParts(t.Context(), p.cmd.Process.Pid, addrs[i]))
	}

	steadyFrom := w.waitWritesSettle(t, readyMark, scaleSettle, scaleSettleTimeout)
	steadyTo := w.waitQuiet(t, steadyFrom, *scaleQuiet)
	steady := w.operatorRequests(t, steadyFrom, steadyTo).Writes()
	if all, err := env.AuditLog().Between(start, steadyTo); err == nil {
		t.Logf("The shards' writes to the children the sharder labels (a child is missing from its shard's cache until then):%s", childWrites(all, w.user.Name()))
	}
	res.SteadyLeaseWrites = len(steady) - len(steady.Filter(notLease))
	steady = steady.Filter(notLease)
	res.SteadyWrites = len(steady)
	for _, addr := range addrs {
		heap, err := liveHeap(t.Context(), addr)
		if err != nil {
			t.Fatal(err)
		}
		res.LiveHeapBytes = append(res.LiveHeapBytes, heap)
	}
	held, drains := map[string]int{}, 0
	for _, m := range s.Moves() {
		switch {
		case m.Controlled:
		case m.Drain:
			drains++
		case m.From == "":
			held[m.To]++
		}
	}
	res.Assigned, res.Drains = held, drains
	t.Logf("%d shards, %d Clusters, DNS latency %s: Ready in %s, %.2f writes per Cluster, %d in %s of steady state (and %d Lease renewals); CPU %.1fs; per shard: peak RSS %v MiB (%v MiB before any assignment), live heap %v MiB; assignments per shard %v, %d drains",
		k, n, shardScaleLatency, secs(ready), res.WritesPerCluster, res.SteadyWrites, secs(steadyTo.Time().Sub(steadyFrom.Time())), res.SteadyLeaseWrites, res.CPUSeconds,
		mibs(res.PeakRSSBytes), mibs(res.BaselineRSSBytes), mibs(res.LiveHeapBytes), held, drains)
	if *scaleJSON != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*scaleJSON, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(steady) > 0 {
		// The sharder's writes meanwhile: a child it labels late is missing from its shard's cache
		// until then, and each reconcile of its controller applies it again.
		var labelled map[string]int
		if all, err := env.AuditLog().Between(steadyFrom, steadyTo); err == nil {
			labelled = all.Writes().Filter(func(e testenv.AuditEvent) bool { return e.UserAgent == sharderAgent }).
				Count(func(e testenv.AuditEvent) string { return e.Verb + " " + kindOf(e) })
		}
		t.Errorf("the shards sent %d writes in the steady state, want 0: %v (the sharder's meanwhile: %v)\n%s", len(steady),
			steady.Count(func(e testenv.AuditEvent) string { return e.Verb + " " + kindOf(e) }), labelled, w.describeWrites(t, steady))
	}
	w.deleteAll(t, ns)
	w.waitGone(t, ns)
}

// memoryParts describes what the memory of process pid, serving pprof at addr, is made of: its
// resident anonymous and file-backed pages, what the Go runtime obtained from the system and
// what of it the heap holds, has returned, and will collect at, and its garbage collections.
func memoryParts(ctx context.Context, pid int, addr string) string {
	var parts []string
	for _, field := range []string{"RssAnon", "RssFile"} {
		if v, err := procStatus(pid, field); err == nil {
			parts = append(parts, fmt.Sprintf("%s %d MiB", field, mibs([]int64{v})[0]))
		}
	}
	stats, err := memStats(ctx, addr, false)
	if err != nil {
		return strings.Join(append(parts, err.Error()), ", ")
	}
	for _, field := range []string{"Sys", "HeapSys", "HeapInuse", "HeapReleased", "StackSys", "NextGC"} {
		parts = append(parts, fmt.Sprintf("%s %d MiB", field, mibs([]int64{stats[field]})[0]))
	}
	return strings.Join(append(parts, fmt.Sprintf("NumGC %d", stats["NumGC"])), ", ")
}

// notLease reports whether e is not a request for a Lease.
func notLease(e testenv.AuditEvent) bool { return e.Resource != "leases" }

// mibs returns byte counts in MiB, rounded.
func mibs(bs []int64) []int64 {
	out := slices.Clone(bs)
	for i := range out {
		out[i] = (out[i] + 1<<19) >> 20
	}
	return out
}

// describeWrites says what writes wrote, for a failure: their count by response code and user
// agent, and the objects written most, each with the shard label it and its controller carry now.
func (w *world) describeWrites(t *testing.T, writes testenv.AuditEvents) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "by response: %v\n", writes.Count(func(e testenv.AuditEvent) string {
		return fmt.Sprintf("%d %s %s", e.Code, e.UserAgent, e.Message)
	}))
	perObject := writes.Count(func(e testenv.AuditEvent) string { return kindOf(e) + " " + e.Namespace + "/" + e.Name })
	objects := slices.SortedFunc(maps.Keys(perObject), func(a, b string) int { return cmp.Or(perObject[b]-perObject[a], strings.Compare(a, b)) })
	for _, o := range objects[:min(len(objects), 10)] {
		fmt.Fprintf(&b, "  %s: %d writes", o, perObject[o])
		kind, key, _ := strings.Cut(o, " ")
		ns, name, _ := strings.Cut(key, "/")
		if kind == "services" {
			svc := &metav1.PartialObjectMetadata{}
			svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
			if err := w.admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
				fmt.Fprintf(&b, " (%v)", err)
			} else {
				fmt.Fprintf(&b, "; its shard %q", svc.Labels[shardLabelKey])
				if ref := metav1.GetControllerOf(svc); ref != nil {
					owner := &metav1.PartialObjectMetadata{}
					owner.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(ref.Kind))
					if err := w.admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: ref.Name}, owner); err == nil {
						fmt.Fprintf(&b, ", its controller's %q", owner.Labels[shardLabelKey])
					}
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// childWrites describes user's writes to the children the sharder labels, by resource: how many
// there were, how many were creations, how many completed before the sharder's first accepted
// write to the same object (or to one it never wrote), how many objects the sharder wrote more
// than once, and how long after its creation the sharder first wrote an object, at the median and
// at most.
func childWrites(events testenv.AuditEvents, user string) string {
	type stats struct {
		writes, creates, early, relabelled int
		delays                             []time.Duration
	}
	byResource := map[string]*stats{}
	labelled, labels, created := map[string]time.Time{}, map[string]int{}, map[string]time.Time{}
	key := func(e testenv.AuditEvent) string { return e.Resource + " " + e.Namespace + "/" + e.Name }
	// Directory entries are tracked, never labelled: they are left out.
	children := func(e testenv.AuditEvent) bool {
		return e.Namespace != directoryNamespace && (e.Resource == "services" || e.Resource == "configmaps" || e.Resource == "statefulsets")
	}
	for _, e := range events {
		if !children(e) || !e.IsWrite() || e.Code >= 300 {
			continue
		}
		switch {
		case e.UserAgent == sharderAgent:
			labels[key(e)]++
			if labels[key(e)] == 1 {
				labelled[key(e)] = e.Completed
			}
		case e.User == user && e.Verb == "create", e.User == user && e.Verb == "patch" && e.Code == 201:
			if _, ok := created[key(e)]; !ok {
				created[key(e)] = e.Completed
			}
		}
	}
	for _, e := range events {
		if e.User != user || !children(e) || !e.IsWrite() {
			continue
		}
		st := byResource[e.Resource]
		if st == nil {
			st = &stats{}
			byResource[e.Resource] = st
		}
		st.writes++
		if e.Verb == "create" || e.Code == 201 {
			st.creates++
		}
		if at, ok := labelled[key(e)]; !ok || e.Completed.Before(at) {
			st.early++
		}
	}
	for k, n := range labels {
		resource, _, _ := strings.Cut(k, " ")
		st := byResource[resource]
		if st == nil {
			continue
		}
		if n > 1 {
			st.relabelled++
		}
		if c, ok := created[k]; ok {
			st.delays = append(st.delays, labelled[k].Sub(c))
		}
	}
	var b strings.Builder
	for _, resource := range slices.Sorted(maps.Keys(byResource)) {
		st := byResource[resource]
		slices.Sort(st.delays)
		var median, most time.Duration
		if n := len(st.delays); n > 0 {
			median, most = st.delays[n/2], st.delays[n-1]
		}
		fmt.Fprintf(&b, "\n  %s: %d writes by the shards (%d creations), %d before the sharder labelled the object; %d objects labelled more than once; labelled %s after creation at the median, %s at most",
			resource, st.writes, st.creates, st.early, st.relabelled, median.Round(time.Millisecond), most.Round(time.Millisecond))
	}
	return b.String()
}
