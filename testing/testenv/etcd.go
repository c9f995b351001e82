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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// CompactEtcd compacts etcd's history up to its current revision, as kube-apiserver does every
// five minutes in a real cluster, and returns that revision. Afterwards a list or watch that
// asks etcd for an older resourceVersion fails with 410 Gone ("too old resource version"); a
// client's informers then list again. kube-apiserver's watch cache still serves the recent past
// from memory; [Environment.RestartAPIServer] after CompactEtcd empties it, so that every watch
// a client resumes from before the compaction is refused, as after a control-plane upgrade:
//
//	rev, err := env.CompactEtcd(ctx)
//	g.Expect(err).NotTo(HaveOccurred())
//	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())
//	// every informer relists; the operator must lose nothing
//
// It talks to etcd's JSON gateway on its client URL. It returns an error when the environment
// is not started.
func (e *Environment) CompactEtcd(ctx context.Context) (int64, error) {
	if e.env == nil || e.env.ControlPlane.Etcd == nil || e.env.ControlPlane.Etcd.URL == nil {
		return 0, errors.New("failed to compact etcd: the environment is not started")
	}
	base := e.env.ControlPlane.Etcd.URL.String()
	// A range over one key answers with the store's current revision in its header.
	var current struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := etcdCall(ctx, base+"/v3/kv/range", map[string]any{"key": "AA==", "limit": 1}, &current); err != nil {
		return 0, fmt.Errorf("failed to read etcd's revision: %w", err)
	}
	rev, err := strconv.ParseInt(current.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("failed to read etcd's revision %q: %w", current.Header.Revision, err)
	}
	// Physical: return once the compaction is applied to the backend, not only scheduled.
	if err := etcdCall(ctx, base+"/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil); err != nil {
		return 0, fmt.Errorf("failed to compact etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

// etcdCall posts body as JSON to one of etcd's gateway endpoints and decodes the answer into out.
func etcdCall(ctx context.Context, url string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, bytes.TrimSpace(answer))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
