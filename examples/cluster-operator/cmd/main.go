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

// Command manager runs the cluster operator.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // for exec and OIDC credential plugins
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"

	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/sharding"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
}

func main() {
	o := bindFlags(flag.CommandLine)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := run(*o); err != nil {
		setupLog.Error(err, "manager exited with an error")
		os.Exit(1)
	}
}

// options are the operator's command-line flags.
type options struct {
	metricsAddr, probeAddr     string
	pprofAddr                  string
	secureMetrics, enableHTTP2 bool
	leaderElection             bool
	fencedWrites               bool
	leaderElectionNamespace    string
	leaseDuration              time.Duration
	renewDeadline              time.Duration
	retryPeriod                time.Duration
	dnsEndpoint, dnsSecret     string
	directoryNamespace         string
	maxConcurrentReconciles    int
	reconcileTimeout           time.Duration
	cacheTransforms            bool
	readYourWrites             bool
	controllerRing, shardName  string
}

// bindFlags defines the operator's flags in fs and returns the options they set once fs is parsed.
func bindFlags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "The address Go's pprof profiles are served at, such as 127.0.0.1:8082 "+
		"(reach it with kubectl port-forward); 0 disables it. Profiles show memory and CPU by function, and what every goroutine waits on.")
	fs.BoolVar(&o.leaderElection, "leader-elect", false,
		"Enable leader election for controller manager. Enabling this will ensure there is only one active controller manager.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease; defaults to the namespace the manager runs in.")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long a replica that is not the leader waits before it takes the leadership over from a leader that stopped renewing it.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps trying to renew its leadership before it gives it up (and exits); shorter than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How often replicas try to acquire or renew the leadership.")
	fs.BoolVar(&o.fencedWrites, "fenced-writes", true,
		"With --leader-elect, refuse every write unless this replica renewed the lease recently enough that no other replica can have taken it over (tenon's fencing package).")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"If set, the metrics endpoint is served securely via HTTPS, with authentication and authorization.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"If set, HTTP/2 will be enabled for the metrics server (disabled by default: CVE-2023-44487, CVE-2023-39325).")
	fs.StringVar(&o.dnsEndpoint, "dns-endpoint", "", "Base URL of the DNS provider's API.")
	fs.StringVar(&o.dnsSecret, "dns-credentials", "cluster-operator-system/dns-credentials",
		"namespace/name of the Secret that holds the DNS provider's token under the key \"token\". "+
			"The generated RBAC grants access to Secrets in cluster-operator-system only: "+
			"change the kubebuilder:rbac marker for Secrets when the Secret lives elsewhere.")
	fs.StringVar(&o.directoryNamespace, "directory-namespace", "cluster-directory",
		"Namespace where every Cluster publishes its directory entry.")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "How many Clusters are reconciled at once.")
	fs.DurationVar(&o.reconcileTimeout, "reconcile-timeout", time.Minute,
		"How long one reconcile may take before its context is cancelled and it is retried; 0 for no limit. "+
			"A request on a connection that went silent would otherwise hold a worker until the connection is found dead.")
	fs.BoolVar(&o.cacheTransforms, "cache-transforms", true,
		"Drop what the operator never reads (the managedFields of Clusters and of the DNS Secret, and of its children every entry but its own) from the objects it caches. "+
			"Off only to measure what that saves.")
	fs.BoolVar(&o.readYourWrites, "read-your-writes", true,
		"Make the manager's client wait, on reads from its cache, until the cache has seen the client's own writes "+
			"(controller-runtime's read-your-writes consistency). Off: the default client, with a patch.History that remembers "+
			"the controller's own status writes instead.")
	fs.StringVar(&o.controllerRing, "controller-ring", "",
		"Run as one shard of this ControllerRing (tenon's sharding package, with the sharder of "+
			"github.com/timebertt/kubernetes-controller-sharding): every replica reconciles the Clusters assigned to it, "+
			"under its own fenced Lease named --shard-name. Replaces --leader-elect.")
	fs.StringVar(&o.shardName, "shard-name", "",
		"With --controller-ring, this shard's name: its Lease's name and holder, unique in the ring. Defaults to $POD_NAME and a random suffix, "+
			"new at every start: a process that comes back under the name it released could reconcile objects the sharder is still moving off that name.")
	return o
}

func run(o options) error {
	if o.dnsEndpoint == "" {
		return errors.New("--dns-endpoint is required")
	}
	secretNamespace, secretName, ok := strings.Cut(o.dnsSecret, "/")
	if !ok || secretNamespace == "" || secretName == "" {
		return fmt.Errorf("--dns-credentials=%q: want namespace/name", o.dnsSecret)
	}
	secretKey := client.ObjectKey{Namespace: secretNamespace, Name: secretName}

	cfg := ctrl.GetConfigOrDie()
	opts := managerOptions(o, secretKey)
	fence, shard, err := fenceManager(o, cfg, &opts)
	if err != nil {
		return err
	}
	fenced := fence != nil
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("failed to create the manager: %w", err)
	}

	provider := &dns.Provider{Endpoint: o.dnsEndpoint, Secret: secretKey, Reader: mgr.GetClient()}
	if fence != nil {
		// Calls to the DNS provider do not go through the API server: the lock refuses them too.
		provider.Fence = fence
	}
	conditionMetrics := observe.NewMetrics()
	if err := conditionMetrics.Register(metrics.Registry); err != nil {
		return fmt.Errorf("failed to register metrics: %w", err)
	}
	ro := controller.Options{
		DirectoryNamespace:      o.directoryNamespace,
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		Metrics:                 conditionMetrics,
		Shard:                   shard,
	}
	if !o.readYourWrites {
		ro.History = &patch.History{}
	}
	r := controller.NewReconciler(mgr, provider, ro)
	ctx := ctrl.SetupSignalHandler()
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("failed to set up the cluster controller: %w", err)
	}
	if err := addChecks(mgr); err != nil {
		return err
	}

	setupLog.Info("starting manager", "dnsEndpoint", o.dnsEndpoint, "dnsCredentials", secretKey.String(),
		"directoryNamespace", o.directoryNamespace, "fencedWrites", fenced, "controllerRing", o.controllerRing, "shard", shardNameOf(shard))
	return mgr.Start(ctx)
}

