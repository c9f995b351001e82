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
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The API server's audit log is the witness of what the operator sent: the proxy counts what
// went through it, the audit log what the API server answered, both as the operator's user.

// mark takes a mark in the audit log.
func (w *world) mark(t *testing.T) testenv.AuditMark {
	t.Helper()
	m, err := env.AuditLog().Mark(t.Context())
	if err != nil {
		t.Fatalf("failed to mark the audit log: %v", err)
	}
	return m
}

// operatorRequests returns the requests the audit log recorded for the operator's user between
// two marks.
func (w *world) operatorRequests(t *testing.T, from, to testenv.AuditMark) testenv.AuditEvents {
	t.Helper()
	events, err := env.AuditLog().Between(from, to)
	if err != nil {
		t.Fatalf("failed to read the audit log: %v", err)
	}
	return events.ByUser(w.user.Name())
}

// waitWritesSettle waits, up to timeout, until the operator's newest write since from (Lease
// renewals aside) is settle old, and returns a mark taken then (from itself when it wrote nothing since). When the operator
// keeps writing, it returns the last mark it took: the quiet period that follows fails.
func (w *world) waitWritesSettle(t *testing.T, from testenv.AuditMark, settle, timeout time.Duration) testenv.AuditMark {
	t.Helper()
	last := from
	err := poll(t.Context(), timeout, func(ctx context.Context) (bool, error) {
		m, err := env.AuditLog().Mark(ctx)
		if err != nil {
			return false, err
		}
		last = m
		events, err := env.AuditLog().Between(from, m)
		if err != nil {
			return false, err
		}
		// A shard's Lease renewals go on at steady state; they are not the reconciles' writes.
		writes := events.ByUser(w.user.Name()).Writes().Filter(notLease)
		if len(writes) == 0 {
			last = from
			return true, nil
		}
		return m.Time().Sub(writes[len(writes)-1].Completed) >= settle, nil
	})
	if err != nil && t.Context().Err() == nil {
		t.Logf("the operator's writes did not settle within %s after every Cluster was Ready: %v", timeout, err)
	}
	return last
}

// waitQuiet waits for d from mark from, polling the audit log with marks, and returns the mark
// that ends the period: at least d after from.
func (w *world) waitQuiet(t *testing.T, from testenv.AuditMark, d time.Duration) testenv.AuditMark {
	t.Helper()
	var end testenv.AuditMark
	err := poll(t.Context(), d+time.Minute, func(ctx context.Context) (bool, error) {
		m, err := env.AuditLog().Mark(ctx)
		if err != nil {
			return false, err
		}
		end = m
		return m.Time().Sub(from.Time()) >= d, nil
	})
	if err != nil {
		t.Fatalf("failed to wait for the quiet period of %s: %v", d, err)
	}
	return end
}

// methodOf returns the HTTP method of an audited request, as the proxy counts it.
func methodOf(e testenv.AuditEvent) string {
	switch e.Verb {
	case "create":
		return http.MethodPost
	case "update":
		return http.MethodPut
	case "patch":
		return http.MethodPatch
	case "delete", "deletecollection":
		return http.MethodDelete
	case "get", "list", "watch":
		return http.MethodGet
	}
	return strings.ToUpper(e.Verb)
}

// requestKey returns an audited request's key as the proxy's counts have it: "PATCH
// clusters/status" (no API group: the proxy reads only the path's resource).
func requestKey(e testenv.AuditEvent) string {
	return methodOf(e) + " " + resourceOf(e.URI[:strings.IndexByte(e.URI+"?", '?')])
}

// kindOf returns the resource an audited request is about, with its API group and subresource,
// such as "clusters.apps.tenon.dev/status", "events.events.k8s.io" or "events" (core); the path
// of a request outside the resource API, such as "/apis".
func kindOf(e testenv.AuditEvent) string {
	if e.Resource == "" {
		return e.URI[:strings.IndexByte(e.URI+"?", '?')]
	}
	k := e.Resource
	if e.APIGroup != "" {
		k += "." + e.APIGroup
	}
	if e.Subresource != "" {
		k += "/" + e.Subresource
	}
	return k
}

// describe returns one line about an audited request, for failure messages.
func describe(e testenv.AuditEvent) string {
	return fmt.Sprintf("%s %s %s/%s → %d at %s", e.Verb, kindOf(e), e.Namespace, e.Name, e.Code, e.Completed.Format("15:04:05.000"))
}

// isEventWrite reports whether an audited request is a create or patch of an Event, core or
// events.k8s.io.
func isEventWrite(e testenv.AuditEvent) bool {
	return e.Resource == "events" && (e.Verb == "create" || e.Verb == "patch")
}

