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
//   - reads: GET, HEAD and OPTIONS requests, watches included;
//   - the requests for the lock's own Lease (when the lock describes itself as
//     "namespace/name", as the Lease lock does), including creates in its namespace, so that
//     the lock may share the fenced config;
//   - creates of authentication.k8s.io and authorization.k8s.io reviews (TokenReview,
//     SubjectAccessReview and their kin), which store nothing; the metrics server's
//     authentication and authorization use them on every replica.
//
// Every other request — POST, PUT, PATCH, DELETE, and methods it does not know — is a write.
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
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	path := req.URL.Path
	leases := t.lock.suffix
	if leases.object != "" && (strings.HasSuffix(path, leases.object) ||
		(req.Method == http.MethodPost && strings.HasSuffix(path, leases.collection))) {
		return true
	}
	return req.Method == http.MethodPost &&
		(strings.Contains(path, "/apis/authentication.k8s.io/") || strings.Contains(path, "/apis/authorization.k8s.io/"))
}
