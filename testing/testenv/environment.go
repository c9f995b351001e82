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
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// serviceClusterIPRange is the range kube-apiserver allocates Services' cluster IPs from.
const serviceClusterIPRange = "10.0.0.0/16"

// controlPlaneStopTimeout is how long etcd and kube-apiserver get to exit after SIGTERM before
// they are killed.
const controlPlaneStopTimeout = 30 * time.Second

// Options configures an [Environment]. The zero value starts etcd and kube-apiserver with
// client-go's scheme, no CRDs and no garbage collector.
type Options struct {
	// CRDDirectoryPaths lists directories, or single files, of CRD manifests to install before
	// the tests run. A path that does not exist is an error: a typo must not turn into a
	// "no matches for kind" failure in every test.
	CRDDirectoryPaths []string

	// CRDs are CRD objects to install in addition to those read from CRDDirectoryPaths.
	//
	// A CRD whose kind Scheme knows as convertible (a hub version and versions that convert to
	// it, as controller-runtime's conversion package defines them) is installed with a
	// conversion webhook that points at the environment's webhook server, whatever its manifest
	// says; see WebhookDirectoryPaths.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// WebhookDirectoryPaths lists directories, or single files, of webhook configurations
	// (admissionregistration.k8s.io/v1 ValidatingWebhookConfigurations and
	// MutatingWebhookConfigurations, such as the config/webhook/manifests.yaml that controller-gen
	// writes from +kubebuilder:webhook markers) to install. A path that does not exist is an
	// error. Each webhook's service is replaced by the URL of the environment's webhook server,
	// as envtest's WebhookInstallOptions does.
	//
	// The environment's webhook server hands each request to a manager from
	// [Environment.NewManager] that registered a webhook for its path and runs: the one whose
	// namespaces hold the request's object, when several do. While none does, the API server's
	// call fails, and the webhook's failurePolicy decides, as on a cluster whose webhook is down.
	WebhookDirectoryPaths []string

	// Scheme is used by the environment's clients and managers. Defaults to client-go's scheme,
	// which knows the built-in Kubernetes types; register your own types on a scheme that
	// includes those.
	Scheme *runtime.Scheme

	// GarbageCollector starts kube-controller-manager with only its garbage-collector and
	// namespace controllers, so that deleting an owner removes its dependents (ownerReferences,
	// foreground and background propagation) and a deleted namespace finishes terminating. Plain
	// envtest has neither. It costs a few seconds at start-up: Start waits until the collector has
	// proved it works on a probe object. setup-envtest does not provide kube-controller-manager:
	// `go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest` builds it.
	GarbageCollector bool

	// BinaryAssetsDirectory is the directory holding etcd, kube-apiserver and (for the garbage
	// collector) kube-controller-manager. When empty, the directory named by KUBEBUILDER_ASSETS is
	// used, then setup-envtest's standard directory (KubernetesVersion first).
	BinaryAssetsDirectory string

	// ControlPlaneOutput receives the output of etcd, kube-apiserver and kube-controller-manager.
	// Nil discards it; the last lines of a process that fails to start are part of the error.
	ControlPlaneOutput io.Writer

	// WaitTimeout bounds the wait helpers ([Environment.CreateAndWait], [Environment.DeleteAndWait],
	// namespace deletion) when their context has no deadline. Defaults to 30 seconds.
	WaitTimeout time.Duration

	// AuditLog runs kube-apiserver with an audit policy that records every request, and makes
	// the record available as [Environment.AuditLog]: the API server's own count of what the
	// tests' clients and controllers sent. It costs a write to a local file per request.
	AuditLog bool

	// StartTimeout bounds the start of each control-plane process, and each restart of
	// kube-apiserver by [Environment.StartAPIServer]. Defaults to 60 seconds.
	StartTimeout time.Duration

	// FeatureGates turns kube-apiserver's feature gates on (true) or off (false), as its
	// --feature-gates flag does: {"ShardedListAndWatch": true} for an alpha feature. A gate
	// kube-apiserver does not know fails Start with its message.
	FeatureGates map[string]bool
}

