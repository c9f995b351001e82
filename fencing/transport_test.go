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

package fencing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	clocktesting "k8s.io/utils/clock/testing"
)

// recorder is an http.RoundTripper that counts the requests that reach it.
type recorder struct{ sent int }

func (r *recorder) RoundTrip(*http.Request) (*http.Response, error) {
	r.sent++
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

// body is a request body that records whether it was closed.
type body struct {
	io.Reader
	closed bool
}

func (b *body) Close() error { b.closed = true; return nil }

func TestWrapTransportRefusesWritesAndLetsReadsAndTheLeaseThrough(t *testing.T) {
	tests := []struct {
		name, method, path string
		// sentClosed is whether the request reaches the wrapped transport with the fence
		// closed.
		sentClosed bool
	}{
		{"a get is a read", http.MethodGet, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a", true},
		{"a watch is a read", http.MethodGet, "/apis/apps.tenon.dev/v1alpha1/clusters", true},
		{"a head is a read", http.MethodHead, "/api/v1/namespaces/demo/pods/p", true},
		{"an options request is a read", http.MethodOptions, "/api", true},
		{"a create is a write", http.MethodPost, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters", false},
		{"an update is a write", http.MethodPut, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a/status", false},
		{"a patch is a write", http.MethodPatch, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a", false},
		{"a delete is a write", http.MethodDelete, "/api/v1/namespaces/demo/configmaps/c", false},
		{"an event is a write", http.MethodPost, "/api/v1/namespaces/demo/events", false},
		{"an unknown method is a write", "PROPFIND", "/api/v1/namespaces/demo/configmaps/c", false},
		{"the lock's lease update passes", http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator", true},
		{"the lock's lease create passes", http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/operators/leases", true},
		{"the lock's lease behind a path prefix passes", http.MethodPut, "/k8s/clusters/c-1/apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator", true},
		{"another lease in the namespace is a write", http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/operators/leases/xcluster-operator", false},
		{"the lease's name in another namespace is a write", http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/other/leases/cluster-operator", false},
		{"a token review passes", http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", true},
		{"a subject access review passes", http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", true},
		{"a websocket exec is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/exec?command=sh&stdin=true", false},
		{"an exec without an upgrade header is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/exec", false},
		{"a websocket attach is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/attach", false},
		{"a websocket port-forward is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/portforward?ports=5432", false},
		{"a SPDY exec is a write", http.MethodPost, "/api/v1/namespaces/demo/pods/db-0/exec", false},
		{"a get through a pod's proxy is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0:8080/proxy/promote", false},
		{"a get through a service's proxy is a write", http.MethodGet, "/api/v1/namespaces/demo/services/https:db:admin/proxy/", false},
		{"a head through a node's proxy is a write", http.MethodHead, "/api/v1/nodes/node-1/proxy/configz", false},
		{"a get through the old proxy path is a write", http.MethodGet, "/api/v1/proxy/namespaces/demo/pods/db-0/promote", false},
		{"a proxy behind a path prefix is a write", http.MethodGet, "/k8s/clusters/c-1/api/v1/namespaces/demo/pods/db-0/proxy/", false},
		{"a proxy behind a path prefix with an api segment is a write", http.MethodGet, "/rancher/api/clusters/c-1/api/v1/namespaces/demo/services/db:80/proxy/", false},
		{"an exec with doubled slashes is a write", http.MethodGet, "/api/v1//namespaces/demo/pods/db-0//exec", false},
		{"an exec behind dot segments is a write", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/x/../exec", false},
		{"a proxy put whose path ends like the lock's lease is a write", http.MethodPut, "/api/v1/namespaces/demo/pods/db-0/proxy/apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator", false},
		{"an eviction is a write", http.MethodPost, "/api/v1/namespaces/demo/pods/db-0/eviction", false},
		{"a binding is a write", http.MethodPost, "/api/v1/namespaces/demo/pods/db-0/binding", false},
		{"an aggregated API's proxy subresource is a write", http.MethodGet, "/apis/metrics.example.com/v1/namespaces/demo/widgets/w/proxy", false},
		{"a cluster-scoped aggregated API's proxy subresource is a write", http.MethodGet, "/apis/metrics.example.com/v1/widgets/w/proxy", false},
		{"a pod's log is a read", http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/log?follow=true", true},
		{"a configmap named proxy is a read", http.MethodGet, "/api/v1/namespaces/demo/configmaps/proxy", true},
		{"a namespace named exec is a read", http.MethodGet, "/api/v1/namespaces/exec", true},
		{"a namespace's status is a read", http.MethodGet, "/api/v1/namespaces/proxy/status", true},
		{"a watch of pods in a namespace named proxy is a read", http.MethodGet, "/api/v1/watch/namespaces/proxy/pods", true},
		{"any get that upgrades is a write", http.MethodGet, "/api/v1/namespaces/demo/configmaps/c", false},
		{"a connection upgrade without an upgrade header is a write", http.MethodGet, "/api/v1/namespaces/demo/configmaps/c", false},
		{"a websocket as client-go sends it is a write", http.MethodGet, "/apis/example.com/v1/namespaces/demo/widgets/w/shell", false},
		{"a SPDY get as client-go sends it is a write", http.MethodGet, "/apis/example.com/v1/namespaces/demo/widgets/w/shell", false},
		{"an HTTP/2 extended connect is a write", http.MethodConnect, "/api/v1/namespaces/demo/pods/db-0/exec", false},
		{"a lease update that upgrades is a write", http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator", false},
	}
	// The headers of the requests that have some, by name.
	websocket := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Protocol": {"v5.channel.k8s.io"}}
	headers := map[string]http.Header{
		"a websocket exec is a write":                               websocket,
		"a websocket attach is a write":                             websocket,
		"a websocket port-forward is a write":                       {"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Protocol": {"SPDY/3.1+portforward.k8s.io"}},
		"a SPDY exec is a write":                                    {"Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}, "X-Stream-Protocol-Version": {"v4.channel.k8s.io"}},
		"any get that upgrades is a write":                          {"Upgrade": {"h2c"}},
		"a connection upgrade without an upgrade header is a write": {"Connection": {"keep-alive, Upgrade"}},
		"a lease update that upgrades is a write":                   websocket,
		"a websocket as client-go sends it is a write":              {"Sec-Websocket-Protocol": {"v5.channel.k8s.io"}},
		"a SPDY get as client-go sends it is a write":               {"X-Stream-Protocol-Version": {"v4.channel.k8s.io"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			l, _, _ := newTestLock(t)
			next := &recorder{}
			client := &http.Client{Transport: l.WrapTransport(next)}
			do := func() error {
				b := &body{Reader: strings.NewReader("{}")}
				req, err := http.NewRequest(tt.method, "https://api.example.com"+tt.path, b)
				g.Expect(err).NotTo(HaveOccurred())
				for k, v := range headers[tt.name] {
					req.Header[k] = v
				}
				resp, err := client.Do(req)
				if err == nil {
					_ = resp.Body.Close()
				}
				g.Expect(b.closed || err == nil).To(BeTrue(), "a refused request's body must be closed")
				return err
			}

			err := do()
			if tt.sentClosed {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(next.sent).To(Equal(1))
			} else {
				var refused *RefusedError
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want a *RefusedError, got %v", err)
				var urlErr *url.Error
				g.Expect(errors.As(err, &urlErr)).To(BeTrue(), "the HTTP client wraps it in a *url.Error")
				g.Expect(next.sent).To(Equal(0), "a refused request must not reach the wrapped transport")
			}

			// Once this replica holds the lease, everything is sent.
			g.Expect(l.Create(context.Background(), renewal(me))).To(Succeed())
			g.Expect(do()).To(Succeed())
			g.Expect(next.sent).To(Equal(map[bool]int{true: 2, false: 1}[tt.sentClosed]))
		})
	}
}

func TestWrapTransportExposesTheWrappedTransport(t *testing.T) {
	g := NewWithT(t)
	l, _, _ := newTestLock(t)
	next := &recorder{}
	wrapped, ok := l.WrapTransport(next).(utilnet.RoundTripperWrapper)
	g.Expect(ok).To(BeTrue(), "client-go looks through RoundTripperWrapper")
	g.Expect(wrapped.WrappedRoundTripper()).To(BeIdenticalTo(next))
}

func TestLeasePathsNeedANamespaceAndAName(t *testing.T) {
	tests := []struct {
		name, describe string
		want           leasePaths
	}{
		{"a lease lock", "ns/name", leasePaths{collection: "/apis/coordination.k8s.io/v1/namespaces/ns/leases", object: "/apis/coordination.k8s.io/v1/namespaces/ns/leases/name"}},
		{"no slash", "name", leasePaths{}},
		{"no namespace", "/name", leasePaths{}},
		{"no name", "ns/", leasePaths{}},
		{"a multilock's description", "ns/a/ns/b", leasePaths{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(newLeasePaths(tt.describe)).To(Equal(tt.want))
		})
	}
}

// pausingBody is a request body whose first read stands for a pause of the process: it moves the
// clock on by pause before it returns its bytes, as if the replica stopped right after the fence
// let the request through.
type pausingBody struct {
	data  *strings.Reader
	clock *clocktesting.FakePassiveClock
	pause time.Duration
	reads int
}

func (b *pausingBody) Read(p []byte) (int, error) {
	b.reads++
	if b.reads == 1 {
		b.clock.SetTime(b.clock.Now().Add(b.pause))
	}
	return b.data.Read(p)
}

func (b *pausingBody) Close() error { return nil }

func TestAWriteThatResumesWithTheFenceClosedNeverReachesTheServerWhole(t *testing.T) {
	const patch = `{"metadata":{"labels":{"written":"true"}}}`
	for _, tt := range []struct {
		name string
		// http2 is what client-go speaks to the API server over TLS. (Over HTTP/1.1 a body the
		// transport reads whole at its first read is written whole: see the package
		// documentation.)
		http2 bool
		pause time.Duration
		// wantSent is whether the server reads the whole body.
		wantSent bool
	}{
		{name: "over HTTP/2, a pause past the window between the check and the body", http2: true, pause: 13 * time.Second},
		{name: "over HTTP/2, a pause within the window", http2: true, pause: 5 * time.Second, wantSent: true},
		{name: "over HTTP/1.1, a pause within the window", pause: 5 * time.Second, wantSent: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			l, _, clock := newTestLock(t)
			g.Expect(l.Create(context.Background(), renewal(me))).To(Succeed())

			var whole atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if b, err := io.ReadAll(r.Body); err == nil && string(b) == patch {
					whole.Add(1)
				}
			}))
			srv.EnableHTTP2 = tt.http2
			srv.StartTLS()
			transport := srv.Client().Transport.(*http.Transport).Clone()
			transport.ForceAttemptHTTP2 = tt.http2
			client := &http.Client{Transport: l.WrapTransport(transport)}

			body := &pausingBody{data: strings.NewReader(patch), clock: clock, pause: tt.pause}
			req, err := http.NewRequest(http.MethodPatch, srv.URL+"/api/v1/namespaces/demo/configmaps/c", body)
			g.Expect(err).NotTo(HaveOccurred())
			req.ContentLength = int64(len(patch))
			resp, err := client.Do(req)
			if err == nil {
				g.Expect(resp.ProtoMajor).To(Equal(map[bool]int{true: 2, false: 1}[tt.http2]))
				_ = resp.Body.Close()
			}
			srv.Close() // waits for the handler
			if tt.wantSent {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(whole.Load()).To(BeEquivalentTo(1))
				return
			}
			var refused *RefusedError
			g.Expect(errors.As(err, &refused)).To(BeTrue(), "want a *RefusedError, got %v", err)
			g.Expect(whole.Load()).To(BeZero(), "the server must not have the whole request")
		})
	}
}

func TestABodyForARetryChecksTheFenceToo(t *testing.T) {
	g := NewWithT(t)
	l, _, clock := newTestLock(t)
	g.Expect(l.Create(context.Background(), renewal(me))).To(Succeed())
	var retryErr error
	next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		clock.SetTime(clock.Now().Add(13 * time.Second))
		b, err := req.GetBody()
		g.Expect(err).NotTo(HaveOccurred())
		_, retryErr = io.ReadAll(b)
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	})
	req, err := http.NewRequest(http.MethodPost, "https://api.example.com/api/v1/namespaces/demo/events", strings.NewReader("{}"))
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := l.WrapTransport(next).RoundTrip(req)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	var refused *RefusedError
	g.Expect(errors.As(retryErr, &refused)).To(BeTrue(), "want a *RefusedError, got %v", retryErr)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
