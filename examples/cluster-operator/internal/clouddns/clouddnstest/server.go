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

package clouddnstest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
)

// Faults configures the failures the server injects. The zero value injects none.
type Faults struct {
	// Latency is added to every request.
	Latency time.Duration
	// ErrorRate is the share of requests, from 0 to 1, answered with 503 Service Unavailable.
	ErrorRate float64
	// Down answers every request with 503 Service Unavailable, as an unreachable provider would.
	Down bool
}

// Options configures a [Server]. The zero value works, with a fixed token "token".
type Options struct {
	// Token is the bearer token requests must carry. Defaults to "token".
	Token string
	// PropagationDelay is how long a change stays PENDING (or DELETING) before it takes effect.
	// Defaults to 0: changes take effect at the next request.
	PropagationDelay time.Duration
	// Clock is the source of time for propagation. Defaults to the real clock.
	Clock clock.PassiveClock
	// Seed seeds the random number generator behind Faults.ErrorRate.
	Seed uint64
}

// Server is the simulated DNS API. It is an http.Handler; serve it with net/http or httptest.
// All methods are safe for concurrent use.
type Server struct {
	opts Options

	mu       sync.Mutex
	records  map[string]*entry
	faults   Faults
	rand     *rand.Rand
	requests map[string]int
	writes   map[string]*Writes
	revision int64
}

// Writes counts the well-formed writes (PUT and DELETE) to one record name that passed the
// injected faults and the token check.
type Writes struct {
	// Requests is how many there were.
	Requests int
	// Changes is how many of them changed something: created the record, changed its value or
	// began its deletion. A write that found the record as it asked (a create refused with 409,
	// the same value put again, a record already being deleted) changes nothing.
	Changes int
}

// entry is a stored record and when its current status settles.
type entry struct {
	clouddns.Record
	settlesAt time.Time
}

var _ http.Handler = (*Server)(nil)

// NewServer returns a Server with no records.
func NewServer(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = "token"
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Server{
		opts:     opts,
		records:  map[string]*entry{},
		rand:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		requests: map[string]int{},
		writes:   map[string]*Writes{},
	}
}

// SetFaults replaces the failures the server injects.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Records returns every record the server holds, including those being deleted, sorted by name.
// Tests use it to find leaked records.
func (s *Server) Records() []clouddns.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	out := make([]clouddns.Record, 0, len(s.records))
	for _, e := range s.records {
		out = append(out, e.Record)
	}
	slices.SortFunc(out, func(a, b clouddns.Record) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Requests returns how many requests the server received, by method.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// Writes returns the writes each record name received, by name. Tests use it to check that a
// record was created and deleted once, whichever replica or shard asked.
func (s *Server) Writes() map[string]Writes {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Writes, len(s.writes))
	for name, w := range s.writes {
		out[name] = *w
	}
	return out
}

// ServeHTTP serves the API:
//
//	GET    /v1/records         list records
//	GET    /v1/records/{name}  read a record
//	PUT    /v1/records/{name}  create a record, or change its value
//	DELETE /v1/records/{name}  delete a record
//
// PUT with the header "If-None-Match: *" creates only: it fails with 409 when the record exists.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.refused(w, r) {
		return
	}
	name, hasName := strings.CutPrefix(r.URL.Path, "/v1/records/")
	hasName = hasName && name != ""
	switch {
	case r.URL.Path == "/v1/records" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Records())
	case hasName && r.Method == http.MethodGet:
		s.get(w, name)
	case hasName && r.Method == http.MethodPut:
		s.put(w, r, name)
	case hasName && r.Method == http.MethodDelete:
		s.delete(w, name)
	default:
		writeJSON(w, http.StatusNotFound, clouddns.ErrorBody{Error: "no such endpoint"})
	}
}

// refused counts request r and answers it, reporting true, when the faults set make it fail or
// its token is not the server's; it waits the faults' latency first.
func (s *Server) refused(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.requests[r.Method]++
	faults := s.faults
	fail := faults.Down || (faults.ErrorRate > 0 && s.rand.Float64() < faults.ErrorRate)
	s.mu.Unlock()

	if faults.Latency > 0 {
		if err := wait(r.Context(), faults.Latency); err != nil {
			return true
		}
	}
	if fail {
		writeJSON(w, http.StatusServiceUnavailable, clouddns.ErrorBody{Error: "service unavailable"})
		return true
	}
	if r.Header.Get("Authorization") != "Bearer "+s.opts.Token {
		writeJSON(w, http.StatusUnauthorized, clouddns.ErrorBody{Error: "invalid or missing token"})
		return true
	}
	return false
}

func (s *Server) get(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	e, ok := s.records[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, clouddns.ErrorBody{Error: fmt.Sprintf("record %s not found", name)})
		return
	}
	writeJSON(w, http.StatusOK, e.Record)
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, name string) {
	var in clouddns.Record
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, clouddns.ErrorBody{Error: "invalid JSON: " + err.Error()})
		return
	}
	if in.Type == "" || in.Value == "" {
		writeJSON(w, http.StatusBadRequest, clouddns.ErrorBody{Error: "type and value are required"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	written := s.wrote(name)
	e, exists := s.records[name]
	switch {
	case exists && r.Header.Get("If-None-Match") == "*":
		writeJSON(w, http.StatusConflict, clouddns.ErrorBody{Error: fmt.Sprintf("record %s already exists", name)})
		return
	case exists && e.Status == clouddns.StatusDeleting:
		writeJSON(w, http.StatusConflict, clouddns.ErrorBody{Error: fmt.Sprintf("record %s is being deleted", name)})
		return
	case exists && e.Type == in.Type && e.Value == in.Value && e.TTL == in.TTL && e.Owner == in.Owner:
		writeJSON(w, http.StatusOK, e.Record) // nothing to change
		return
	}
	s.revision++
	written.Changes++
	rec := clouddns.Record{Name: name, Type: in.Type, Value: in.Value, TTL: in.TTL, Owner: in.Owner, Status: clouddns.StatusPending, Revision: s.revision}
	s.records[name] = &entry{Record: rec, settlesAt: s.opts.Clock.Now().Add(s.opts.PropagationDelay)}
	status := http.StatusOK
	if !exists {
		status = http.StatusCreated
	}
	writeJSON(w, status, rec)
}

func (s *Server) delete(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	written := s.wrote(name)
	e, ok := s.records[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, clouddns.ErrorBody{Error: fmt.Sprintf("record %s not found", name)})
		return
	}
	if e.Status != clouddns.StatusDeleting {
		written.Changes++
		s.revision++
		e.Status, e.Revision = clouddns.StatusDeleting, s.revision
		e.settlesAt = s.opts.Clock.Now().Add(s.opts.PropagationDelay)
	}
	writeJSON(w, http.StatusAccepted, e.Record)
}

// wrote counts a write to the record name and returns its counts, to which the caller adds the
// change it makes. s.mu must be held.
func (s *Server) wrote(name string) *Writes {
	w, ok := s.writes[name]
	if !ok {
		w = &Writes{}
		s.writes[name] = w
	}
	w.Requests++
	return w
}

// settle applies the changes whose propagation delay has passed. s.mu must be held.
func (s *Server) settle() {
	now := s.opts.Clock.Now()
	for name, e := range s.records {
		if now.Before(e.settlesAt) {
			continue
		}
		switch e.Status {
		case clouddns.StatusPending:
			e.Status = clouddns.StatusInSync
		case clouddns.StatusDeleting:
			delete(s.records, name)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// wait waits for d or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
