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

package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The namespaces of the demo: the Clusters', the operator's (with the DNS credentials), and the
// directory where every Cluster publishes an entry.
const (
	namespace          = "demo"
	systemNamespace    = "cluster-operator-system"
	directoryNamespace = "cluster-directory"
)

// pollInterval is how often the demo looks at the Clusters to update its table.
const pollInterval = 250 * time.Millisecond

// demo is one run of the demo: what it started and what it saw.
type demo struct {
	out   io.Writer
	o     options
	start time.Time

	env   *testenv.Environment
	admin client.Client
	dns   *clouddnstest.Server
	// calls records every call the operator makes through its client: the API writes per object
	// of the summary.
	calls *faults.Client

	names           []string
	initialReplicas map[string]int32
	table           *table
	createdAt       map[string]time.Time
	ready           map[string]time.Duration
	scaled          string
	scaledAt        time.Time
	rescaled        time.Duration
}

// run runs the demo, writing its narration to out, and stops everything it started before it
// returns, whether it succeeded, failed or ctx was cancelled (Ctrl-C).
func run(ctx context.Context, out io.Writer, o options) (err error) {
	d := &demo{out: out, o: o, start: time.Now(),
		initialReplicas: map[string]int32{}, createdAt: map[string]time.Time{}, ready: map[string]time.Duration{}}
	fmt.Fprintln(out, "cluster-operator demo: the tenon example operator, live on a control plane embedded in this process.")

	d.step(1, "Starting the control plane: etcd, kube-apiserver and kube-controller-manager's garbage collector")
	d.env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join(o.configDir, "crd", "bases")},
		Scheme:            newScheme(),
		GarbageCollector:  true,
	})
	if err := d.env.Start(); err != nil {
		return fmt.Errorf("failed to start the control plane (run `make envtest` first?): %w", err)
	}
	defer func() {
		if stopErr := d.env.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("failed to stop the control plane: %w", stopErr))
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	d.admin = d.env.Client()
	d.note("up in %s: Kubernetes %s, CRD clusters.apps.tenon.dev installed", seconds(time.Since(d.start)), testenv.KubernetesVersion)

	d.step(2, "Starting the cloud DNS API")
	token := rand.Text()
	d.dns = clouddnstest.NewServer(clouddnstest.Options{Token: token, PropagationDelay: o.propagationDelay})
	dnsServer := httptest.NewServer(d.dns)
	defer dnsServer.Close()
	d.note("serving at %s: bearer-token auth, changes take %s to propagate", dnsServer.URL, o.propagationDelay)
	secret, err := d.createNamespaces(ctx, token)
	if err != nil {
		return err
	}
	d.note("its token is in Secret %s/%s, as config/samples/dns_credentials_secret.yaml shows", systemNamespace, secret.Name)

	d.step(3, "Starting the operator, and the simulated kubelet")
	stopManagers, err := d.startManagers(ctx, client.ObjectKeyFromObject(secret), dnsServer.URL)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := stopManagers(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("the operator or the kubelet stopped with an error: %w", stopErr))
		}
	}()
	d.note("the operator reconciles Clusters with up to 4 workers; every call it makes is recorded")
	d.note("the kubelet stands in for the StatefulSet controller: one replica becomes ready every %s", o.replicaDelay)

	if err := d.createSamples(ctx); err != nil {
		return err
	}
	if err := d.scale(ctx); err != nil {
		return err
	}
	if err := d.deleteAll(ctx); err != nil {
		return err
	}
	return d.summary(ctx)
}

// startManagers starts the operator's manager, configured as cmd/main.go configures it, and a
// manager for the simulated kubelet, and returns a function that stops both and waits for them.
func (d *demo) startManagers(ctx context.Context, secret client.ObjectKey, dnsEndpoint string) (stop func() error, err error) {
	quiet := func(opts ctrl.Options) ctrl.Options {
		opts.Scheme = d.env.Scheme()
		opts.Metrics = metricsserver.Options{BindAddress: "0"}
		opts.HealthProbeBindAddress = "0"
		return opts
	}
	operator, err := ctrl.NewManager(d.env.Config(), quiet(ctrl.Options{
		Cache:  controller.CacheOptions(secret),
		Client: controller.ClientOptions(),
		// Record every call of the operator's client, reads from the cache included.
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.New(config, options)
			if err != nil {
				return nil, err
			}
			d.calls = faults.Record(c)
			return d.calls, nil
		},
	}))
	if err != nil {
		return nil, fmt.Errorf("failed to create the operator's manager: %w", err)
	}
	provider := &dns.Provider{Endpoint: dnsEndpoint, Secret: secret, Reader: operator.GetClient()}
	conditionMetrics := observe.NewMetrics()
	if err := conditionMetrics.Register(metrics.Registry); err != nil {
		return nil, fmt.Errorf("failed to register metrics: %w", err)
	}
	r := controller.NewReconciler(operator, provider, controller.Options{
		DirectoryNamespace: directoryNamespace, MaxConcurrentReconciles: 4, Metrics: conditionMetrics,
	})
	if err := r.SetupWithManager(ctx, operator); err != nil {
		return nil, fmt.Errorf("failed to set up the cluster controller: %w", err)
	}

	kubeletManager, err := d.newKubelet(quiet(ctrl.Options{}))
	if err != nil {
		return nil, err
	}

	var stops []func() error
	stop = func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	for _, mgr := range []manager.Manager{operator, kubeletManager} {
		s, err := startManager(ctx, mgr)
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		stops = append(stops, s)
	}
	return stop, nil
}