// fenceManager fences cfg and opts, with --leader-elect and --fenced-writes (a nil Lock
// without them), or makes the manager a shard of --controller-ring.
func fenceManager(o options, cfg *rest.Config, opts *ctrl.Options) (*fencing.Lock, *sharding.Shard, error) {
	switch {
	case o.controllerRing != "":
		shard, lock, err := shardManager(o, cfg, opts)
		if err != nil {
			return nil, nil, err
		}
		return lock, &shard, nil
	case o.leaderElection && o.fencedWrites:
		// Builds the manager's Lease lock, fences cfg with it (every client built from cfg: the
		// manager's, the Event broadcaster's) and gives it to opts.
		lock, err := fencing.ForManager(cfg, opts)
		return lock, nil, err
	}
	return nil, nil, nil
}

// shardNameOf returns shard's name, or "" without one.
func shardNameOf(shard *sharding.Shard) string {
	if shard == nil {
		return ""
	}
	return shard.Name
}

// shardManager makes the manager one shard of --controller-ring (tenon's sharding package): its
// Lease, named --shard-name, is the fenced leader election lock, held by every replica at once,
// and its cache holds the shard's Clusters and their StatefulSets, Services and ConfigMaps, and
// every directory entry.
func shardManager(o options, cfg *rest.Config, opts *ctrl.Options) (sharding.Shard, *fencing.Lock, error) {
	if o.leaderElection {
		return sharding.Shard{}, nil, errors.New("--controller-ring and --leader-elect exclude each other: every shard holds a Lease of its own")
	}
	if !o.fencedWrites {
		return sharding.Shard{}, nil, errors.New("--controller-ring needs --fenced-writes: without the fence, a shard the sharder declared dead could still write")
	}
	name := o.shardName
	if name == "" {
		pod := os.Getenv("POD_NAME")
		if pod == "" {
			return sharding.Shard{}, nil, errors.New("--controller-ring needs --shard-name or $POD_NAME")
		}
		name = pod + "-" + utilrand.String(5)
	}
	shard, err := sharding.New(o.controllerRing, name)
	if err != nil {
		return sharding.Shard{}, nil, fmt.Errorf("--controller-ring=%q, shard name %q: %w", o.controllerRing, name, err)
	}
	if err := controller.ShardCache(&opts.Cache, shard, o.directoryNamespace); err != nil {
		return sharding.Shard{}, nil, err
	}
	// The Lease, its fence on cfg, LeaderElection and the release on exit.
	lock, err := sharding.ForManager(cfg, opts, shard)
	if err != nil {
		return sharding.Shard{}, nil, err
	}
	return shard, lock, nil
}

// managerOptions returns the manager's options: metrics, probes, leader election, and the cache
// and client the controller needs (the DNS credentials' Secret, secretKey, cached alone).
func managerOptions(o options, secretKey client.ObjectKey) ctrl.Options {
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOptions := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.secureMetrics, TLSOpts: tlsOpts}
	if o.secureMetrics {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	cacheOptions := controller.CacheOptions(secretKey)
	if !o.cacheTransforms {
		cacheOptions = withoutTransforms(cacheOptions)
	}
	clientOptions := controller.ClientOptions()
	if !o.readYourWrites {
		clientOptions = client.Options{}
	}
	return ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions,
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		LeaseDuration:           &o.leaseDuration,
		RenewDeadline:           &o.renewDeadline,
		RetryPeriod:             &o.retryPeriod,
		// Step down promptly on SIGTERM, so a new leader takes over without waiting for the lease.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions,
		Client:                        clientOptions,
		Controller:                    config.Controller{ReconciliationTimeout: o.reconcileTimeout},
	}
}

// withoutTransforms returns opts with every object cached as the API server sends it: no
// transform, its selectors kept (--cache-transforms=false, to measure what the transforms save).
func withoutTransforms(opts cache.Options) cache.Options {
	opts.DefaultTransform = nil
	byObject := make(map[client.Object]cache.ByObject, len(opts.ByObject))
	for obj, b := range opts.ByObject {
		b.Transform = nil
		byObject[obj] = b
	}
	opts.ByObject = byObject
	return opts
}

// addChecks adds the health check and the ready check, which passes once the caches have synced:
// until then the controller has not acted on anything.
func addChecks(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("failed to set up the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches have not synced yet")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("failed to set up the ready check: %w", err)
	}
	return nil
}

// leaderElectionID names the leader election Lease.
const leaderElectionID = "cluster-operator.apps.tenon.dev"
