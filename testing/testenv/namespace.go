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
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespace creates a namespace for the calling test and returns its name. The name is the test's
// name, shortened and made DNS-safe, plus a random suffix, so tests never share objects by
// accident and a leftover object says which test created it.
//
// The namespace is deleted when the test and its subtests have finished. With the garbage
// collector on, the namespace controller then deletes what it holds; an object whose finalizer
// is never removed keeps it in Terminating, as on a real cluster. Without the collector the
// namespace stays Terminating until the environment stops, which does no harm since names are
// never reused.
//
// Cluster-scoped objects are in no namespace, so its deletion leaves them. Those that tenon's
// ownership package tracks for an owner in the namespace (a ClusterRole a controller made for
// the test's object, say) are deleted with it: the garbage collector cannot reach them, and
// every later test's manager, whose cache holds every cluster-scoped object, would see them.
// Other cluster-scoped objects a test creates are the test's to delete.
func (e *Environment) Namespace(t TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: namespacePrefix(t.Name()),
		Labels:       map[string]string{"tenon.dev/test": "true"},
	}}
	if err := e.client.Create(t.Context(), ns); err != nil {
		t.Fatalf("testenv: failed to create a namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.WaitTimeout)
		defer cancel()
		if err := e.deleteTrackedClusterObjects(ctx, ns.Name); err != nil {
			t.Errorf("testenv: failed to delete the cluster-scoped objects tracked by owners in namespace %s: %v", ns.Name, err)
		}
		err := e.client.Delete(ctx, ns)
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("testenv: failed to delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespacePrefix turns a test name into a DNS label prefix for generateName: lower case,
// alphanumerics and single dashes, at most 40 characters, ending in a dash.
func namespacePrefix(testName string) string {
	var b strings.Builder
	dash := true // suppress leading dashes
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	prefix := strings.TrimRight(b.String(), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	if prefix == "" || prefix[0] < 'a' {
		prefix = "test-" + prefix
	}
	return strings.TrimRight(prefix, "-") + "-"
}
