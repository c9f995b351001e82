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

package patch_test

import (
	"context"
	"flag"
	"os"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		// Fuzzing (go test -run '^$' -fuzz FuzzMergeAndDiff) needs no API server; each fuzz
		// worker process would otherwise start one.
		os.Exit(m.Run())
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{testtypes.CRDDirectory(), realkinds.CRDDirectory()}, Scheme: scheme, AuditLog: true})
	os.Exit(env.Run(m))
}

// counts is the number of requests a counting client sent, by verb ("get", "patch", "apply",
// "update", "create", "delete") and by verb on the status subresource ("status patch", ...).
type counts map[string]int

// countingClient counts the requests sent through it.
type countingClient struct {
	client.WithWatch
	mu     sync.Mutex
	counts counts
}

// newCountingClient returns a client for the test environment that counts its requests.
func newCountingClient(t testing.TB) *countingClient {
	t.Helper()
	c, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to create a client: %v", err)
	}
	return countRequests(c)
}

// countRequests wraps c so that it counts its requests.
func countRequests(c client.WithWatch) *countingClient {
	cc := &countingClient{counts: counts{}}
	cc.WithWatch = interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			cc.count("get")
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			cc.count("create")
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			cc.count("update")
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if isApply(patch) {
				cc.count("apply") // a typed object's server-side apply
			} else {
				cc.count("patch")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			cc.count("apply")
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			cc.count("delete")
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			cc.count(sub + " update")
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if isApply(patch) {
				cc.count(sub + " apply")
			} else {
				cc.count(sub + " patch")
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			cc.count(sub + " apply")
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	return cc
}

func (c *countingClient) count(verb string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[verb]++
}

// take returns the counts so far and starts counting from zero.
func (c *countingClient) take() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = counts{}
	return out
}
