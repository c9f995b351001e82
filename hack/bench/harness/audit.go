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
	"fmt"
	"slices"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// The roles whose requests the audit log tells apart by User-Agent (see UserAgent). Every role
// authenticates as the same administrator, so the user name cannot.
const (
	// RoleController is a contender's manager: its cache, its client and its reconciler.
	RoleController = "controller"
	// RoleWriters is the concurrent writers of the contention workload.
	RoleWriters = "writers"
	// RoleHarness is the benchmark's own requests: creating Widgets, the settle checks.
	RoleHarness = "harness"
)

// UserAgent returns the User-Agent the requests of role send, for the run-th run of the named
// contender (the harness's and the writers' are shared by every contender: pass "" and 0), so
// that the audit log can tell the requests of each apart.
func UserAgent(role, contender string, run int) string {
	if contender == "" {
		return "tenon-bench/" + role
	}
	return fmt.Sprintf("tenon-bench/%s (%s; run %d)", role, contender, run)
}

// AuditCounts is what the API server's audit log recorded for a contender's controller during a
// workload, and how it compares with the counting transport's figures.
type AuditCounts struct {
	// Requests are the requests the audit log recorded, by kind. A server-side apply is recorded
	// as a patch, and the API server does not record the patch type: the keys have
	// neither "apply" nor a PatchType. Only Requests and Conflicts (status 409) are filled in.
	Requests Counts `json:"requests"`
	// Disagreements lists the kinds of request (watches excepted) for which the audit log and
	// the counting transport have different numbers of requests or of 409 responses, as
	// "patch widgets/status: audit log 120 (409: 3), client 119 (409: 3)". Empty when they agree.
	Disagreements []string `json:"disagreements,omitempty"`
}

// auditKey returns the RequestKey an audited request is counted under, the one CompareKey
// returns for the client's key of the same request.
func auditKey(e testenv.AuditEvent) RequestKey {
	if e.Resource == "" {
		return RequestKey{Verb: e.Verb, Resource: "non-resource"}
	}
	return RequestKey{Verb: e.Verb, Resource: e.Resource, Subresource: e.Subresource}
}

// CompareKey returns the key under which a request the counting transport counted as k is in the
// audit log: an apply is a patch, and the patch type is not recorded.
func CompareKey(k RequestKey) RequestKey {
	if k.Verb == "apply" {
		k.Verb = "patch"
	}
	k.PatchType = ""
	return k
}

// countAudit counts audited requests by kind.
func countAudit(events testenv.AuditEvents) Counts {
	out := Counts{}
	for _, e := range events {
		k := auditKey(e)
		t := out[k]
		t.Requests++
		if e.Code == 409 {
			t.Conflicts++
		}
		out[k] = t
	}
	return out
}

// CompareAudit compares what the counting transport counted (client) with what the audit log
// recorded (audit, keyed as by the audit log) and returns every kind of request on which they
// disagree, sorted. What only one side can see by construction is left out:
//
//   - watches: the transport counts one when its response starts, the audit log when it ends,
//     which for an informer's watch is minutes later or when the manager stops;
//   - requests that failed in the transport (Tally.TransportErrors): they never reached the
//     API server.
func CompareAudit(client, audit Counts) []string {
	type pair struct{ client, audit Tally }
	byKey := map[RequestKey]*pair{}
	get := func(k RequestKey) *pair {
		p, ok := byKey[k]
		if !ok {
			p = &pair{}
			byKey[k] = p
		}
		return p
	}
	for k, t := range client {
		if k.Verb == "watch" {
			continue
		}
		p := get(CompareKey(k))
		p.client.Requests += t.Requests - t.TransportErrors
		p.client.Conflicts += t.Conflicts
	}
	for k, t := range audit {
		if k.Verb == "watch" {
			continue
		}
		p := get(k)
		p.audit.Requests += t.Requests
		p.audit.Conflicts += t.Conflicts
	}
	var out []string
	for k, p := range byKey {
		if p.client.Requests != p.audit.Requests || p.client.Conflicts != p.audit.Conflicts {
			out = append(out, fmt.Sprintf("%s: audit log %d (409: %d), client %d (409: %d)",
				k, p.audit.Requests, p.audit.Conflicts, p.client.Requests, p.client.Conflicts))
		}
	}
	slices.Sort(out)
	return out
}

// auditWorkload reads the controller's requests between two marks of the audit log and compares
// them with the counter's.
func (s *runState) auditWorkload(from, to testenv.AuditMark, client Counts) (*AuditCounts, error) {
	events, err := s.env.audit.Between(from, to)
	if err != nil {
		return nil, fmt.Errorf("failed to read the audit log: %w", err)
	}
	ua := UserAgent(RoleController, s.name, s.run)
	mine := events.Filter(func(e testenv.AuditEvent) bool { return e.UserAgent == ua })
	a := &AuditCounts{Requests: countAudit(mine)}
	a.Disagreements = CompareAudit(client, a.Requests)
	return a, nil
}
