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
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name, method, url, contentType string
		want                           RequestKey
	}{
		{"a get of one object", http.MethodGet, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets/w", "",
			RequestKey{Verb: "get", Resource: "widgets"}},
		{"a list in a namespace", http.MethodGet, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets?limit=500", "",
			RequestKey{Verb: "list", Resource: "widgets"}},
		{"a watch", http.MethodGet, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets?watch=true", "",
			RequestKey{Verb: "watch", Resource: "widgets"}},
		{"a JSON patch of the status", http.MethodPatch, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets/w/status", "application/json-patch+json",
			RequestKey{Verb: "patch", PatchType: "json", Resource: "widgets", Subresource: "status"}},
		{"a merge patch", http.MethodPatch, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets/w", "application/merge-patch+json",
			RequestKey{Verb: "patch", PatchType: "merge", Resource: "widgets"}},
		{"a strategic merge patch of an Event", http.MethodPatch, "/api/v1/namespaces/ns/events/e", "application/strategic-merge-patch+json",
			RequestKey{Verb: "patch", PatchType: "strategic", Resource: "events"}},
		{"a server-side apply of the status", http.MethodPatch, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets/w/status", "application/apply-patch+yaml",
			RequestKey{Verb: "apply", Resource: "widgets", Subresource: "status"}},
		{"an update", http.MethodPut, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets/w", "application/json",
			RequestKey{Verb: "update", Resource: "widgets"}},
		{"a create of a namespace", http.MethodPost, "/api/v1/namespaces", "application/json",
			RequestKey{Verb: "create", Resource: "namespaces"}},
		{"a delete of a namespace", http.MethodDelete, "/api/v1/namespaces/ns", "",
			RequestKey{Verb: "delete", Resource: "namespaces"}},
		{"a delete collection", http.MethodDelete, "/apis/bench.tenon.dev/v1/namespaces/ns/widgets", "",
			RequestKey{Verb: "deletecollection", Resource: "widgets"}},
		{"discovery", http.MethodGet, "/apis", "",
			RequestKey{Verb: "get", Resource: "non-resource"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.url, http.NoBody)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if diff := cmp.Diff(tc.want, classify(req)); diff != "" {
				t.Errorf("classify(%s %s) mismatch (-want +got):\n%s", tc.method, tc.url, diff)
			}
		})
	}
}

func TestRequestKeyTextRoundTrip(t *testing.T) {
	for _, k := range []RequestKey{
		{Verb: "patch", PatchType: "json", Resource: "widgets", Subresource: "status"},
		{Verb: "apply", Resource: "widgets", Subresource: "status"},
		{Verb: "watch", Resource: "widgets"},
	} {
		text, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got RequestKey
		if err := got.UnmarshalText(text); err != nil {
			t.Fatalf("UnmarshalText(%q): %v", text, err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Errorf("UnmarshalText(%q) mismatch (-want +got):\n%s", text, diff)
		}
	}
}
