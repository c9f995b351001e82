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

package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// maxReviewBytes bounds the body of a review the router reads to route it; the API server sends
// at most a few megabytes (an object, or a list of them for a conversion).
const maxReviewBytes = 64 << 20

// webhookRouter is the environment's webhook server: every webhook configuration and every
// conversion webhook the environment installs points at it. It serves no webhook of its own; it
// hands each request to a running manager that has a handler for the path and whose cache holds
// the request's objects (see pick).
type webhookRouter struct {
	server *http.Server

	mu      sync.Mutex
	servers []*managerWebhookServer // started, in the order they started
}

// startWebhookRouter serves on host:port with the certificate and key in certDir, as envtest's
// WebhookInstallOptions prepared them.
func startWebhookRouter(host string, port int, certDir string) (*webhookRouter, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("failed to load the webhook serving certificate: %w", err)
	}
	listener, err := tls.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)), &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to listen for webhook requests on %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	r := &webhookRouter{}
	r.server = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.server.Serve(listener) }()
	return r, nil
}

// stop stops serving, waiting for the requests in flight.
func (r *webhookRouter) stop(ctx context.Context) error {
	if err := r.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("failed to stop the webhook server: %w", err)
	}
	return nil
}

func (r *webhookRouter) add(s *managerWebhookServer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append(r.servers, s)
}

func (r *webhookRouter) remove(s *managerWebhookServer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = slices.DeleteFunc(r.servers, func(x *managerWebhookServer) bool { return x == s })
}

// ServeHTTP hands req to the manager that serves it, or answers 503.
func (r *webhookRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxReviewBytes))
	if err != nil {
		http.Error(w, "testenv: failed to read the webhook request: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	namespaces := reviewNamespaces(body)
	s := r.pick(req, namespaces)
	if s == nil {
		// As a Status, so that the API server's error carries the message.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
			Status:   metav1.StatusFailure,
			Reason:   metav1.StatusReasonServiceUnavailable,
			Code:     http.StatusServiceUnavailable,
			Message: fmt.Sprintf("testenv: no running manager serves the webhook path %s for namespaces %q: register "+
				"the webhook (ctrl.NewWebhookManagedBy) with a manager from Environment.NewManager whose namespaces hold "+
				"the object, and start it (StartManager) before the request", req.URL.Path, namespaces),
		})
		return
	}
	s.mux.ServeHTTP(w, req)
}

// pick returns the started server that should answer req, whose objects are in namespaces (none
// for cluster-scoped objects), or nil when none may: a request about namespaced objects goes to
// a server whose manager's cache holds their namespaces, one scoped to them before one that holds
// every namespace; a request about cluster-scoped objects to any, one that holds every namespace
// first. The latest started wins a tie.
func (r *webhookRouter) pick(req *http.Request, namespaces []string) *managerWebhookServer {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all, other *managerWebhookServer
	for _, s := range slices.Backward(r.servers) {
		if _, pattern := s.mux.Handler(req); pattern == "" {
			continue
		}
		switch {
		case s.namespaces == nil:
			if all == nil {
				all = s
			}
		case len(namespaces) == 0:
			if other == nil {
				other = s
			}
		case containsAll(s.namespaces, namespaces):
			return s
		}
	}
	if all != nil {
		return all
	}
	return other
}

func containsAll(set, items []string) bool {
	for _, i := range items {
		if !slices.Contains(set, i) {
			return false
		}
	}
	return true
}

// reviewNamespaces returns the namespaces of the objects an AdmissionReview or a
// ConversionReview is about: none for cluster-scoped objects, or a body that is neither.
func reviewNamespaces(body []byte) []string {
	var review struct {
		Request struct {
			Namespace string // AdmissionReview
			Objects   []struct {
				Metadata struct{ Namespace string }
			} // ConversionReview
		}
	}
	if json.Unmarshal(body, &review) != nil {
		return nil
	}
	var out []string
	if ns := review.Request.Namespace; ns != "" {
		out = append(out, ns)
	}
	for _, o := range review.Request.Objects {
		if ns := o.Metadata.Namespace; ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// managerWebhookServer is the webhook.Server of a manager from [Environment.NewManager]: it
// serves the manager's webhooks through the environment's webhook server while the manager
// runs, for requests about objects in the manager's namespaces (nil: all).
type managerWebhookServer struct {
	router     *webhookRouter
	namespaces []string
	mux        *http.ServeMux

	mu      sync.Mutex
	paths   map[string]bool
	err     error // a path registered twice
	started bool
}

var _ webhook.Server = (*managerWebhookServer)(nil)

func newManagerWebhookServer(router *webhookRouter, namespaces []string) *managerWebhookServer {
	return &managerWebhookServer{router: router, namespaces: namespaces, mux: http.NewServeMux(), paths: map[string]bool{}}
}

// NeedLeaderElection reports false: every replica serves its webhooks.
func (*managerWebhookServer) NeedLeaderElection() bool { return false }

// Register serves hook at path. A path registered twice keeps its first hook, and makes Start
// return an error (controller-runtime's server panics).
func (s *managerWebhookServer) Register(path string, hook http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths[path] {
		s.err = errors.Join(s.err, fmt.Errorf("testenv: the webhook path %s is registered twice", path))
		return
	}
	s.paths[path] = true
	s.mux.Handle(path, hook)
}

// Start serves the registered webhooks through the environment's webhook server until ctx
// ends.
func (s *managerWebhookServer) Start(ctx context.Context) error {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.router.add(s)
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	<-ctx.Done()
	s.router.remove(s)
	return nil
}

// StartedChecker reports an error until Start has begun serving.
func (s *managerWebhookServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.started {
			return errors.New("webhook server has not been started yet")
		}
		return nil
	}
}

// WebhookMux returns the multiplexer of the manager's webhooks.
func (s *managerWebhookServer) WebhookMux() *http.ServeMux { return s.mux }
