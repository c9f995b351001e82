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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

func TestDuplicateEventsPairsAPatch404WithALaterCreate409OfTheSameEvent(t *testing.T) {
	ev := func(verb, name string, code int) testenv.AuditEvent {
		return testenv.AuditEvent{Verb: verb, APIGroup: "events.k8s.io", Resource: "events", Namespace: "ns", Name: name, Code: code}
	}
	for _, tc := range []struct {
		name   string
		events testenv.AuditEvents
		want   int
	}{
		{
			name:   "the broadcaster's duplicate: create, patch 404, create 409, patch",
			events: testenv.AuditEvents{ev("create", "a", 201), ev("patch", "a", 404), ev("create", "a", 409), ev("patch", "a", 200)},
			want:   1,
		},
		{
			name:   "a series patch that finds its Event is not a duplicate",
			events: testenv.AuditEvents{ev("create", "a", 201), ev("patch", "a", 200)},
		},
		{
			name:   "a create 409 before the patch 404 does not pair",
			events: testenv.AuditEvents{ev("create", "a", 409), ev("patch", "a", 404)},
		},
		{
			name:   "a patch 404 and a create 409 of different Events do not pair",
			events: testenv.AuditEvents{ev("patch", "a", 404), ev("create", "b", 409)},
		},
		{
			name:   "each patch 404 pairs once",
			events: testenv.AuditEvents{ev("patch", "a", 404), ev("create", "a", 409), ev("create", "a", 409), ev("patch", "b", 404), ev("create", "b", 409)},
			want:   2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			n, samples := duplicateEvents(tc.events)
			g.Expect(n).To(Equal(tc.want), "samples: %v", samples)
			g.Expect(samples).To(HaveLen(tc.want))
		})
	}
}

func TestCompareWritesCountsByMethodAndResource(t *testing.T) {
	const status = "/apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c/status"
	audited := func(verb, resource, sub, uri string) testenv.AuditEvent {
		return testenv.AuditEvent{Verb: verb, APIGroup: "apps.tenon.dev", Resource: resource, Subresource: sub, URI: uri, Code: 200}
	}
	for _, tc := range []struct {
		name      string
		proxied   []write
		audited   testenv.AuditEvents
		uncertain func(write) bool
		want      []string
	}{
		{
			name:    "the same writes agree; reads are not compared",
			proxied: []write{{Method: "PATCH", Path: status, Status: 200}},
			audited: testenv.AuditEvents{audited("patch", "clusters", "status", status+"?fieldManager=x"), audited("get", "clusters", "", "/apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c")},
		},
		{
			name:    "a write the proxy answered itself with 502 may never have reached the API server",
			proxied: []write{{Method: "PATCH", Path: status, Status: 200}, {Method: "PATCH", Path: status, Status: 502}},
			audited: testenv.AuditEvents{audited("patch", "clusters", "status", status)},
		},
		{
			name:    "a write the proxy answered 502 may or may not be in the audit log",
			proxied: []write{{Method: "PATCH", Path: status, Status: 502}, {Method: "PATCH", Path: status, Status: 502}},
			audited: testenv.AuditEvents{audited("patch", "clusters", "status", status)},
		},
		{
			name:    "more audited writes than the proxy forwarded at all is a disagreement",
			proxied: []write{{Method: "PATCH", Path: status, Status: 502}},
			audited: testenv.AuditEvents{audited("patch", "clusters", "status", status), audited("patch", "clusters", "status", status)},
			want:    []string{"PATCH clusters/status: proxy 0 (and 1 it answered 502 or sent during a restart), audit log 2"},
		},
		{
			name:    "a write the proxy saw answered that the audit log lacks is a disagreement",
			proxied: []write{{Method: "PATCH", Path: status, Status: 409}},
			want:    []string{"PATCH clusters/status: proxy 1, audit log 0"},
		},
		{
			name:      "a write sent during a restart may be missing from the audit log, whatever its answer",
			proxied:   []write{{Method: "PATCH", Path: status, Status: 201}, {Method: "PATCH", Path: status, Status: 429}},
			uncertain: func(w write) bool { return w.Status == 429 },
			audited:   testenv.AuditEvents{audited("patch", "clusters", "status", status)},
		},
		{
			name:      "outside a restart it is a disagreement",
			proxied:   []write{{Method: "PATCH", Path: status, Status: 201}, {Method: "PATCH", Path: status, Status: 429}},
			uncertain: func(write) bool { return false },
			audited:   testenv.AuditEvents{audited("patch", "clusters", "status", status)},
			want:      []string{"PATCH clusters/status: proxy 2, audit log 1"},
		},
		{
			name:    "a write only the audit log has is a disagreement",
			audited: testenv.AuditEvents{{Verb: "create", APIGroup: "events.k8s.io", Resource: "events", URI: "/apis/events.k8s.io/v1/namespaces/ns/events", Code: 201}},
			want:    []string{"POST events: proxy 0, audit log 1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(cmp.Diff(tc.want, compareWrites(tc.proxied, tc.audited, tc.uncertain))).To(BeEmpty(), "compareWrites (-want +got)")
		})
	}
}

