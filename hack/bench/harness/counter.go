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
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
)

// RequestKey identifies a kind of request: its verb, resource and subresource.
type RequestKey struct {
	// Verb is get, list, watch, create, update, patch, apply, delete, deletecollection or other.
	Verb string
	// PatchType is merge, json or strategic for a patch, empty otherwise.
	PatchType string
	// Resource is the plural resource name, such as widgets, or "non-resource" for discovery.
	Resource string
	// Subresource is status, or empty.
	Subresource string
}

// IsWrite reports whether the request changes state on the server.
func (k RequestKey) IsWrite() bool {
	switch k.Verb {
	case "create", "update", "patch", "apply", "delete", "deletecollection":
		return true
	}
	return false
}

// MarshalText implements encoding.TextMarshaler, so counts can be written as JSON objects.
func (k RequestKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: it parses what MarshalText wrote, so
// saved measurements can be read back.
func (k *RequestKey) UnmarshalText(text []byte) error {
	verb, resource, ok := strings.Cut(string(text), " ")
	if !ok || verb == "" || resource == "" {
		return fmt.Errorf("failed to parse request kind %q: want \"verb resource[/subresource]\"", text)
	}
	*k = RequestKey{}
	if v, pt, ok := strings.Cut(verb, "("); ok {
		verb, k.PatchType = v, strings.TrimSuffix(pt, ")")
	}
	k.Verb = verb
	k.Resource, k.Subresource, _ = strings.Cut(resource, "/")
	return nil
}

// String returns the key as "patch(json) widgets/status".
func (k RequestKey) String() string {
	v := k.Verb
	if k.PatchType != "" {
		v += "(" + k.PatchType + ")"
	}
	r := k.Resource
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return v + " " + r
}

// Tally is what was counted for one RequestKey.
type Tally struct {
	Requests      int   `json:"requests"`
	RequestBytes  int64 `json:"requestBytes"`
	ResponseBytes int64 `json:"responseBytes"`
	// Conflicts counts responses with status 409.
	Conflicts int `json:"conflicts"`
	// Failures counts other responses with a status of 400 or more, and transport errors.
	Failures int `json:"failures"`
	// TransportErrors counts the Failures that got no response at all: requests that may
	// never have reached the API server, so its audit log may not have them.
	TransportErrors int `json:"transportErrors,omitempty"`
}

// Counter counts the HTTP requests sent through the transports it wraps. It is safe for
// concurrent use.
type Counter struct {
	mu      sync.Mutex
	tallies map[RequestKey]*Tally
}

// NewCounter returns a Counter with nothing counted.
func NewCounter() *Counter {
	return &Counter{tallies: map[RequestKey]*Tally{}}
}

// Wrap returns rt with every request counted; it has the signature of rest.Config.WrapTransport.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: rt, counter: c}
}

// Snapshot returns a copy of the counts so far.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(Counts, len(c.tallies))
	for k, t := range c.tallies {
		out[k] = *t
	}
	return out
}

func (c *Counter) add(k RequestKey, f func(*Tally)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tallies[k]
	if !ok {
		t = &Tally{}
		c.tallies[k] = t
	}
	f(t)
}

type countingTransport struct {
	next    http.RoundTripper
	counter *Counter
}

// RoundTrip implements http.RoundTripper.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := classify(req)
	var reqBytes int64
	if req.Body != nil && req.ContentLength > 0 {
		reqBytes = req.ContentLength
	} else if req.Body != nil && req.Body != http.NoBody {
		// Unknown length: count the bytes as the transport reads them.
		cb := &countingBody{ReadCloser: req.Body}
		req = req.Clone(req.Context())
		req.Body = cb
		defer func() { t.counter.add(key, func(tl *Tally) { tl.RequestBytes += cb.n }) }()
	}
	resp, err := t.next.RoundTrip(req)
	t.counter.add(key, func(tl *Tally) {
		tl.Requests++
		tl.RequestBytes += reqBytes
		switch {
		case err != nil:
			tl.Failures++
			tl.TransportErrors++
		case resp.StatusCode == http.StatusConflict:
			tl.Conflicts++
		case resp.StatusCode >= 400:
			tl.Failures++
		}
	})
	if err == nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, onRead: func(n int) {
			t.counter.add(key, func(tl *Tally) { tl.ResponseBytes += int64(n) })
		}}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n      int64
	onRead func(int)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if b.onRead != nil && n > 0 {
		b.onRead(n)
	}
	return n, err
}

// classify derives the verb, resource and subresource from a Kubernetes API request, the way
// the API server's request-info resolver does for the paths controllers use.
func classify(req *http.Request) RequestKey {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	}
	if len(rest) == 0 {
		return RequestKey{Verb: strings.ToLower(req.Method), Resource: "non-resource"}
	}
	if rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	key := RequestKey{Resource: rest[0]}
	named := len(rest) > 1
	if len(rest) > 2 {
		key.Subresource = rest[2]
	}
	key.Verb, key.PatchType = verbOf(req, named)
	return key
}

// verbOf returns the verb of req, a request on a named object or on a collection, and the type of
// a patch that is not an apply.
func verbOf(req *http.Request, named bool) (verb, patchType string) {
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "watch", ""
		case named:
			return "get", ""
		}
		return "list", ""
	case http.MethodPost:
		return "create", ""
	case http.MethodPut:
		return "update", ""
	case http.MethodPatch:
		ct := req.Header.Get("Content-Type")
		switch {
		case strings.Contains(ct, "apply-patch"):
			return "apply", ""
		case strings.Contains(ct, "json-patch"):
			return "patch", "json"
		case strings.Contains(ct, "strategic-merge-patch"): // before merge-patch, which it contains
			return "patch", "strategic"
		case strings.Contains(ct, "merge-patch"):
			return "patch", "merge"
		}
		return "patch", ""
	case http.MethodDelete:
		if !named {
			return "deletecollection", ""
		}
		return "delete", ""
	}
	return "other", ""
}

// Counts are the tallies by kind of request.
type Counts map[RequestKey]Tally

// Sub returns the counts in c that are not in before: what happened between two snapshots.
func (c Counts) Sub(before Counts) Counts {
	out := maps.Clone(c)
	for k, b := range before {
		t := out[k]
		t.Requests -= b.Requests
		t.RequestBytes -= b.RequestBytes
		t.ResponseBytes -= b.ResponseBytes
		t.Conflicts -= b.Conflicts
		t.Failures -= b.Failures
		t.TransportErrors -= b.TransportErrors
		if t == (Tally{}) {
			delete(out, k)
			continue
		}
		out[k] = t
	}
	return out
}

// Sum adds up the tallies of the keys for which keep reports true.
func (c Counts) Sum(keep func(RequestKey) bool) Tally {
	var sum Tally
	for k, t := range c {
		if !keep(k) {
			continue
		}
		sum.Requests += t.Requests
		sum.RequestBytes += t.RequestBytes
		sum.ResponseBytes += t.ResponseBytes
		sum.Conflicts += t.Conflicts
		sum.Failures += t.Failures
		sum.TransportErrors += t.TransportErrors
	}
	return sum
}

// Writes adds up the write requests.
func (c Counts) Writes() Tally { return c.Sum(RequestKey.IsWrite) }

// Reads adds up the get and list requests (not watches).
func (c Counts) Reads() Tally {
	return c.Sum(func(k RequestKey) bool { return k.Verb == "get" || k.Verb == "list" })
}

// All adds up every request.
func (c Counts) All() Tally { return c.Sum(func(RequestKey) bool { return true }) }
