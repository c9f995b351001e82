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
	"io"
	"net/http"
	"path"
	"strings"
)

// WrapTransport returns rt fenced: a request that may write is sent only when [Lock.Check]
// allows it, and fails with the [*RefusedError] otherwise, without reaching rt. It has the
// signature of rest.Config.WrapTransport and transport.WrapperFunc: fence a config with
// cfg.Wrap(lock.WrapTransport) before building the manager from it, and every client built from
// the config is fenced — the manager's client and cache, server-side apply, the Event
// broadcaster, clientsets built from mgr.GetConfig().
//
// The fence lets through, whatever its state:
//
//   - reads: GET, HEAD and OPTIONS requests, watches included, unless they upgrade the
//     connection or go to a subresource that acts (see below);
//   - the requests for the lock's own Lease (when the lock describes itself as
//     "namespace/name", as the Lease lock does), including creates in its namespace, so that
//     the lock may share the fenced config;
//   - creates of authentication.k8s.io and authorization.k8s.io reviews (TokenReview,
//     SubjectAccessReview and their kin), which store nothing; the metrics server's
//     authentication and authorization use them on every replica.
//
// Every other request — POST, PUT, PATCH, DELETE, and methods it does not know — is a write.
// So is, whatever its method, a request that
//
//   - asks to upgrade the connection: an Upgrade header, Connection: upgrade, or the header
//     that negotiates a stream's subprotocol (Sec-WebSocket-Protocol, Sec-WebSocket-Key,
//     X-Stream-Protocol-Version), which is what the fence sees of client-go's WebSocket and
//     SPDY round trippers: they add the Upgrade header beneath it. Such a stream (exec, attach
//     and port-forward send a GET upgraded to a WebSocket) carries whatever the client sends
//     next, and the fence cannot check it;
//   - goes to a subresource that acts: exec, attach, portforward and proxy (of pods, services
//     and nodes; a GET through a proxy reaches a program that may act on it), eviction and
//     binding. The subresource is read from the path as the API server does:
//     /api/<version>/... or /apis/<group>/<version>/..., then [namespaces/<namespace>/]
//     <resource>/<name>/<subresource>.
//
// An upgraded connection is checked once, when it is opened: a WebSocket or SPDY session (an
// exec's stdin, a port-forward's stream) that is open when the fence closes is not cut, so
// end such sessions before a lease duration passes, or run them under a context that ends
// when the manager loses its lease.
// The check is the last thing before rt, and it runs again each time rt reads the request's
// body. So a write whose process paused after the first check (waiting for its connection, or
// with its headers written) fails with the [*RefusedError] when it resumes with the fence
// closed: over HTTP/2, which client-go speaks to an API server over TLS, the transport reads
// the body to its end before it sends the end of the request, and on the refusal resets the
// request's stream instead, so the API server never has the whole request and does not act on
// it. What it cannot cover is said in the package documentation, under "What the fence cannot
// do".
func (l *Lock) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &transport{lock: l, next: rt}
}

// transport is the fenced http.RoundTripper of [Lock.WrapTransport].
type transport struct {
	lock *Lock
	next http.RoundTripper
}

var _ http.RoundTripper = (*transport)(nil)

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.exempt(req) {
		if err := t.lock.Check(); err != nil {
			// A RoundTripper must close the body, also when it fails.
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			req = t.fenceBody(req)
		}
	}
	return t.next.RoundTrip(req)
}

// fenceBody returns a copy of req whose body checks the fence before each read, as does the
// body GetBody returns for a retry. A RoundTripper must not change the request it is given.
func (t *transport) fenceBody(req *http.Request) *http.Request {
	fenced := new(http.Request)
	*fenced = *req
	fenced.Body = &fencedBody{ReadCloser: req.Body, lock: t.lock}
	if getBody := req.GetBody; getBody != nil {
		fenced.GetBody = func() (io.ReadCloser, error) {
			b, err := getBody()
			if err != nil || b == nil || b == http.NoBody {
				return b, err
			}
			return &fencedBody{ReadCloser: b, lock: t.lock}, nil
		}
	}
	return fenced
}

