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

package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"

	"github.com/tenon-dev/tenon/hack/bench/contender"
	"github.com/tenon-dev/tenon/hack/bench/harness"
)

func TestCheckAndWitnessUseTheAuditLog(t *testing.T) {
	statusPatch := harness.RequestKey{Verb: "patch", PatchType: "merge", Resource: "widgets", Subresource: "status"}
	auditPatch := harness.CompareKey(statusPatch)
	agreeing := func(workload string) harness.WorkloadResult {
		return harness.WorkloadResult{Workload: workload, Objects: 10,
			Requests: harness.Counts{statusPatch: {Requests: 10}},
			Audit:    &harness.AuditCounts{Requests: harness.Counts{auditPatch: {Requests: 10}}}}
	}
	quiet := func(workload string) harness.WorkloadResult {
		return harness.WorkloadResult{Workload: workload, Objects: 10, Audit: &harness.AuditCounts{Requests: harness.Counts{}}}
	}
	run := func(steady harness.WorkloadResult) []harness.RunResult {
		return []harness.RunResult{{Contender: contender.TenonName, Run: 1, Workloads: []harness.WorkloadResult{
			agreeing(harness.Converge), steady, agreeing(harness.Contention), agreeing(harness.Delete)}}}
	}
	for _, tc := range []struct {
		name         string
		runs         []harness.RunResult
		renderedFrom string
		want         []string
		section      string
	}{
		{
			name:    "counts that agree and a quiet steady state hold",
			runs:    run(quiet(harness.Steady)),
			section: "| **" + contender.TenonName + "** | 4 | 30 | 30 | 0 / 0 | 0 | agree |",
		},
		{
			name: "a disagreement fails the run",
			runs: run(harness.WorkloadResult{Workload: harness.Steady, Objects: 10,
				Audit: &harness.AuditCounts{Requests: harness.Counts{}, Disagreements: []string{"create events: audit log 1 (409: 0), client 0 (409: 0)"}}}),
			want:    []string{contender.TenonName + " run 1: steady: the audit log and the client's counter disagree: create events: audit log 1 (409: 0), client 0 (409: 0)"},
			section: "**disagree in 1**",
		},
		{
			name: "a write only the audit log saw at steady state fails tenon",
			runs: run(harness.WorkloadResult{Workload: harness.Steady, Objects: 10,
				Audit: &harness.AuditCounts{Requests: harness.Counts{{Verb: "create", Resource: "events"}: {Requests: 2}}}}),
			want:    []string{contender.TenonName + " run 1: the audit log has 2 writes of the steady-state resync, want 0"},
			section: "| **" + contender.TenonName + "** | 4 | 30 | 32 | 0 / 0 | 2 | agree |",
		},
		{
			name: "fresh measurements without audit counts fail",
			runs: run(harness.WorkloadResult{Workload: harness.Steady, Objects: 10}),
			want: []string{contender.TenonName + " run 1: steady: no counts from the audit log"},
		},
		{
			name:         "saved measurements that predate the witness do not",
			runs:         run(harness.WorkloadResult{Workload: harness.Steady, Objects: 10}),
			renderedFrom: "results.json",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := New(Input{Params: harness.Params{Runs: 1}, Contenders: []contender.Contender{{Name: contender.TenonName}},
				Runs: tc.runs, RenderedFrom: tc.renderedFrom, Environment: &Environment{}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cmp.Diff(tc.want, r.Check())).To(BeEmpty(), "Check (-want +got)")
			var b strings.Builder
			r.writeWitness(&b)
			g.Expect(b.String()).To(ContainSubstring("**Witness.**"))
			g.Expect(b.String()).To(ContainSubstring(tc.section))
		})
	}
}
