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
// The check is the last thing before rt: what it cannot cover is said in the package
// documentation, under "What the fence cannot do".
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
	}
	return t.next.RoundTrip(req)
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
