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
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"

	"github.com/tenon-dev/tenon/testing/testenv"
)

func TestCompareAudit(t *testing.T) {
	statusPatch := RequestKey{Verb: "patch", Resource: "widgets", Subresource: "status"}
	for _, tc := range []struct {
		name          string
		client, audit Counts
		want          []string
	}{
		{
			name:   "an apply and a merge patch are both patches in the audit log",
			client: Counts{{Verb: "apply", Resource: "widgets", Subresource: "status"}: {Requests: 2, Conflicts: 1}, {Verb: "patch", PatchType: "merge", Resource: "widgets", Subresource: "status"}: {Requests: 1}},
			audit:  Counts{statusPatch: {Requests: 3, Conflicts: 1}},
		},
		{
			name:   "watches are left out: each side sees them at a different time",
			client: Counts{{Verb: "watch", Resource: "widgets"}: {Requests: 1}},
			audit:  Counts{{Verb: "watch", Resource: "widgets"}: {Requests: 3}},
		},
		{
			name:   "requests that failed in the transport are left out",
			client: Counts{{Verb: "get", Resource: "widgets"}: {Requests: 3, Failures: 2, TransportErrors: 1}},
			audit:  Counts{{Verb: "get", Resource: "widgets"}: {Requests: 2}},
		},
		{
			name:   "a request only the audit log has is a disagreement",
			client: Counts{},
			audit:  Counts{{Verb: "create", Resource: "events"}: {Requests: 1}},
			want:   []string{"create events: audit log 1 (409: 0), client 0 (409: 0)"},
		},
		{
			name:   "a different number of 409 responses is a disagreement",
			client: Counts{{Verb: "update", Resource: "widgets"}: {Requests: 4, Conflicts: 1}, {Verb: "get", Resource: "non-resource"}: {Requests: 1}},
			audit:  Counts{{Verb: "update", Resource: "widgets"}: {Requests: 4, Conflicts: 2}},
			want: []string{
				"get non-resource: audit log 0 (409: 0), client 1 (409: 0)",
				"update widgets: audit log 4 (409: 2), client 4 (409: 1)",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := CompareAudit(tc.client, tc.audit)
			g.Expect(cmp.Diff(tc.want, got)).To(BeEmpty(), "CompareAudit (-want +got)")
		})
	}
}

func TestCountAudit(t *testing.T) {
	g := NewWithT(t)
	got := countAudit(testenv.AuditEvents{
		{Verb: "patch", Resource: "widgets", Subresource: "status", Code: 200},
		{Verb: "patch", Resource: "widgets", Subresource: "status", Code: 409},
		{Verb: "get", URI: "/apis", Code: 200},
		{Verb: "watch", Resource: "widgets", Code: 200},
	})
	want := Counts{
		{Verb: "patch", Resource: "widgets", Subresource: "status"}: {Requests: 2, Conflicts: 1},
		{Verb: "get", Resource: "non-resource"}:                     {Requests: 1},
		{Verb: "watch", Resource: "widgets"}:                        {Requests: 1},
	}
	g.Expect(cmp.Diff(want, got)).To(BeEmpty(), "countAudit (-want +got)")
}

func TestUserAgentTellsRolesAndContendersApart(t *testing.T) {
	g := NewWithT(t)
	agents := []string{
		UserAgent(RoleController, "tenon", 1), UserAgent(RoleController, "tenon", 2),
		UserAgent(RoleController, "tenon-ssa", 1), UserAgent(RoleWriters, "", 0), UserAgent(RoleHarness, "", 0),
	}
	seen := map[string]bool{}
	for _, a := range agents {
		g.Expect(seen).NotTo(HaveKey(a), "user agents: %v", agents)
		seen[a] = true
	}
}
