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

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// ClusterOperatorDir is the example operator's lab, relative to the repository's root: the module
// nested in the example's directory that holds its reliability scenarios (TestScale among them)
// and the floor operator.
const ClusterOperatorDir = "examples/cluster-operator/lab"

// clusterOperatorTimeout bounds the example operator's scale test (go test -timeout), build
// included, unless ClusterOperatorParams.Timeout says otherwise.
const clusterOperatorTimeout = 60 * time.Minute

// ClusterOperatorParams configures one run of the example-operator workload.
type ClusterOperatorParams struct {
	// Clusters is N, how many Clusters the operator converges.
	Clusters int
	// Replicas is each Cluster's spec.replicas; 0 means 3.
	Replicas int
	// NoSimulatorDelays makes the simulated DNS API and kubelet act at once, so that what is
	// measured is the operator.
	NoSimulatorDelays bool
	// NoCacheTransforms runs the operator with --cache-transforms=false: its cache keeps every
	// object as the API server sends it.
	NoCacheTransforms bool
	// RequireQuiet fails the run on a steady-state write or a duplicate Event.
	RequireQuiet bool
	// Floor runs the floor operator instead of the example's manager: the same operator written
	// with controller-runtime alone (the example lab's cmd/floor), what tenon is compared with.
	Floor bool
	// Timeout bounds the scale test, build included; 0 means 60 minutes.
	Timeout time.Duration
}

// ClusterOperatorResult is what the example-operator workload measured in one run.
type ClusterOperatorResult struct {
	// Clusters is N, the number of Clusters the operator converged.
	Clusters int `json:"clusters"`
	// Replicas is each Cluster's spec.replicas; 0 in measurements that predate it, which used 3.
	Replicas int `json:"replicas,omitempty"`
	// NoSimulatorDelays reports whether the simulated DNS API and kubelet acted at once.
	NoSimulatorDelays bool `json:"noSimulatorDelays,omitempty"`
	// NoCacheTransforms reports whether the operator's cache kept every object whole.
	NoCacheTransforms bool `json:"noCacheTransforms,omitempty"`
	// Floor reports whether this is the floor operator (see ClusterOperatorParams.Floor).
	Floor bool `json:"floor,omitempty"`
	// Ready is the time from the operator's start until every Cluster was Ready.
	Ready time.Duration `json:"ready"`
	// Delete is the time from deleting every Cluster until all were gone.
	Delete time.Duration `json:"delete"`
	// Requests counts the operator's requests until every Cluster was Ready, by method and
	// resource, such as "PATCH clusters/status" or "POST events".
	Requests map[string]int `json:"requests,omitempty"`
	// Writes is the number of write requests (POST, PUT, PATCH, DELETE) in Requests.
	Writes int `json:"writes"`
	// WritesPerCluster is Writes / Clusters.
	WritesPerCluster float64 `json:"writesPerCluster"`
	// PeakRSS is the manager process's peak resident set size (VmHWM) in bytes, once every
	// Cluster was Ready.
	PeakRSS int64 `json:"peakRSS"`
	// LiveHeap is the operator's Go heap in bytes after a garbage collection at the end of the
	// steady state; 0 in measurements that predate it.
	LiveHeap int64 `json:"liveHeap,omitempty"`
	// CPU is the CPU time the operator used from its start until every Cluster was Ready, and
	// SteadyCPU what it used in the steady state.
	CPU       time.Duration `json:"cpu,omitempty"`
	SteadyCPU time.Duration `json:"steadyCPU,omitempty"`
	// ProfiledCPU is the CPU time its CPU profiles sampled until a little after every Cluster
	// was Ready, and TenonCPU the part of it with a function of tenon's library on the stack
	// (requeue.WithBackoff's wrapper of every reconcile aside): tenon's computation with the
	// client calls it makes.
	ProfiledCPU time.Duration `json:"profiledCPU,omitempty"`
	TenonCPU    time.Duration `json:"tenonCPU,omitempty"`
	// TenonClientCPU is the part of TenonCPU in the client calls tenon makes (the REST client
	// down), and TenonCallbackCPU the part in the operator's own code that tenon calls back (the
	// DNS provider behind external.Resource); the rest is tenon's own computation. Both are zero
	// in measurements that predate the split.
	TenonClientCPU   time.Duration `json:"tenonClientCPU,omitempty"`
	TenonCallbackCPU time.Duration `json:"tenonCallbackCPU,omitempty"`
	// SentBytes and ReceivedBytes are the bytes of request and response bodies until every
	// Cluster was Ready, watches apart (WatchBytes).
	SentBytes     int64 `json:"sentBytes,omitempty"`
	ReceivedBytes int64 `json:"receivedBytes,omitempty"`
	WatchBytes    int64 `json:"watchBytes,omitempty"`
	// GuardBytes is the part of SentBytes that guards the writes (the test operations of JSON
	// patches, but for those of the uid): SentBytes - GuardBytes is the minimum the same writes
	// need. 0 in measurements that predate it.
	GuardBytes int64 `json:"guardBytes,omitempty"`
	// Watches is the most watches of each resource the operator had open at once until every
	// Cluster was Ready: one per informer (a watch the API server ends is opened again after it).
	Watches map[string]int `json:"watches,omitempty"`
	// Audit is what the API server's audit log recorded of the operator's requests; nil in
	// measurements that predate it.
	Audit *ClusterOperatorAudit `json:"audit,omitempty"`
	// Failure says why the workload did not finish, or is empty.
	Failure string `json:"failure,omitempty"`
}

