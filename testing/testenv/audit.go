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
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// auditPolicy records every request once, when its response is complete, at the Metadata level:
// who sent it, what it was about and how the API server answered, without bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// auditMarkPrefix names the ConfigMaps that [AuditLog.Mark] asks for (they never exist), so that
// the reader can recognize and drop its own requests.
const auditMarkPrefix = "tenon-audit-mark-"

// auditMarkNamespace is where marks look for their ConfigMap; it always exists.
const auditMarkNamespace = "default"

// AuditLog is kube-apiserver's audit log, as [Options.AuditLog] turns it on: the API server's own
// record of every request it answered, by whom, for what and with which status code. It counts
// what a client-side counter cannot see (requests of client-go's event broadcaster, retries,
// other processes) and is the witness a test or benchmark can check its own counts against.
//
// A test takes a [AuditMark] before and after what it measures and reads the requests in
// between:
//
//	before, err := env.AuditLog().Mark(ctx)
//	// ... run the operator ...
//	after, err := env.AuditLog().Mark(ctx)
//	events, err := env.AuditLog().Between(before, after)
//	writes := events.ByUser("operator").Writes()
//
// A request is recorded when its response is complete, so one that was in flight when a mark was
// taken counts after the mark. The log survives [Environment.RestartAPIServer]; it is removed
// when the environment stops.
type AuditLog struct {
	path   string
	client client.Client
	// wait bounds Mark's wait for its own request to appear in the log.
	wait time.Duration

	// mu serializes Mark, so that marks are in the log in the order they were taken, and guards
	// last.
	mu sync.Mutex
	// last is the offset after the newest mark: the next mark is after it.
	last int64
}

// AuditMark is a position in the audit log: what was recorded before the mark is before it.
type AuditMark struct {
	offset int64
	time   time.Time
}

// Time returns when the API server recorded the mark's request.
func (m AuditMark) Time() time.Time { return m.time }

// AuditEvent is one request as kube-apiserver recorded it.
type AuditEvent struct {
	// User is the name of the user the request acted as: the impersonated user when the
	// request impersonated one, else the authenticated user, such as "system:admin" or the name
	// given to [Environment.NewUser].
	User string
	// UserAgent is the client's User-Agent header, which controller-runtime and client-go set
	// from rest.Config.UserAgent (by default the program's name and client-go's version).
	UserAgent string
	// Verb is the API verb: get, list, watch, create, update, patch, delete or deletecollection.
	// A server-side apply is a patch; a request outside the resource API (discovery, /healthz)
	// has the HTTP method's name in lower case.
	Verb string
	// APIGroup is the resource's API group, empty for the core group.
	APIGroup string
	// Resource is the plural resource name, such as "configmaps"; empty for a request outside the
	// resource API.
	Resource string
	// Subresource is the subresource, such as "status", or empty.
	Subresource string
	// Namespace and Name are the object's, when the request names them. A create's name is
	// its object's when the client sent one.
	Namespace, Name string
	// URI is the request's path and query.
	URI string
	// Code is the HTTP status code of the response, such as 200, 404 or 409.
	Code int
	// Message is the message of the response's status, for a request that failed: why, in the
	// API server's words. A request the client abandoned before the API server had all of it
	// (its HTTP/2 stream reset) is answered 500 with a message such as "stream error: stream ID
	// 15; CANCEL"; see [AuditEvent.Abandoned].
	Message string
	// Received is when the API server received the request; Completed when it sent the
	// last byte of the response.
	Received, Completed time.Time
}

// IsWrite reports whether the request asked to change state: a create, update, patch, delete or
// deletecollection, whether or not it succeeded.
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return e.Resource != ""
	}
	return false
}

// Abandoned reports whether the client cancelled the request before the API server had read
// all of it, so that the API server could not act on it: an HTTP/2 stream the client reset,
// answered 500 with a stream error. A write abandoned that way changed nothing.
func (e AuditEvent) Abandoned() bool {
	// Go's HTTP/2 server reports the reset as "stream error: stream ID <n>; CANCEL[; cause]".
	return e.Code == http.StatusInternalServerError && strings.HasPrefix(e.Message, "stream error: ") &&
		strings.Contains(e.Message, "; CANCEL")
}

// AuditEvents are requests in the order the audit log recorded them.
type AuditEvents []AuditEvent

// ByUser returns the events of requests that acted as the named user.
func (es AuditEvents) ByUser(name string) AuditEvents {
	return es.Filter(func(e AuditEvent) bool { return e.User == name })
}

// Writes returns the events of requests that asked to change state ([AuditEvent.IsWrite]).
func (es AuditEvents) Writes() AuditEvents {
	return es.Filter(AuditEvent.IsWrite)
}