// Environment is a running control plane for tests: etcd, kube-apiserver and, optionally,
// kube-controller-manager's garbage collector.
//
// Start one per test package in TestMain and share it between the package's tests; give each
// test its own namespace with [Environment.Namespace]. All methods are safe for concurrent use
// once Start has returned.
type Environment struct {
	opts Options

	bins       binaries
	env        *envtest.Environment
	config     *rest.Config
	kubeconfig string
	client     client.Client
	workDir    string
	reaper     *reaper
	collector  *controllerManager
	audit      *AuditLog
	webhooks   *webhookRouter

	// apiMu serializes StopAPIServer, StartAPIServer and Stop, and guards the fields below.
	apiMu sync.Mutex
	// apiCommand is how envtest ran kube-apiserver, read from /proc when it is first stopped.
	apiCommand *apiServerCommand
	// apiServer is kube-apiserver as StartAPIServer runs it; nil while envtest's process runs.
	apiServer *ownedProcess
	// apiStopped reports whether StopAPIServer stopped kube-apiserver and it has not started since.
	apiStopped bool
	// stopped reports whether Stop has run.
	stopped bool

	stopOnce sync.Once
	stopErr  error
}

// New returns an Environment that is not yet started; see [Environment.Run] and
// [Environment.Start].
func New(opts Options) *Environment {
	if opts.Scheme == nil {
		opts.Scheme = clientgoscheme.Scheme
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = 30 * time.Second
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	return &Environment{opts: opts}
}

// Run starts the environment, runs the tests and stops the environment, returning the exit code
// for os.Exit. It is meant to be the whole body of TestMain:
//
//	func TestMain(m *testing.M) {
//		env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{"../config/crd/bases"}})
//		os.Exit(env.Run(m))
//	}
//
// When the environment cannot start, Run prints why (for missing binaries, the command that
// provides them) and returns 1 without running any test.
//
// Under go test -fuzz, the worker processes that run a fuzz target's inputs start no control
// plane: fuzz targets are for pure functions, and each worker would otherwise start an etcd and a
// kube-apiserver of its own. The fuzzing process itself starts the environment as usual.
func (e *Environment) Run(m *testing.M) int {
	if isFuzzWorker() {
		return m.Run()
	}
	if err := e.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: failed to start the test control plane: %v\n", err)
		return 1
	}
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: failed to stop the test control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// isFuzzWorker reports whether this test binary runs as a worker of go test -fuzz. The fuzzing
// engine starts the test binary again, with -test.fuzzworker, to run the fuzz target's inputs;
// a worker runs nothing else.
func isFuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	if f == nil {
		return false
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	return f.Value.String() == "true"
}

// Start starts the control plane, installs the CRDs and, if requested, the garbage collector.
//
// Whatever happens to the test process afterwards (a panic, a timeout, a signal), its
// control-plane processes do not outlive it: a small watchdog process kills them when the test
// process exits without calling Stop. On failure, everything started so far is stopped.
func (e *Environment) Start() (err error) {
	if err := e.checkPaths(); err != nil {
		return err
	}
	bins, err := findBinaries(e.opts.BinaryAssetsDirectory, e.opts.GarbageCollector)
	if err != nil {
		return err
	}
	e.bins = bins

	e.workDir, err = os.MkdirTemp("", "tenon-testenv-")
	if err != nil {
		return fmt.Errorf("failed to create a working directory: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()
	// Without the reaper the environment still works; it only loses its crash guarantee.
	e.reaper, _ = startReaper(e.workDir)

	if err := e.configure(); err != nil {
		return err
	}
	if err := e.startControlPlane(); err != nil {
		return err
	}
	if e.opts.GarbageCollector {
		e.collector, err = startControllerManager(e, bins.controllerManager, e.opts.ControlPlaneOutput)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkPaths returns an error naming the first CRD or webhook path of the options that does not
// exist.
func (e *Environment) checkPaths() error {
	for _, p := range e.opts.CRDDirectoryPaths {
		if _, statErr := os.Stat(p); statErr != nil {
			abs, _ := filepath.Abs(p)
			return fmt.Errorf("CRD path %q (%s) does not exist: check Options.CRDDirectoryPaths", p, abs)
		}
	}
	for _, p := range e.opts.WebhookDirectoryPaths {
		if _, statErr := os.Stat(p); statErr != nil {
			abs, _ := filepath.Abs(p)
			return fmt.Errorf("webhook path %q (%s) does not exist: check Options.WebhookDirectoryPaths", p, abs)
		}
	}
	return nil
}

// configure sets up envtest's environment in the working directory: etcd and kube-apiserver from
// the binaries found, their output, the audit log, and the directories they need.
func (e *Environment) configure() error {
	output := e.opts.ControlPlaneOutput
	e.env = &envtest.Environment{
		Scheme:                   e.opts.Scheme,
		CRDDirectoryPaths:        e.opts.CRDDirectoryPaths,
		CRDs:                     e.opts.CRDs,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: e.opts.StartTimeout,
		ControlPlaneStopTimeout:  controlPlaneStopTimeout,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: e.opts.WebhookDirectoryPaths},
		// envtest would otherwise read USE_EXISTING_CLUSTER and point the environment at the
		// cluster of the kubeconfig, where the garbage collector, API server restarts and the
		// watchdog would act on someone's cluster. The environment is always its own.
		UseExistingCluster: ptr.To(false),
	}
	apiServer := e.env.ControlPlane.GetAPIServer()
	apiServer.Path = e.bins.apiServer
	apiServer.CertDir = filepath.Join(e.workDir, "apiserver")
	// envtest's default range is a /24: a test with more than 254 Services fails with "range is
	// full". A /16 holds 65534, as a small real cluster's does.
	apiServer.Configure().Set("service-cluster-ip-range", serviceClusterIPRange)
	if gates := featureGates(e.opts.FeatureGates); gates != "" {
		apiServer.Configure().Set("feature-gates", gates)
	}
	e.env.ControlPlane.Etcd = &envtest.Etcd{
		Path:    e.bins.etcd,
		DataDir: filepath.Join(e.workDir, "etcd"),
	}
	if output != nil {
		apiServer.Out, apiServer.Err = output, output
		e.env.ControlPlane.Etcd.Out, e.env.ControlPlane.Etcd.Err = output, output
	}
	if e.opts.AuditLog {
		var err error
		e.audit, err = configureAuditLog(filepath.Join(e.workDir, "audit"), func(flag, value string) {
			apiServer.Configure().Set(flag, value)
		})
		if err != nil {
			return err
		}
	}
	for _, dir := range []string{apiServer.CertDir, e.env.ControlPlane.Etcd.DataDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("failed to create %s: %w", dir, err)
		}
	}
	return nil
}

// startControlPlane starts the configured etcd and kube-apiserver, hands their processes to the
// reaper, and sets up what the environment serves from them: the webhook router, the
// administrator kubeconfig and the client.
func (e *Environment) startControlPlane() error {
	cfg, startErr := e.env.Start()
	// Hand the processes to the reaper even when the start failed half-way; only this
	// environment's, since the reaper of an environment that is not released kills what it watches.
	etcdPIDs, apiServerPIDs := e.controlPlaneProcesses()
	for _, pid := range append(etcdPIDs, apiServerPIDs...) {
		e.reaper.watch(pid)
	}
	if startErr != nil {
		return fmt.Errorf("failed to start etcd and kube-apiserver from %s: %w", e.bins.dir, startErr)
	}
	e.config = cfg
	// envtest pointed the webhook configurations and conversion webhooks at this address, with
	// these certificates, before it installed them.
	hooks := e.env.WebhookInstallOptions
	var err error
	if e.webhooks, err = startWebhookRouter(hooks.LocalServingHost, hooks.LocalServingPort, hooks.LocalServingCertDir); err != nil {
		return err
	}
	e.kubeconfig = filepath.Join(e.workDir, "admin.kubeconfig")
	if err := os.WriteFile(e.kubeconfig, e.env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("failed to write the administrator kubeconfig: %w", err)
	}
	e.client, err = client.New(cfg, client.Options{Scheme: e.opts.Scheme})
	if err != nil {
		return fmt.Errorf("failed to create a client: %w", err)
	}
	if e.audit != nil {
		e.audit.client, e.audit.wait = e.client, e.opts.WaitTimeout
	}
	return nil
}

// Stop stops the garbage collector, kube-apiserver (also when [Environment.StartAPIServer]
// restarted it) and etcd, and removes the environment's temporary files. It is safe to call more
// than once and on an environment that failed to start.
func (e *Environment) Stop() error {
	e.stopOnce.Do(func() {
		e.apiMu.Lock()
		defer e.apiMu.Unlock()
		e.stopped = true
		var errs []error
		if e.collector != nil {
			if err := e.collector.stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if e.webhooks != nil {
			ctx, cancel := context.WithTimeout(context.Background(), controlPlaneStopTimeout)
			if err := e.webhooks.stop(ctx); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		if p := e.apiServer; p != nil {
			// envtest's own process has exited, so envtest's Stop skips it and stops etcd.
			if err := e.terminateAPIServer(context.Background(), p.cmd.Process.Pid, p.exited); err != nil {
				errs = append(errs, fmt.Errorf("failed to stop kube-apiserver: %w", err))
			}
			e.apiServer = nil
		}
		if e.env != nil {
			if err := e.env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("failed to stop etcd and kube-apiserver: %w", err))
			}
		}
		if e.workDir != "" {
			if err := os.RemoveAll(e.workDir); err != nil {
				errs = append(errs, fmt.Errorf("failed to remove %s: %w", e.workDir, err))
			}
		}
		e.stopErr = errors.Join(errs...)
		if e.stopErr == nil {
			e.reaper.release()
		}
		// Otherwise the reaper kills whatever is left when this process exits.
	})
	return e.stopErr
}

// Config returns the REST configuration of a cluster administrator (group system:masters).
// Each call returns a copy that the caller may modify.
func (e *Environment) Config() *rest.Config {
	return rest.CopyConfig(e.config)
}

// Client returns a client that talks directly to the API server, as a cluster administrator,
// with the environment's scheme. It has no cache: reads always see the latest state.
func (e *Environment) Client() client.Client {
	return e.client
}

// Scheme returns the environment's scheme.
func (e *Environment) Scheme() *runtime.Scheme {
	return e.opts.Scheme
}

// GarbageCollector reports whether the environment runs the garbage collector and namespace
// controller.
func (e *Environment) GarbageCollector() bool {
	return e.collector != nil
}

// KubeconfigPath returns the path of a kubeconfig file with the environment's administrator
// credentials, for programs a test runs against the control plane, such as kubectl or the
// operator's own binary. The file is removed when the environment stops.
func (e *Environment) KubeconfigPath() string {
	return e.kubeconfig
}

// Kubectl runs kubectl from the binaries directory as a cluster administrator and returns its
// combined output. build-envtest (tenon's testing/testenv/cmd/build-envtest) builds kubectl,
// and setup-envtest downloads it; it is an error when the directory has none.
func (e *Environment) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	path := filepath.Join(e.bins.dir, kubectlBinary)
	if !isExecutable(path) {
		return nil, fmt.Errorf("%w: %s has no kubectl", ErrBinariesNotFound, e.bins.dir)
	}
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", e.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return out, nil
}

// featureGates spells gates as kube-apiserver's --feature-gates flag does, sorted:
// "A=true,B=false".
func featureGates(gates map[string]bool) string {
	parts := make([]string, 0, len(gates))
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		parts = append(parts, fmt.Sprintf("%s=%t", name, gates[name]))
	}
	return strings.Join(parts, ",")
}