// ClusterOperatorAudit is what the API server's audit log recorded for the example operator's
// user (see the example's ScaleResult, which this copies).
type ClusterOperatorAudit struct {
	// Requests counts the operator's requests until every Cluster was Ready, by verb and
	// resource with API group and subresource ("patch clusters.apps.tenon.dev/status").
	Requests map[string]int `json:"requests"`
	// Writes is the number of write requests in Requests.
	Writes int `json:"writes"`
	// WritesPerClusterByResource is Writes by resource, per Cluster.
	WritesPerClusterByResource map[string]float64 `json:"writesPerClusterByResource"`
	// EventsPerCluster counts the creates and patches of Events (core and events.k8s.io) until
	// every Cluster was Ready, per Cluster; GetsPerCluster the get requests.
	EventsPerCluster float64 `json:"eventsPerCluster"`
	GetsPerCluster   float64 `json:"getsPerCluster"`
	// DuplicateEvents counts the Events sent twice (a PATCH answered 404 followed by a POST of
	// the same Event answered 409), from the operator's start to the end of the steady state.
	DuplicateEvents       int      `json:"duplicateEvents"`
	DuplicateEventSamples []string `json:"duplicateEventSamples,omitempty"`
	// TrailingWrites counts the writes after every Cluster was Ready, before the steady state.
	TrailingWrites map[string]int `json:"trailingWrites,omitempty"`
	// Steady is how long the steady state lasted (every Cluster Ready, nothing changing), and
	// SteadyWrites the writes the operator sent in it, by verb and resource.
	Steady             time.Duration  `json:"steady"`
	SteadyWrites       map[string]int `json:"steadyWrites,omitempty"`
	SteadyWriteSamples []string       `json:"steadyWriteSamples,omitempty"`
	// Disagreements lists where the proxy's count of writes differs from the audit log's.
	Disagreements []string `json:"disagreements,omitempty"`
	// QuietRequired reports whether the scale test failed on steady-state writes and duplicate
	// Events; when it did not, the report does not either.
	QuietRequired bool `json:"quietRequired"`
}

// SteadyWriteCount returns the number of writes at steady state.
func (a *ClusterOperatorAudit) SteadyWriteCount() int {
	n := 0
	for _, c := range a.SteadyWrites {
		n += c
	}
	return n
}

// scaleResult is the JSON the example operator's TestScale writes (its type ScaleResult).
type scaleResult struct {
	Operator         string         `json:"operator"`
	Clusters         int            `json:"clusters"`
	Replicas         int            `json:"replicas"`
	SimulatorDelays  *bool          `json:"simulatorDelays"`
	OperatorArgs     string         `json:"operatorArgs"`
	ReadySeconds     float64        `json:"readySeconds"`
	DeleteSeconds    float64        `json:"deleteSeconds"`
	Requests         map[string]int `json:"requests"`
	Writes           int            `json:"writes"`
	WritesPerCluster float64        `json:"writesPerCluster"`
	PeakRSSBytes     int64          `json:"peakRSSBytes"`

	LiveHeapBytes           int64          `json:"liveHeapBytes"`
	CPUSeconds              float64        `json:"cpuSeconds"`
	SteadyCPUSeconds        float64        `json:"steadyCPUSeconds"`
	ProfiledCPUSeconds      float64        `json:"profiledCPUSeconds"`
	TenonCPUSeconds         float64        `json:"tenonCPUSeconds"`
	TenonClientCPUSeconds   float64        `json:"tenonClientCPUSeconds"`
	TenonCallbackCPUSeconds float64        `json:"tenonCallbackCPUSeconds"`
	SentBytes               int64          `json:"sentBytes"`
	GuardBytes              int64          `json:"guardBytes"`
	ReceivedBytes           int64          `json:"receivedBytes"`
	WatchBytes              int64          `json:"watchBytes"`
	Watches                 map[string]int `json:"watches"`

	AuditRequests              map[string]int     `json:"auditRequests"`
	AuditWrites                int                `json:"auditWrites"`
	WritesPerClusterByResource map[string]float64 `json:"writesPerClusterByResource"`
	EventsPerCluster           float64            `json:"eventsPerCluster"`
	GetsPerCluster             float64            `json:"getsPerCluster"`
	DuplicateEvents            int                `json:"duplicateEvents"`
	DuplicateEventSamples      []string           `json:"duplicateEventSamples"`
	TrailingWrites             map[string]int     `json:"trailingWrites"`
	SteadySeconds              float64            `json:"steadySeconds"`
	SteadyWrites               map[string]int     `json:"steadyWrites"`
	SteadyWriteSamples         []string           `json:"steadyWriteSamples"`
	Disagreements              []string           `json:"disagreements"`
	QuietRequired              bool               `json:"quietRequired"`
}