// duplicateEvents finds the Events client-go's event broadcaster sent twice. The rule: a PATCH of
// an Event answered 404 Not Found, followed later in the log by a POST of an Event of the same
// namespace and name answered 409 Conflict (AlreadyExists). The broadcaster sends that pair when
// the same Event is recorded twice in quick succession: the second becomes a series and is
// patched before the first one's create has landed (404), then created (409), then patched
// again once it retries. Each PATCH 404 is paired with the first such POST 409 after it.
func duplicateEvents(events testenv.AuditEvents) (n int, samples []string) {
	type key struct{ namespace, name string }
	pending := map[key]int{}
	for _, e := range events {
		if e.Resource != "events" {
			continue
		}
		k := key{e.Namespace, e.Name}
		switch {
		case e.Verb == "patch" && e.Code == http.StatusNotFound:
			pending[k]++
		case e.Verb == "create" && e.Code == http.StatusConflict && pending[k] > 0:
			pending[k]--
			n++
			if len(samples) < 5 {
				samples = append(samples, kindOf(e)+" "+e.Namespace+"/"+e.Name)
			}
		}
	}
	return n, samples
}

// compareWrites compares the writes the proxy recorded with those the audit log recorded for the
// operator's user, by method and resource, and returns each kind on which they disagree. A write
// the proxy answered itself with 502 Bad Gateway (the API server was down, or the operator went
// away mid-request) may or may not have reached the API server, and so may a write for which
// uncertain is true (one sent while kube-apiserver was stopping or starting: a server that is
// shutting down refuses requests before its audit filter, and one killed after it answered may
// not have written the event): the audit log may have it or not, and only a count outside those
// bounds is a disagreement. uncertain may be nil.
func compareWrites(proxied []write, audited testenv.AuditEvents, uncertain func(write) bool) []string {
	type tally struct{ sure, maybe, audit int }
	counts := map[string]*tally{}
	get := func(k string) *tally {
		if counts[k] == nil {
			counts[k] = &tally{}
		}
		return counts[k]
	}
	for _, pw := range proxied {
		c := get(pw.Method + " " + resourceOf(pw.Path))
		if pw.Status == http.StatusBadGateway || (uncertain != nil && uncertain(pw)) {
			c.maybe++
		} else {
			c.sure++
		}
	}
	for _, e := range audited.Writes() {
		get(requestKey(e)).audit++
	}
	var out []string
	for k, c := range counts {
		if c.audit < c.sure || c.audit > c.sure+c.maybe {
			msg := fmt.Sprintf("%s: proxy %d, audit log %d", k, c.sure, c.audit)
			if c.maybe > 0 {
				msg = fmt.Sprintf("%s: proxy %d (and %d it answered 502 or sent during a restart), audit log %d", k, c.sure, c.maybe, c.audit)
			}
			out = append(out, msg)
		}
	}
	slices.Sort(out)
	return out
}

// inProcess is an operator the test runs in its own process (the fault storm's), as a user of
// its own, with its client wrapped by a fault plan that recorded every call.
type inProcess struct {
	user  string
	calls *faults.Client
}

// witness checks the writes the audit log recorded for the in-process operator's user against
// those its client forwarded to the API server, once the operator has stopped, and says what
// it found as a sentence, with the disagreements. The operator's Events and Lease renewals
// do not go through that client and are left out. A forwarded write that failed with
// something other than an answer of the API server (a broken connection) may or may not have
// reached it. The access reviews testenv.NewUser creates as the user, to wait until the API
// server grants its roles, are not the operator's either.
func (p *inProcess) witness(audited testenv.AuditEvents) (line string, disagreements []string) {
	writes := audited.ByUser(p.user).Writes().Filter(func(e testenv.AuditEvent) bool {
		return e.Resource != "events" && e.Resource != "leases" && e.APIGroup != authorizationv1.GroupName
	})
	sure, maybe, all := 0, 0, 0
	forwarded := map[string]int{}
	for _, c := range p.calls.Calls() {
		if !c.IsWrite() {
			continue
		}
		all++
		if !c.Forwarded {
			continue
		}
		forwarded[strings.TrimSuffix(string(c.Verb)+" "+c.GVK.Kind+"/"+c.Subresource, "/")]++
		var status apierrors.APIStatus
		if c.Err != nil && !errors.As(c.Err, &status) {
			maybe++
		} else {
			sure++
		}
	}
	line = fmt.Sprintf("The API server's audit log recorded %s by the in-process operator's user (Events and Leases apart)", plural(len(writes), "write"))
	if n := len(writes); n < sure || n > sure+maybe {
		return line, []string{fmt.Sprintf("its fault-injecting client forwarded %d writes (and %d that failed on the way), the audit log has %d (the client's by verb and kind %v, the audit log's by verb and resource %v)",
			sure, maybe, n, forwarded, writes.Count(func(e testenv.AuditEvent) string { return e.Verb + " " + kindOf(e) }))}
	}
	return line + fmt.Sprintf(", as its fault-injecting client forwarded them (%d of its %d writes; the others it answered with a fault)",
		sure+maybe, all), nil
}

// writesUntil returns the proxy's writes answered before t.
func writesUntil(ws []write, t time.Time) []write {
	var out []write
	for _, w := range ws {
		if !w.End.After(t) {
			out = append(out, w)
		}
	}
	return out
}
