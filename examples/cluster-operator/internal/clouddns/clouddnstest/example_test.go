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

package clouddnstest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
)

// The server is an http.Handler; the client talks to it with a bearer token. A new record is
// PENDING until it has propagated (here at once), then INSYNC.
func Example() {
	server := httptest.NewServer(clouddnstest.NewServer(clouddnstest.Options{Token: "s3cret"}))
	defer server.Close()
	ctx := context.Background()
	dns := &clouddns.Client{BaseURL: server.URL, Token: "s3cret"}

	rec, err := dns.Create(ctx, clouddns.Record{Name: "demo.clusters.example.com", Type: "A", Value: "10.0.0.7", TTL: 60, Owner: "uid-1"})
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Name, rec.Status)
	rec, _ = dns.Get(ctx, rec.Name)
	fmt.Println(rec.Name, rec.Status)

	_, err = dns.Create(ctx, clouddns.Record{Name: "demo.clusters.example.com", Type: "A", Value: "10.0.0.8", TTL: 60})
	fmt.Println(errors.Is(err, clouddns.ErrConflict))

	wrong := &clouddns.Client{BaseURL: server.URL, Token: "guess"}
	_, err = wrong.Get(ctx, rec.Name)
	fmt.Println(err)
	// Output:
	// demo.clusters.example.com PENDING
	// demo.clusters.example.com INSYNC
	// true
	// unauthorized: GET /v1/records/demo.clusters.example.com: 401 invalid or missing token
}
