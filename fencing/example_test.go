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

package fencing_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/requeue"
)

// memoryLock is a resourcelock.Interface that keeps its record in memory, for the examples.
type memoryLock struct {
	record *resourcelock.LeaderElectionRecord
}

func (m *memoryLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if m.record == nil {
		return nil, nil, fmt.Errorf("no lease yet")
	}
	r := *m.record
	return &r, nil, nil
}

func (m *memoryLock) Create(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	m.record = &r
	return nil
}

func (m *memoryLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	m.record = &r
	return nil
}

func (m *memoryLock) RecordEvent(string) {}
func (m *memoryLock) Identity() string   { return "replica-a" }
func (m *memoryLock) Describe() string   { return "operators/cluster-operator" }

// The fence is closed until this replica acquires the lease, and open while its last renewal is
// recent.
func ExampleLock_Check() {
	lock, err := fencing.NewLock(&memoryLock{})
	if err != nil {
		panic(err)
	}
	err = lock.Check()
	fmt.Println(err)
	fmt.Println("class:", requeue.Classify(err))

	// The leader elector acquires the lease: the fence opens.
	_ = lock.Create(context.Background(), resourcelock.LeaderElectionRecord{
		HolderIdentity: "replica-a", LeaseDurationSeconds: 15,
	})
	fmt.Println("after acquiring:", lock.Check())
	// Output:
	// write refused by the fence of lease operators/cluster-operator: this replica (replica-a) has not acquired it (holder: none known)
	// class: fenced
	// after acquiring: <nil>
}

// stub is an http.RoundTripper that answers 200 to every request.
type stub struct{}

func (stub) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}"))}, nil
}

// A fenced transport lets reads and the lease's own requests through, and refuses writes while
// the fence is closed: a GET that acts through a subresource (an exec, a proxy) is a write.
func ExampleLock_WrapTransport() {
	lock, err := fencing.NewLock(&memoryLock{})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: lock.WrapTransport(stub{})}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a"},
		{http.MethodPatch, "/apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a"},
		{http.MethodPost, "/api/v1/namespaces/demo/events"},
		{http.MethodGet, "/api/v1/namespaces/demo/pods/db-0/exec"},
		{http.MethodGet, "/api/v1/namespaces/demo/services/db:admin/proxy/promote"},
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator"},
	} {
		req, _ := http.NewRequest(r.method, "https://api.example.com"+r.path, http.NoBody)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(r.method, r.path, "refused:", requeue.Classify(err))
			continue
		}
		_ = resp.Body.Close()
		fmt.Println(r.method, r.path, "sent")
	}
	// Output:
	// GET /apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a sent
	// PATCH /apis/apps.tenon.dev/v1alpha1/namespaces/demo/clusters/a refused: fenced
	// POST /api/v1/namespaces/demo/events refused: fenced
	// GET /api/v1/namespaces/demo/pods/db-0/exec refused: fenced
	// GET /api/v1/namespaces/demo/services/db:admin/proxy/promote refused: fenced
	// PUT /apis/coordination.k8s.io/v1/namespaces/operators/leases/cluster-operator sent
}

// An operator's main fences its manager: the Lease lock is built as controller-runtime builds
// it, wrapped, given to the manager, and every client built from the config is fenced.
func ExampleNewLock() {
	cfg := ctrl.GetConfigOrDie()
	hostname, err := os.Hostname()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The lock's own client may share the fenced config: the fence lets its Lease through.
	// NewFromKubeconfig gives it a timeout of half the renew deadline, as controller-runtime does.
	inner, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock,
		"operators", "cluster-operator.apps.tenon.dev",
		resourcelock.ResourceLockConfig{Identity: hostname + "_" + string(uuid.NewUUID())},
		cfg, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lock, err := fencing.NewLock(inner)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.Wrap(lock.WrapTransport)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		LeaderElection:                      true,
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = mgr // register controllers, then mgr.Start(ctx)
}

// ForManager fences a manager in one call: it builds the Lease lock the manager would build,
// fences the config, and hands the lock to the manager's options.
func ExampleForManager() {
	// In an operator's main: cfg := ctrl.GetConfigOrDie().
	cfg := &rest.Config{Host: "https://kubernetes.invalid"}
	opts := ctrl.Options{
		LeaderElection:                true,
		LeaderElectionID:              "cluster-operator.apps.tenon.dev",
		LeaderElectionNamespace:       "operators",
		LeaderElectionReleaseOnCancel: true,
	}
	fence, err := fencing.ForManager(cfg, &opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lease:", fence.Describe())
	fmt.Println("the manager renews through the fence:", opts.LeaderElectionResourceLockInterface == fence)

	// Every client built from cfg now is fenced; before this replica is elected, its writes are
	// refused without reaching the network.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = httpClient.Post("https://kubernetes.invalid/api/v1/namespaces/operators/configmaps", "application/json", strings.NewReader("{}"))
	fmt.Println("a write before the election:", requeue.Classify(err))

	// Then: mgr, err := ctrl.NewManager(cfg, opts).

	// Output:
	// lease: operators/cluster-operator.apps.tenon.dev
	// the manager renews through the fence: true
	// a write before the election: fenced
}
