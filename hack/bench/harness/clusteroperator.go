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
	"context"
	"errors"
	"time"
)

// ErrClusterOperatorNotWired is returned by RunClusterOperator until the example operator can be
// driven by the benchmark.
var ErrClusterOperatorNotWired = errors.New("the example operator (examples/cluster-operator) is not wired into the benchmark yet")

// ClusterOperatorResult is what the example-operator workload measures.
type ClusterOperatorResult struct {
	// Clusters is N, the number of Cluster objects created.
	Clusters int `json:"clusters"`
	// Ready is the time from the operator's start until every Cluster was Ready.
	Ready time.Duration `json:"ready"`
	// Requests are the operator's requests, by kind; writes per Cluster derive from them.
	Requests Counts `json:"requests"`
	// PeakRSS is the operator manager's peak resident set size in bytes (VmHWM).
	PeakRSS int64 `json:"peakRSS"`
}

// RunClusterOperator is the hook for the fourth workload of issue 11: the example operator at N
// Clusters, reporting the time until all are Ready, writes per Cluster and the manager's peak RSS.
//
// HOOK (issue 11): not wired; it returns ErrClusterOperatorNotWired. The operator's packages are
// internal to its module, so the benchmark cannot import its reconciler. The plan:
//
//  1. build the operator's manager binary (examples/cluster-operator/cmd) and run it as a child
//     process with a kubeconfig for this environment whose server is a local counting proxy in
//     front of the API server (plain HTTP on 127.0.0.1, forwarding with this environment's
//     credentials through the same Counter, around a httputil.ReverseProxy), so
//     every request is counted as for the contenders and the peak RSS (VmHWM in
//     /proc/<pid>/status) is the manager's alone;
//  2. install the operator's CRDs (config/crd/bases), start its simulated cloud DNS server, create
//     N Clusters in a fresh namespace, and wait (with settle's rules) until all are Ready;
//  3. delete them, wait until they and their children are gone, and stop the process.
//
// The operator's cmd/main.go already takes what the child process needs (--kubeconfig from
// controller-runtime, --metrics-bind-address=0, --health-probe-bind-address=0, --dns-endpoint,
// --dns-credentials, --max-concurrent-reconciles). What is missing is a way to run, outside the
// operator's own tests, the two simulators a Cluster needs to become Ready under envtest: the
// simulated cloud DNS server (internal/clouddns) and the kubelet simulator that makes
// StatefulSets ready (internal/kubelet); for example a flag of cmd/demo that starts only them
// against a given kubeconfig and prints the DNS endpoint.
func (e *Env) RunClusterOperator(_ context.Context, _ Params) (ClusterOperatorResult, error) {
	return ClusterOperatorResult{}, ErrClusterOperatorNotWired
}