func TestWritesUntilKeepsThoseAnsweredByThen(t *testing.T) {
	g := NewWithT(t)
	at := func(s int) time.Time { return time.Unix(1700000000, 0).Add(time.Duration(s) * time.Second) }
	ws := []write{{Path: "a", End: at(1)}, {Path: "b", End: at(2)}, {Path: "c", End: at(3)}}
	g.Expect(writesUntil(ws, at(2))).To(Equal(ws[:2]))
}

func TestTheInProcessWitnessHoldsTheAuditLogToTheWritesTheClientForwarded(t *testing.T) {
	g := NewWithT(t)
	c, err := faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Delete}}, Probability: 1, Fault: faults.Conflict},
	}})
	g.Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	g.Expect(c.Create(t.Context(), cm)).To(Succeed())
	g.Expect(c.Update(t.Context(), cm)).To(Succeed())
	g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	g.Expect(apierrors.IsConflict(c.Delete(t.Context(), cm))).To(BeTrue(), "the plan answers the delete itself")

	p := &inProcess{user: "op", calls: c}
	ev := func(user, verb, resource string) testenv.AuditEvent {
		return testenv.AuditEvent{User: user, Verb: verb, Resource: resource, Namespace: "ns", Name: "a", Code: 200}
	}
	review := testenv.AuditEvent{User: "op", Verb: "create", APIGroup: "authorization.k8s.io", Resource: "selfsubjectaccessreviews", Code: 201}
	forwarded := testenv.AuditEvents{ev("op", "create", "configmaps"), ev("op", "update", "configmaps"), ev("op", "get", "configmaps"),
		ev("op", "create", "events"), ev("op", "update", "leases"), ev("admin", "delete", "configmaps"), review}
	line, disagreements := p.witness(forwarded)
	g.Expect(disagreements).To(BeEmpty())
	g.Expect(line).To(Equal("The API server's audit log recorded 2 writes by the in-process operator's user (Events and Leases apart), " +
		"as its fault-injecting client forwarded them (2 of its 3 writes; the others it answered with a fault)"))

	_, disagreements = p.witness(append(forwarded, ev("op", "delete", "configmaps")))
	g.Expect(disagreements).To(ConsistOf(HavePrefix("its fault-injecting client forwarded 2 writes (and 0 that failed on the way), the audit log has 3 "+
		"(the client's by verb and kind map[create ConfigMap:1 update ConfigMap:1], the audit log's by verb and resource map[create configmaps:1 delete configmaps:1 update configmaps:1])")),
		"a write the client answered itself cannot reach the audit log")
	_, disagreements = p.witness(forwarded[1:])
	g.Expect(disagreements).To(ConsistOf(HavePrefix("its fault-injecting client forwarded 2 writes (and 0 that failed on the way), the audit log has 1 ")))
}
