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
	"maps"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// NewManager returns a manager for the environment, configured for tests: the environment's scheme
// and administrator credentials unless opts sets them, no metrics or health-probe listener (tests
// run in parallel and would fight over ports), no leader election, and controller-name validation
// off so several tests may register controllers with the same name. Fields set in opts win.
//
// With namespaces, the manager's cache holds only the namespaced objects of those namespaces,
// such as the test's own from [Environment.Namespace]: tests that run in parallel, each with a
// manager of its own, then never see each other's objects, and their controllers never reconcile
// them. The namespaces are added to opts.Cache.DefaultNamespaces (opts is not modified).
// Cluster-scoped objects are still cached whole, as controller-runtime does for a cache limited
// to namespaces; a read through the manager's client of a namespaced object elsewhere fails
// with the cache's error, not NotFound. So a cluster-scoped child that another test's
// controller tracks is in every manager's cache: ownership.EnqueueOwner does not enqueue its
// owner, which is in a namespace the cache does not hold, and [Environment.Namespace] deletes
// it when that test ends. Without namespaces, the cache holds every namespace; an empty
// namespace among them fails t.
//
// Webhooks registered on the manager (ctrl.NewWebhookManagedBy) are served, while it runs,
// through the environment's webhook server, which Options.WebhookDirectoryPaths and the
// conversion webhooks of the CRDs point at, for requests about objects in the manager's
// namespaces (every namespace without namespaces); give no WebhookServer in opts. Tests that
// run in parallel may each run a manager with the same webhooks.
//
// Register controllers on it, then start it with [StartManager].
func (e *Environment) NewManager(t TB, opts manager.Options, namespaces ...string) manager.Manager {
	t.Helper()
	return e.newManager(t, e.Config(), opts, namespaces)
}

// newManager returns a manager configured for tests that acts with cfg's credentials.
func (e *Environment) newManager(t TB, cfg *rest.Config, opts manager.Options, namespaces []string) manager.Manager {
	t.Helper()
	if len(namespaces) > 0 {
		scoped := maps.Clone(opts.Cache.DefaultNamespaces)
		if scoped == nil {
			scoped = make(map[string]cache.Config, len(namespaces))
		}
		for _, ns := range namespaces {
			if ns == "" {
				t.Fatalf("testenv: failed to create a manager: an empty namespace would cache every namespace; " +
					"give no namespaces for that")
				return nil
			}
			if _, ok := scoped[ns]; !ok {
				scoped[ns] = cache.Config{}
			}
		}
		opts.Cache.DefaultNamespaces = scoped
	}
	if opts.Scheme == nil {
		opts.Scheme = e.opts.Scheme
	}
	if opts.Metrics.BindAddress == "" {
		opts.Metrics = metricsserver.Options{BindAddress: "0"}
	}
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller = withSkipNameValidation(opts.Controller)
	}
	if opts.WebhookServer == nil && e.webhooks != nil {
		var served []string // nil: every namespace
		if _, all := opts.Cache.DefaultNamespaces[cache.AllNamespaces]; !all && len(opts.Cache.DefaultNamespaces) > 0 {
			served = slices.Sorted(maps.Keys(opts.Cache.DefaultNamespaces))
		}
		opts.WebhookServer = newManagerWebhookServer(e.webhooks, served)
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatalf("testenv: failed to create a manager: %v", err)
	}
	return mgr
}

func withSkipNameValidation(c config.Controller) config.Controller {
	c.SkipNameValidation = ptr.To(true)
	return c
}

// StartManager starts mgr in the background and waits until its caches have synced. When the
// test ends, the manager is stopped and StartManager's cleanup waits until it has returned, so no
// reconcile of this test runs into the next one; an error the manager returns fails the test.
func StartManager(t TB, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("testenv: manager stopped with an error: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatalf("testenv: the manager's cache did not sync")
	}
}
