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

package clouddns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Errors the client returns, to branch on with errors.Is.
var (
	// ErrNotFound: the record does not exist.
	ErrNotFound = errors.New("record not found")
	// ErrConflict: the record already exists (create), or is being deleted.
	ErrConflict = errors.New("record conflict")
	// ErrUnauthorized: the token was refused. Retrying does not help until the credentials change.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnavailable: the API failed or could not be reached; retrying later may succeed.
	ErrUnavailable = errors.New("dns api unavailable")
)

// Record statuses.
const (
	// StatusPending: the record was created or changed and is propagating.
	StatusPending = "PENDING"
	// StatusInSync: the record is served by every name server.
	StatusInSync = "INSYNC"
	// StatusDeleting: the record was deleted and is being withdrawn; it disappears afterwards.
	StatusDeleting = "DELETING"
)

// Record is a DNS record as the API represents it.
type Record struct {
	// Name is the fully qualified name, such as "demo.clusters.example.com". It is the record's
	// identity: the API holds at most one record per name.
	Name string `json:"name"`
	// Type is the record type, such as "A" or "CNAME".
	Type string `json:"type"`
	// Value is the record's data, such as an address.
	Value string `json:"value"`
	// TTL is the time to live in seconds.
	TTL int `json:"ttl"`
	// Owner is a free-form tag identifying who created the record, such as a Kubernetes UID.
	Owner string `json:"owner,omitempty"`
	// Status is PENDING, INSYNC or DELETING.
	Status string `json:"status"`
	// Revision increases with every change.
	Revision int64 `json:"revision"`
}

// ErrorBody is the JSON body of the API's error responses.
type ErrorBody struct {
	Error string `json:"error"`
}

// Client talks to the DNS API.
type Client struct {
	// BaseURL is the API's address, such as "http://127.0.0.1:8053".
	BaseURL string
	// Token is the bearer token. It is sent in a header and never appears in errors.
	Token string
	// HTTPClient sends the requests. Defaults to http.DefaultClient.
	HTTPClient *http.Client
}

// Get returns the record called name, or an error wrapping ErrNotFound.
func (c *Client) Get(ctx context.Context, name string) (Record, error) {
	var rec Record
	err := c.do(ctx, http.MethodGet, "/v1/records/"+url.PathEscape(name), nil, nil, &rec)
	return rec, err
}

// Create creates rec, failing with ErrConflict when a record of that name exists.
func (c *Client) Create(ctx context.Context, rec Record) (Record, error) {
	var out Record
	err := c.do(ctx, http.MethodPut, "/v1/records/"+url.PathEscape(rec.Name), map[string]string{"If-None-Match": "*"}, rec, &out)
	return out, err
}

// Put creates rec or changes the record of that name to match it.
func (c *Client) Put(ctx context.Context, rec Record) (Record, error) {
	var out Record
	err := c.do(ctx, http.MethodPut, "/v1/records/"+url.PathEscape(rec.Name), nil, rec, &out)
	return out, err
}

// Delete starts deleting the record called name and returns it in status DELETING; it wraps
// ErrNotFound when there is no such record.
func (c *Client) Delete(ctx context.Context, name string) (Record, error) {
	var out Record
	err := c.do(ctx, http.MethodDelete, "/v1/records/"+url.PathEscape(name), nil, nil, &out)
	return out, err
}

// List returns every record.
func (c *Client) List(ctx context.Context) ([]Record, error) {
	var out []Record
	err := c.do(ctx, http.MethodGet, "/v1/records", nil, nil, &out)
	return out, err
}

func (c *Client) do(ctx context.Context, method, path string, headers map[string]string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("failed to encode request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return fmt.Errorf("failed to build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e ErrorBody
		_ = json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&e)
		return fmt.Errorf("%w: %s %s: %d %s", statusError(resp.StatusCode), method, path, resp.StatusCode, e.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("failed to decode response to %s %s: %w", method, path, err)
	}
	return nil
}

// statusError maps an HTTP status to the client's error.
func statusError(code int) error {
	switch code {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrUnauthorized
	}
	return ErrUnavailable
}