// newScheme returns a scheme of Kubernetes' built-in kinds and the operator's.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	return scheme
}

// createNamespaces creates the demo's namespaces and, in the operator's, the Secret that holds
// the DNS API's token.
func (d *demo) createNamespaces(ctx context.Context, token string) (*corev1.Secret, error) {
	for _, ns := range []string{systemNamespace, directoryNamespace, namespace} {
		if err := d.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("failed to create namespace %s: %w", ns, err)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "dns-credentials", Namespace: systemNamespace},
		Data:       map[string][]byte{dns.TokenKey: []byte(token)},
	}
	if err := d.admin.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("failed to create the DNS credentials: %w", err)
	}
	return secret, nil
}

// newKubelet returns a manager, with opts, that runs the simulated kubelet on the operator's
// StatefulSets.
func (d *demo) newKubelet(opts ctrl.Options) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(d.env.Config(), opts)
	if err != nil {
		return nil, fmt.Errorf("failed to create the kubelet's manager: %w", err)
	}
	sim := &kubelet.Simulator{
		Client:       mgr.GetClient(),
		Selector:     labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy}),
		ReplicaDelay: d.o.replicaDelay,
	}
	if err := sim.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

// startManager starts mgr and waits until its caches have synced; the function it returns stops
// it, waits until it has, and returns the error it stopped with.
func startManager(ctx context.Context, mgr manager.Manager) (stop func() error, err error) {
	managerCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(managerCtx) }()
	stop = func() error {
		cancel()
		return <-done
	}
	synced := make(chan bool, 1)
	go func() { synced <- mgr.GetCache().WaitForCacheSync(managerCtx) }()
	select {
	case ok := <-synced:
		if ok {
			return stop, nil
		}
		stopErr := stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errors.Join(errors.New("the manager's cache did not sync"), stopErr)
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("the manager stopped before its cache synced: %w", err)
	}
}