// fencedBody is a request body that refuses to be read once the fence is closed: the
// transport then abandons the request (HTTP/2 resets its stream) before the body is complete.
type fencedBody struct {
	io.ReadCloser
	lock *Lock
}

func (b *fencedBody) Read(p []byte) (int, error) {
	if err := b.lock.Check(); err != nil {
		return 0, err
	}
	return b.ReadCloser.Read(p)
}

// WrappedRoundTripper returns the transport the fence wraps, as client-go's
// net.RoundTripperWrapper asks, so that client-go finds the transports underneath (to cancel
// requests or close idle connections).
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.next }

// exempt reports whether req passes the fence whatever its state: see [Lock.WrapTransport].
func (t *transport) exempt(req *http.Request) bool {
	if upgrades(req) || actsThrough(req.URL.Path) {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	urlPath := req.URL.Path
	leases := t.lock.suffix
	if leases.object != "" && (strings.HasSuffix(urlPath, leases.object) ||
		(req.Method == http.MethodPost && strings.HasSuffix(urlPath, leases.collection))) {
		return true
	}
	return req.Method == http.MethodPost &&
		(strings.Contains(urlPath, "/apis/authentication.k8s.io/") || strings.Contains(urlPath, "/apis/authorization.k8s.io/"))
}

// actingSubresources are the subresources whose requests act, whatever their method: they run
// a command, open a stream to a pod, reach a program behind the API server, or remove or place
// a pod.
var actingSubresources = map[string]bool{
	"exec": true, "attach": true, "portforward": true, "proxy": true, "eviction": true, "binding": true,
}

// upgrades reports whether req asks to switch the connection to another protocol: WebSocket,
// SPDY, or anything else an Upgrade header names. client-go's streaming round trippers add the
// Upgrade header themselves, underneath the fence; what the fence sees of them is the header
// that negotiates the stream's subprotocol: Sec-WebSocket-Protocol for a WebSocket (exec,
// attach, port-forward, the port-forward tunnel), X-Stream-Protocol-Version for SPDY.
func upgrades(req *http.Request) bool {
	for _, h := range []string{"Upgrade", "Sec-Websocket-Protocol", "Sec-Websocket-Key", "X-Stream-Protocol-Version"} {
		if len(req.Header.Values(h)) > 0 {
			return true
		}
	}
	for _, v := range req.Header.Values("Connection") {
		for token := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "upgrade") {
				return true
			}
		}
	}
	return false
}

// actsThrough reports whether path names a subresource that acts (see actingSubresources).
// The path is cleaned first ("//", "." and ".." segments, as the API server's mux cleans them).
// A prefix of the config's host (a proxy's path, such as /k8s/clusters/c-1) comes before the
// API's own "api" or "apis" segment; since the prefix may hold such a segment too, every "api"
// and "apis" segment is tried as the start of the API path, and any reading that names an acting
// subresource makes the request a write.
func actsThrough(p string) bool {
	parts := strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/")
	for i, part := range parts {
		if (part == "api" || part == "apis") && actingSubresources[subresource(parts[i:])] {
			return true
		}
	}
	return false
}

// subresource returns the subresource that parts, a Kubernetes API path split at its slashes
// from its "api" or "apis" segment on, names, or "": the segment after <resource>/<name> in
// api/<version>/[namespaces/<namespace>/]<resource>/<name>/<subresource> or
// apis/<group>/<version>/..., as the API server's RequestInfoFactory reads it.
// "api/v1/proxy/...", the old form of the proxy verb, is "proxy" too.
func subresource(parts []string) string {
	core := parts[0] == "api"
	if core {
		parts = parts[min(2, len(parts)):]
	} else {
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) > 0 && core && parts[0] == "proxy" {
		return "proxy"
	}
	if len(parts) > 0 && parts[0] == "watch" {
		parts = parts[1:]
	}
	// namespaces/<namespace>/<resource>/...; namespaces/<name>/status and /finalize are the
	// namespace's own subresources.
	if len(parts) > 2 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}