// IsWrite reports whether a request key of ClusterOperatorResult.Requests ("PATCH
// clusters/status") is a write.
func IsWrite(key string) bool {
	switch method, _, _ := strings.Cut(key, " "); method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// RunClusterOperator measures the example operator (examples/cluster-operator), or with p.Floor
// the floor operator, at p.Clusters (n): the time until all are Ready, its requests and writes
// per Cluster, the time to delete them, the manager's peak RSS, its live heap at steady state,
// its CPU time until Ready and the part of it in tenon's code, the bytes it sent and received and
// the watches it opened; and, from the API server's audit log, the same counts again, GETs and
// Events per Cluster, duplicate Events and the writes of a steady state after convergence.
// With p.RequireQuiet, the test fails on a steady-state write or a duplicate Event.
//
// It does not use the benchmark's control plane. The operator's packages are internal to its
// module, so the measurement lives beside them, as the Go test TestScale in the lab module
// nested in the example's directory (lab/chaos), and this runs
//
//	go test ./chaos -count=1 -run '^TestScale$' -chaos=scale -chaos.clusters=n -chaos.json=... -chaos.require-quiet=true
//
// in the lab (with p's replicas, simulator delays and cache transforms) and reads
// the JSON it writes. The test starts its own envtest control plane (with the garbage
// collector), the simulated cloud DNS API (500ms propagation) and the simulated kubelet (one
// StatefulSet replica ready every 100ms), both acting at once with p.NoSimulatorDelays; creates
// n Clusters of p.Replicas replicas; builds the operator's manager binary and starts it as a user bound only to the
// generated RBAC, behind a proxy that counts every request it sends; waits until every Cluster
// is Ready, reads the manager's VmHWM, waits through a steady state (the operator sent no write
// for 5 seconds, then 30 seconds more), then deletes the Clusters and waits until they are gone.
//
// A measurement that fails before the test wrote its JSON is returned as an error whose text
// ends with the tail of the test's output; one that fails after (on the steady state, or on the
// proxy and the audit log disagreeing) is returned with its figures and the failure in
// ClusterOperatorResult.Failure. Cancelling ctx stops the test's whole process group (its
// control plane is reaped by testenv).
func RunClusterOperator(ctx context.Context, p ClusterOperatorParams) (ClusterOperatorResult, error) {
	n := p.Clusters
	if p.Replicas == 0 {
		p.Replicas = 3
	}
	if p.Timeout == 0 {
		p.Timeout = clusterOperatorTimeout
	}
	if n < 1 {
		return ClusterOperatorResult{}, fmt.Errorf("the example operator needs at least 1 Cluster, not %d", n)
	}
	data, failure, err := runLabTest(ctx, "TestScale", p.testArgs)
	if err != nil {
		return ClusterOperatorResult{}, err
	}
	res, err := ReadScaleResult(data)
	if err != nil {
		return ClusterOperatorResult{}, errors.Join(failure, err)
	}
	if res.Clusters != n {
		return ClusterOperatorResult{}, errors.Join(failure, fmt.Errorf("the example operator's result is for %d Clusters, not %d", res.Clusters, n))
	}
	if failure != nil {
		res.Failure = failure.Error()
	}
	return res, nil
}

// runLabTest runs the example lab's go test that args returns for the result file it is given,
// and returns what the test wrote there. A test that failed after it wrote its result is
// returned with the result and the failure; one that wrote none, as an error whose text ends
// with the tail of the test's output. Cancelling ctx stops the test's whole process group (its
// control plane is reaped by testenv).
func runLabTest(ctx context.Context, test string, args func(out string) []string) (data []byte, failure, err error) {
	dir, err := findClusterOperator()
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "tenon-bench-cluster-operator-")
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create a temporary directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	out := filepath.Join(tmp, "result.json")

	cmd := exec.CommandContext(ctx, "go", args(out)...)
	cmd.Dir = dir
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	// Its own process group, so that cancelling stops go test, the test binary and the manager
	// binaries it started; the test's control plane has its own reaper.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if runErr != nil {
		failure = fmt.Errorf("%s failed in %s: %w\n%s", strings.Join(cmd.Args, " "), dir, runErr, tail(output.Bytes(), 40))
	}
	// The test writes its result before it checks the steady state: a run that failed there
	// still has its figures, for the report.
	data, err = os.ReadFile(out)
	if err != nil {
		if failure != nil {
			return nil, nil, failure
		}
		return nil, nil, fmt.Errorf("%s wrote no result (was %s skipped?): %w\n%s", strings.Join(cmd.Args, " "), test, err, tail(output.Bytes(), 40))
	}
	return data, failure, nil
}

