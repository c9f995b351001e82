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

// Package harness drives the benchmark: it runs one contender at a time under a real
// controller-runtime manager against an envtest control plane, applies the workloads, counts
// every request the manager sends, and checks the outcome field by field.
//
// # What is counted
//
// [Counter] wraps the transport of the manager's rest.Config (rest.Config.WrapTransport), so it
// sees every HTTP request the manager makes: the reconciler's reads and writes, and the informer
// cache's lists and watches. Nothing the benchmark itself sends (creating the Widgets, the
// concurrent writers, the checks) goes through it: those use a separate client.
//
// # The witness
//
// The control plane runs with its audit log on (testenv's Options.AuditLog), the API server's own
// record of every request. Each role sends a User-Agent of its own ([UserAgent]: a contender's
// manager, per run; the writers; the harness), since all authenticate as the same administrator.
// Every workload is bracketed by two marks in the log, and [CompareAudit] compares the manager's
// requests there with the [Counter]'s, kind by kind, 409 responses included; the result is in
// [WorkloadResult.Audit], and the report fails a run on any disagreement. Watches, and requests
// that failed in the transport, are left out: only one side sees them (see [CompareAudit]).
//
// [Instrument] wraps the reconciler and counts reconciles, the errors they return (what
// controller-runtime counts in controller_runtime_reconcile_errors_total), and requeues.
//
// # When a workload is over
//
// A workload ends when the system is quiet: every Widget, read directly from the API server,
// is in its expected state; the manager's cache holds the same resourceVersions; no reconcile
// is running, queued or scheduled for later (a requeue or a retry after an error); and this holds
// on two polls in a row with no reconcile in between. Wall time runs to the first of those polls.
// It is polled every [PollInterval], and bounded by a timeout.
//
// # The example operator
//
// [RunClusterOperator] measures the example operator (examples/cluster-operator) apart from the
// contenders: it runs that module's scale test, which has its own control plane, simulators,
// counting proxy and manager binary, and reads the JSON it writes.
package harness
