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
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// write is one write request that went through a proxy.
type write struct {
	Replica    string
	Start, End time.Time
	Method     string
	Path       string
	Status     int
}

// lease reports whether the write is to a leader election lease (a create, or an update).
func (w write) lease() bool {
	return strings.Contains(w.Path, "/coordination.k8s.io/v1/namespaces/") && strings.Contains(w.Path, "/leases")
}

// ok reports whether the API server accepted the write.
func (w write) ok() bool { return w.Status >= 200 && w.Status < 300 }

// writes records the write requests of every proxy of a scenario, and counts every request.
type writes struct {
	mu  sync.Mutex
	all []write
	// requests counts every request by method and resource ("PATCH clusters/status").
	requests map[string]int
	// bytes counts the bytes of every request and response body.
	bytes traffic
	// watches is the most watches of each resource that were open at once: one per informer
	// (a watch the API server ends is opened again, after it); open counts those open now.
	watches, open map[string]int
	// sentBy counts the bytes of request bodies by method and resource ("PATCH clusters/status").
	sentBy map[string]int64
}

func (ws *writes) count(method, path string, watch bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.requests == nil {
		ws.requests, ws.watches, ws.open = map[string]int{}, map[string]int{}, map[string]int{}
	}
	ws.requests[method+" "+resourceOf(path)]++
	if watch {
		res := resourceOf(path)
		ws.open[res]++
		ws.watches[res] = max(ws.watches[res], ws.open[res])
	}
}

// watchEnded records that a watch of the resource at path ended.
func (ws *writes) watchEnded(path string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.open[resourceOf(path)]--
}

// sent adds n bytes of a request body to the count of method and path.
func (ws *writes) sent(method, path string, n int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.sentBy == nil {
		ws.sentBy = map[string]int64{}
	}
	ws.sentBy[method+" "+resourceOf(path)] += n
}

// sentCounts returns a copy of the bytes sent by method and resource.
func (ws *writes) sentCounts() map[string]int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return maps.Clone(ws.sentBy)
}

// watchCounts returns a copy of the most watches open at once, by resource.
func (ws *writes) watchCounts() map[string]int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return maps.Clone(ws.watches)
}

// counts returns a copy of the request counts.
func (ws *writes) counts() map[string]int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return maps.Clone(ws.requests)
}

// resourceOf returns the resource, and subresource, a request path names:
// /apis/apps.tenon.dev/v1alpha1/namespaces/ns/clusters/c/status is "clusters/status".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			return "namespaces"
		}
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "discovery"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

func (ws *writes) add(w write) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.all = append(ws.all, w)
}

func (ws *writes) list() []write {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]write(nil), ws.all...)
}

// proxy stands between one operator replica and the API server: it authenticates as the
// operator's user, so that the replica runs with exactly the generated RBAC, and records every
// write the replica sends, with when it was sent and answered.
type proxy struct {
	replica    string
	kubeconfig string
	server     *httptest.Server
}

// newProxy starts a proxy for replica that acts as the user of cfg and records into record and
// into the world's record of every proxy's writes (w.proxied), which TestChaos checks against the
// API server's audit log.
func (w *world) newProxy(t *testing.T, replica string, cfg *rest.Config, record *writes) *proxy {
	t.Helper()
	return newProxy(t, replica, cfg, record, &w.proxied)
}