// testArgs returns the arguments of the go test that measures what p asks for and writes its
// result to out.
func (p ClusterOperatorParams) testArgs(out string) []string {
	args := []string{"test", "./chaos", "-count=1", "-run", "^TestScale$",
		"-timeout", p.Timeout.String(), "-chaos=scale",
		fmt.Sprintf("-chaos.clusters=%d", p.Clusters), fmt.Sprintf("-chaos.replicas=%d", p.Replicas),
		"-chaos.json=" + out, fmt.Sprintf("-chaos.require-quiet=%t", p.RequireQuiet),
		fmt.Sprintf("-chaos.simulator-delays=%t", !p.NoSimulatorDelays)}
	if p.NoCacheTransforms {
		args = append(args, "-chaos.operator-args=--cache-transforms=false")
	}
	if p.Floor {
		args = append(args, "-chaos.operator=floor")
	}
	return args
}

// ReadScaleResult decodes what the example operator's TestScale writes with -chaos.json, as a
// ClusterOperatorResult: for results measured by running the test by hand (on a bigger machine,
// or one N at a time), which `-scale-import` adds to the measurements at scale.
func ReadScaleResult(data []byte) (ClusterOperatorResult, error) {
	var s scaleResult
	if err := json.Unmarshal(data, &s); err != nil {
		return ClusterOperatorResult{}, fmt.Errorf("failed to decode the example operator's result %s: %w", data, err)
	}
	replicas := s.Replicas
	if replicas == 0 {
		replicas = 3
	}
	res := ClusterOperatorResult{
		Clusters:          s.Clusters,
		Replicas:          replicas,
		NoSimulatorDelays: s.SimulatorDelays != nil && !*s.SimulatorDelays,
		NoCacheTransforms: strings.Contains(s.OperatorArgs, "--cache-transforms=false"),
		Ready:             seconds(s.ReadySeconds),
		Delete:            seconds(s.DeleteSeconds),
		Requests:          s.Requests,
		Writes:            s.Writes,
		WritesPerCluster:  s.WritesPerCluster,
		PeakRSS:           s.PeakRSSBytes,
		Floor:             s.Operator == "floor",
		LiveHeap:          s.LiveHeapBytes,
		CPU:               seconds(s.CPUSeconds),
		SteadyCPU:         seconds(s.SteadyCPUSeconds),
		ProfiledCPU:       seconds(s.ProfiledCPUSeconds),
		TenonCPU:          seconds(s.TenonCPUSeconds),
		TenonClientCPU:    seconds(s.TenonClientCPUSeconds),
		TenonCallbackCPU:  seconds(s.TenonCallbackCPUSeconds),
		SentBytes:         s.SentBytes,
		GuardBytes:        s.GuardBytes,
		ReceivedBytes:     s.ReceivedBytes,
		WatchBytes:        s.WatchBytes,
		Watches:           s.Watches,
		Audit: &ClusterOperatorAudit{
			Requests: s.AuditRequests, Writes: s.AuditWrites, WritesPerClusterByResource: s.WritesPerClusterByResource,
			EventsPerCluster: s.EventsPerCluster, GetsPerCluster: s.GetsPerCluster,
			DuplicateEvents: s.DuplicateEvents, DuplicateEventSamples: s.DuplicateEventSamples,
			TrailingWrites: s.TrailingWrites, Steady: seconds(s.SteadySeconds),
			SteadyWrites: s.SteadyWrites, SteadyWriteSamples: s.SteadyWriteSamples,
			Disagreements: s.Disagreements, QuietRequired: s.QuietRequired,
		},
	}
	return res, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// findClusterOperator returns the example operator's lab directory: examples/cluster-operator/lab
// in the nearest directory above the working directory (hack/bench when run by make) that has
// it, or else above this source file.
func findClusterOperator() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		for dir := start; ; dir = filepath.Dir(dir) {
			candidate := filepath.Join(dir, filepath.FromSlash(ClusterOperatorDir))
			if _, err := os.Stat(filepath.Join(candidate, "go.mod")); err == nil {
				return candidate, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", errors.New("failed to find the example operator's lab (" + ClusterOperatorDir +
		"/go.mod) above the working directory or this source file; run the benchmark from hack/bench")
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines before]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