// Filter returns the events for which keep returns true.
func (es AuditEvents) Filter(keep func(AuditEvent) bool) AuditEvents {
	var out AuditEvents
	for _, e := range es {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// Count returns how many events there are of each key, such as
// events.Count(func(e AuditEvent) string { return e.Verb + " " + e.Resource }).
func (es AuditEvents) Count(key func(AuditEvent) string) map[string]int {
	counts := map[string]int{}
	for _, e := range es {
		counts[key(e)]++
	}
	return counts
}

// AuditLog returns the API server's audit log, or nil when [Options.AuditLog] is off.
func (e *Environment) AuditLog() *AuditLog {
	return e.audit
}

// configureAuditLog writes the audit policy into dir and returns the log that kube-apiserver,
// with the flags it sets on args, writes to.
func configureAuditLog(dir string, set func(flag, value string)) (*AuditLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("failed to write the audit policy: %w", err)
	}
	log := &AuditLog{path: filepath.Join(dir, "audit.log")}
	set("audit-policy-file", policy)
	set("audit-log-path", log.path)
	// Without a size, the log rotates at 100 MB and a long benchmark's requests end up in files
	// the reader does not see.
	set("audit-log-maxsize", "1000000")
	set("audit-log-maxbackup", "0")
	// Blocking: each request writes its own event. In batch mode, events a full buffer cannot take
	// are dropped, and counts taken from the log would be short.
	set("audit-log-mode", "blocking")
	set("audit-log-format", "json")
	return log, nil
}

// Mark records a position in the log: it sends a request the API server answers 404 and waits
// until the request is in the log. Marks and their requests are left out of what [AuditLog.Between]
// returns.
func (l *AuditLog) Mark(ctx context.Context) (AuditMark, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var id [8]byte
	_, _ = rand.Read(id[:])
	name := auditMarkPrefix + hex.EncodeToString(id[:])
	err := l.client.Get(ctx, client.ObjectKey{Namespace: auditMarkNamespace, Name: name}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		return AuditMark{}, fmt.Errorf("audit log: the mark's request was not answered 404 Not Found: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.wait)
		defer cancel()
	}
	for {
		mark, found, err := l.find(name)
		if err != nil || found {
			return mark, err
		}
		select {
		case <-ctx.Done():
			return AuditMark{}, fmt.Errorf("audit log: the mark's request %s did not appear in %s: %w", name, l.path, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// find looks for the event of the mark named name and returns the position after it.
func (l *AuditLog) find(name string) (AuditMark, bool, error) {
	var mark AuditMark
	found := false
	err := l.scan(l.last, -1, func(end int64, _ []byte, ev *rawAuditEvent) bool {
		if ev.ObjectRef != nil && ev.ObjectRef.Name == name {
			mark, found = AuditMark{offset: end, time: ev.StageTimestamp.Time}, true
			return false
		}
		return true
	})
	if found {
		l.last = mark.offset
	}
	return mark, found, err
}

// Between returns the requests recorded after mark from and before mark to, without those of
// marks. The zero AuditMark is the start of the log.
func (l *AuditLog) Between(from, to AuditMark) (AuditEvents, error) {
	if to.offset < from.offset {
		return nil, fmt.Errorf("audit log: mark %s is before mark %s", to.time.Format(time.RFC3339Nano), from.time.Format(time.RFC3339Nano))
	}
	var events AuditEvents
	err := l.scan(from.offset, to.offset, func(_ int64, _ []byte, ev *rawAuditEvent) bool {
		if ev.ObjectRef != nil && strings.HasPrefix(ev.ObjectRef.Name, auditMarkPrefix) {
			return true
		}
		events = append(events, ev.event())
		return true
	})
	return events, err
}

// Since returns the requests recorded after mark from until now.
func (l *AuditLog) Since(from AuditMark) (AuditEvents, error) {
	to, err := l.Mark(context.Background())
	if err != nil {
		return nil, err
	}
	return l.Between(from, to)
}

// scan calls fn with each whole event between offsets from and to (to < 0: the end of the file)
// and the offset after it, until fn returns false.
func (l *AuditLog) scan(from, to int64, fn func(end int64, line []byte, ev *rawAuditEvent) bool) error {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	offset := from
	for to < 0 || offset < to {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 || line[len(line)-1] != '\n' {
			// The end of the file, or a line the API server is still writing.
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("audit log: %w", err)
			}
			return nil
		}
		offset += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ev rawAuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("audit log: failed to decode the event at offset %d: %w", offset-int64(len(line)), err)
		}
		if !fn(offset, line, &ev) {
			return nil
		}
	}
	return nil
}

// rawAuditEvent is the part of an audit.k8s.io/v1 Event the reader uses.
type rawAuditEvent struct {
	Verb       string        `json:"verb"`
	RequestURI string        `json:"requestURI"`
	User       rawAuditUser  `json:"user"`
	Imperson   *rawAuditUser `json:"impersonatedUser"`
	UserAgent  string        `json:"userAgent"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp microTime `json:"requestReceivedTimestamp"`
	StageTimestamp           microTime `json:"stageTimestamp"`
}

type rawAuditUser struct {
	Username string `json:"username"`
}

// microTime decodes the API server's RFC 3339 timestamps with microseconds.
type microTime struct{ time.Time }

// UnmarshalJSON reads a quoted RFC 3339 timestamp (with or without fractional seconds).
func (t *microTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || s == "" {
		return err
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	t.Time = parsed
	return err
}

func (ev *rawAuditEvent) event() AuditEvent {
	e := AuditEvent{
		User:      ev.User.Username,
		UserAgent: ev.UserAgent,
		Verb:      ev.Verb,
		URI:       ev.RequestURI,
		Received:  ev.RequestReceivedTimestamp.Time,
		Completed: ev.StageTimestamp.Time,
	}
	if ev.Imperson != nil && ev.Imperson.Username != "" {
		e.User = ev.Imperson.Username
	}
	if r := ev.ObjectRef; r != nil {
		e.APIGroup, e.Resource, e.Subresource, e.Namespace, e.Name = r.APIGroup, r.Resource, r.Subresource, r.Namespace, r.Name
	}
	if ev.ResponseStatus != nil {
		e.Code, e.Message = ev.ResponseStatus.Code, ev.ResponseStatus.Message
	}
	return e
}
