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
	"errors"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tenon-dev/tenon/testing/testenv"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// Env is the control plane the benchmark runs against: one envtest etcd and kube-apiserver for
// the whole run, shared by every contender, each in namespaces of its own.
type Env struct {
	env    *testenv.Environment
	scheme *runtime.Scheme
	// direct is the benchmark's own client: uncached, not counted, no client-side rate limit.
	direct client.Client
	// writers is the client of the contention workload's writers, like direct but with a
	// User-Agent of its own.
	writers client.Client
	// audit is the API server's audit log, the witness the counters are checked against.
	audit *testenv.AuditLog
}

// StartEnv starts etcd and kube-apiserver (no garbage collector: the benchmark deletes what it
// creates and waits until it is gone) with its audit log on, and installs the Widget CRD. Call
// Env.Stop when done.
func StartEnv() (*Env, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build scheme: %w", err)
	}
	if err := benchv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build scheme: %w", err)
	}
	crds, err := loadCRDs()
	if err != nil {
		return nil, err
	}
	env := testenv.New(testenv.Options{Scheme: scheme, CRDs: crds, AuditLog: true})
	if err := env.Start(); err != nil {
		return nil, fmt.Errorf("failed to start envtest: %w", err)
	}
	e := &Env{env: env, scheme: scheme, audit: env.AuditLog()}
	for _, c := range []struct {
		client *client.Client
		role   string
	}{{&e.direct, RoleHarness}, {&e.writers, RoleWriters}} {
		cfg := e.config()
		cfg.UserAgent = UserAgent(c.role, "", 0)
		*c.client, err = client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("failed to create client: %w", err), env.Stop())
		}
	}
	return e, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("failed to stop envtest: %w", err)
	}
	return nil
}

// config returns a fresh administrator rest.Config without client-side rate limiting, as
// controller-runtime's config loader sets it up (QPS -1: the API server's priority and fairness
// does the limiting), so that the client's token bucket does not set the pace.
func (e *Env) config() *rest.Config {
	cfg := e.env.Config()
	cfg.QPS = -1
	cfg.Burst = 0
	return cfg
}

func loadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(benchv1.CRDs, "crd/*.yaml")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("failed to find the embedded CRD manifests (%d found): %w", len(files), err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := fs.ReadFile(benchv1.CRDs, f)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", f, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("failed to decode %s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