// newProxy starts a proxy for replica that acts as the user of cfg and records into records.
func newProxy(t *testing.T, replica string, cfg *rest.Config, records ...*writes) *proxy {
	t.Helper()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatalf("failed to create the proxy's transport: %v", err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatalf("failed to parse the API server's address: %v", err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     transport,
		FlushInterval: -1,                         // watches stream
		ErrorLog:      log.New(io.Discard, "", 0), // a restarting API server breaks streams; the operator retries
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			// The API server is down or restarting: answer as a load balancer would.
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	p := &proxy{replica: replica}
	// TLS and HTTP/2, as the operator talks to a real API server: one connection carries every
	// request and watch, and client-go's health check pings it.
	p.server = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		watch := r.URL.Query().Get("watch") == "true"
		for _, record := range records {
			record.count(r.Method, r.URL.Path, watch)
			if watch {
				defer record.watchEnded(r.URL.Path)
			}
		}
		rw, r, counted := countBytes(rw, r, watch, records)
		defer counted()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			rp.ServeHTTP(rw, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: rw}
		// Recorded also when the reverse proxy aborts the response (it panics with
		// http.ErrAbortHandler when the operator went away while the answer was copied): the API
		// server answered it all the same.
		defer func() {
			wr := write{Replica: replica, Start: start, End: time.Now(), Method: r.Method, Path: r.URL.Path, Status: sw.status}
			if wr.Status == 0 {
				wr.Status = http.StatusBadGateway // no answer reached the proxy: it may or may not have been applied
			}
			for _, record := range records {
				record.add(wr)
			}
		}()
		rp.ServeHTTP(sw, r)
	}))
	p.server.EnableHTTP2 = true
	p.server.StartTLS()
	t.Cleanup(p.server.Close)
	p.kubeconfig = p.kubeconfigVia(t, strings.TrimPrefix(p.server.URL, "https://"))
	return p
}

// countBytes returns rw and r, counting the bytes of the request's body and of the response
// into each record's traffic, and a func to call once the request is served, which adds the
// request body's bytes to each record's count by method and resource.
//
// The body of a JSON patch is also kept, to count its guards into each record's traffic (see
// guardBytes).
func countBytes(rw http.ResponseWriter, r *http.Request, watch bool, records []*writes) (http.ResponseWriter, *http.Request, func()) {
	var body []*countingReader
	var patch *bytes.Buffer
	if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Content-Type") == string(types.JSONPatchType) {
		patch = &bytes.Buffer{}
		r.Body = teeReadCloser{Reader: io.TeeReader(r.Body, patch), Closer: r.Body}
	}
	for _, record := range records {
		received := &record.bytes.received
		if watch {
			received = &record.bytes.watched
		}
		rw = countingWriter{ResponseWriter: rw, n: received}
		if r.Body != nil && r.Body != http.NoBody {
			cr := &countingReader{ReadCloser: r.Body, n: &record.bytes.sent}
			r.Body, body = cr, append(body, cr)
		}
	}
	method, path := r.Method, r.URL.Path
	return rw, r, func() {
		var guards int64
		if patch != nil {
			guards = guardBytes(patch.Bytes())
		}
		for i, cr := range body { // one reader per record, or none
			records[i].sent(method, path, cr.read.Load())
			records[i].bytes.guards.Add(guards)
		}
	}
}

// teeReadCloser is a request body read through an io.TeeReader, closed as the body it reads.
type teeReadCloser struct {
	io.Reader
	io.Closer
}

// guardBytes returns how many bytes of body, a JSON patch, are guards: test operations, but for
// the test of the uid, which every write to an object of a name needs to know it is the same
// object. What is left is the smallest body that makes the same change (the client writes the
// operations without spaces, so the count is exact); 0 when body is not a JSON patch.
func guardBytes(body []byte) int64 {
	var ops []json.RawMessage
	if json.Unmarshal(body, &ops) != nil {
		return 0
	}
	minimum := int64(len("[]"))
	kept := 0
	for _, raw := range ops {
		var op struct{ Op, Path string }
		if json.Unmarshal(raw, &op) == nil && op.Op == "test" && op.Path != "/metadata/uid" {
			continue
		}
		if kept > 0 {
			minimum += int64(len(","))
		}
		kept++
		minimum += int64(len(raw))
	}
	return int64(len(bytes.TrimSpace(body))) - minimum
}

// kubeconfigVia writes a kubeconfig for the replica that connects to the proxy at addr
// (host:port: the proxy's own address, or a relay in front of it) and trusts its certificate.
func (p *proxy) kubeconfigVia(t *testing.T, addr string) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.server.Certificate().Raw})
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: "https://" + addr, CertificateAuthorityData: ca}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["operator"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "operator"}
	kc.CurrentContext = "operator"
	path := filepath.Join(t.TempDir(), p.replica+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatalf("failed to write the kubeconfig: %v", err)
	}
	return path
}