// createSamples creates the Clusters of config/samples and shows them converge.
func (d *demo) createSamples(ctx context.Context) error {
	clusters, err := d.readSamples()
	if err != nil {
		return err
	}
	for _, c := range clusters {
		d.names = append(d.names, c.Name)
		d.initialReplicas[c.Name] = c.Spec.Replicas
	}
	d.table = newTable(d.out, d.start, d.names)

	d.step(4, "Applying config/samples: %s", strings.Join(d.names, ", "))
	for _, c := range clusters {
		c.Namespace = namespace
		if err := d.admin.Create(ctx, c); err != nil {
			return fmt.Errorf("failed to create Cluster %s: %w", c.Name, err)
		}
		d.createdAt[c.Name] = time.Now()
		d.note("cluster.apps.tenon.dev/%s created: %s of version %s at %s", c.Name, plural(int(c.Spec.Replicas), "replica"), c.Spec.Version, c.Spec.DNSName)
	}
	d.table.header()
	err = d.watch(ctx, "every Cluster to be Ready", func(s snapshot) bool {
		for _, name := range d.names {
			c := s.clusters[name]
			if c == nil || !conditions.IsReady(c) {
				return false
			}
			if _, seen := d.ready[name]; !seen {
				d.ready[name] = time.Since(d.createdAt[name])
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	d.note("every Cluster is Ready: its ConfigMap, Services and StatefulSet applied, every replica ready, its DNS record in sync")
	return d.nudge(ctx)
}

// nudge makes the operator reconcile every Cluster once more, with nothing to change, and shows
// that those reconciles write nothing.
func (d *demo) nudge(ctx context.Context) error {
	reconciled, written := reconciles(), len(d.calls.Writes())
	for _, name := range d.names {
		c := &appsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		nudge := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"demo.tenon.dev/nudged":"true"}}}`))
		if err := d.admin.Patch(ctx, c, nudge); err != nil {
			return fmt.Errorf("failed to annotate Cluster %s: %w", name, err)
		}
	}
	// The count moves once a reconcile has returned, its writes done.
	if err := d.wait(ctx, "the reconciles of the annotated Clusters", func() bool {
		return reconciles() >= reconciled+len(d.names)
	}); err != nil {
		return err
	}
	writes := len(d.calls.Writes()) - written
	verdict := "nothing to change, nothing written"
	if writes > 0 {
		verdict = "writes that changed nothing: see the log"
	}
	d.note("annotating every Cluster woke the controller: %d reconciles, %d API writes (%s)", reconciles()-reconciled, writes, verdict)
	return nil
}

// scale scales the first sample up by two replicas and shows observedGeneration catch up.
func (d *demo) scale(ctx context.Context) error {
	d.scaled = d.names[0]
	cluster := &appsv1alpha1.Cluster{}
	if err := d.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: d.scaled}, cluster); err != nil {
		return fmt.Errorf("failed to read Cluster %s: %w", d.scaled, err)
	}
	from := cluster.Spec.Replicas
	d.step(5, "Scaling %s from %d to %d replicas", d.scaled, from, from+2)
	before := cluster.DeepCopy()
	cluster.Spec.Replicas = from + 2
	if err := d.admin.Patch(ctx, cluster, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("failed to scale Cluster %s: %w", d.scaled, err)
	}
	d.scaledAt = time.Now()
	d.note("spec.replicas is %d: metadata.generation is now %d, and the status describes generation %d until the operator catches up",
		cluster.Spec.Replicas, cluster.Generation, cluster.Status.ObservedGeneration)
	d.table.header()
	err := d.watch(ctx, d.scaled+" to be Ready at its new generation", func(s snapshot) bool {
		c := s.clusters[d.scaled]
		return c != nil && conditions.IsReady(c) && c.Status.ObservedGeneration == cluster.Generation && c.Status.ReadyReplicas == from+2
	})
	if err != nil {
		return err
	}
	d.rescaled = time.Since(d.scaledAt)
	d.note("%s is Ready at generation %d with %d replicas, %s after the change", d.scaled, cluster.Generation, from+2, seconds(d.rescaled))
	return nil
}

// deleteAll deletes every Cluster and shows the finalizer clean up.
func (d *demo) deleteAll(ctx context.Context) error {
	d.step(6, "Deleting every Cluster: the finalizer deletes its DNS record, then its directory entry")
	for _, name := range d.names {
		c := &appsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		if err := d.admin.Delete(ctx, c); err != nil {
			return fmt.Errorf("failed to delete Cluster %s: %w", name, err)
		}
	}
	d.table.header()
	err := d.watch(ctx, "every Cluster, DNS record and child to be gone", func(s snapshot) bool {
		return len(s.clusters) == 0 && len(s.records) == 0 && s.children == 0
	})
	if err != nil {
		return err
	}
	d.note("every Cluster is gone, and so are its DNS record and directory entry (deleted by the finalizer)")
	d.note("and its ConfigMap, Services and StatefulSet (deleted by the garbage collector, following owner references)")
	return nil
}

// readSamples reads the Clusters that config/samples/kustomization.yaml lists.
func (d *demo) readSamples() ([]*appsv1alpha1.Cluster, error) {
	dir := filepath.Join(d.o.configDir, "samples")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the samples: %w", err)
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &kustomization); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", filepath.Join(dir, "kustomization.yaml"), err)
	}
	var clusters []*appsv1alpha1.Cluster
	for _, name := range kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("failed to read the samples: %w", err)
		}
		c := &appsv1alpha1.Cluster{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, fmt.Errorf("failed to read sample %s: %w", name, err)
		}
		if c.Kind != "Cluster" {
			continue
		}
		clusters = append(clusters, c)
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("no Cluster in %s", dir)
	}
	return clusters, nil
}

// watch updates the table every pollInterval until done reports true for what it sees, the
// phase times out, or ctx ends.
func (d *demo) watch(ctx context.Context, what string, done func(snapshot) bool) error {
	deadline := time.NewTimer(d.o.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		s, err := d.snapshot(ctx)
		if err != nil {
			return err
		}
		d.table.update(s)
		if done(s) {
			if f := d.table.footnote(); f != "" {
				fmt.Fprintf(d.out, "      %s\n", f)
			}
			fmt.Fprintln(d.out)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("gave up after %s waiting for %s", d.o.timeout, what)
		case <-tick.C:
		}
	}
}

// wait waits until done reports true, checking every pollInterval, until the phase times out or
// ctx ends.
func (d *demo) wait(ctx context.Context, what string, done func() bool) error {
	deadline := time.NewTimer(d.o.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("gave up after %s waiting for %s", d.o.timeout, what)
		case <-tick.C:
		}
	}
	return nil
}

// step starts phase n of the narration.
func (d *demo) step(n int, format string, args ...any) {
	fmt.Fprintf(d.out, "\n[%d/6] %s\n", n, fmt.Sprintf(format, args...))
}

// note adds a line to the current phase.
func (d *demo) note(format string, args ...any) {
	fmt.Fprintf(d.out, "      %s\n", fmt.Sprintf(format, args...))
}

// plural returns n and noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// seconds formats d for people, in seconds with one decimal.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
