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

package controller_test

import (
	"crypto/rand"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"

	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// Generous timeouts: the machines that run these tests may be small and shared.
const (
	timeout  = 60 * time.Second
	interval = 100 * time.Millisecond
)

var (
	scheme = runtime.NewScheme()
	env    *testenv.Environment
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
}

// TestMain starts one control plane for the package, with the garbage collector, so that the
// children with owner references go when their Cluster does, as on a real cluster.
//
// The operator's logs are discarded, unless TEST_LOG names a file to write them to.
func TestMain(m *testing.M) {
	logger := logr.Discard()
	if path := os.Getenv("TEST_LOG"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "failed to create the log file: %v\n", err)
			os.Exit(1)
		}
		logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	}
	ctrl.SetLogger(logger)
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Scheme:            scheme,
		GarbageCollector:  true,
	})
	os.Exit(env.Run(m))
}

// TestControllers runs the Ginkgo suite of the controller, as kubebuilder scaffolds it: the
// specs in cluster_controller_test.go.
func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller Suite")
}

// operatorLabel labels the Clusters of a test with the namespace of the test's operator, which
// sees only those.
const operatorLabel = "test.tenon.dev/operator"

// operator is the cluster operator running for one test, with everything it talks to: its
// namespaces, the DNS provider and the client it reaches the API server through.
type operator struct {
	// namespace holds the test's Clusters; directory their directory entries; system the
	// Secret with the DNS token.
	namespace, directory, system string

	dns *clouddnstest.Server
	// endpoint is the DNS provider's URL.
	endpoint string
	token    string
	secret   client.ObjectKey

	mgr ctrl.Manager
	// client is the operator's client: it records every call the operator makes, and injects the
	// faults of the test's plan.
	client     *faults.Client
	reconciler *controller.ClusterReconciler
}

// operatorOptions configures startOperator.
type operatorOptions struct {
	// plan is the fault plan of the operator's client. Default: no faults.
	plan faults.Plan
	// manual leaves the controller unregistered, for tests that drive the reconciler one
	// reconcile at a time with a reconciletest.Harness. The manager still runs, for its cache.
	manual bool
	// dns configures the DNS provider. Its token is always a random one.
	dns clouddnstest.Options
	// noSecret starts without the Secret that holds the DNS token.
	noSecret bool
	// newCache, when set, creates the manager's cache (ctrl.Options.NewCache).
	newCache cache.NewCacheFunc
	// kubeletDelay is how long the simulated kubelet takes to make each replica ready.
	kubeletDelay time.Duration
}

// startOperator starts the operator for t, as cmd/main.go does (same cache scoping, same
// reconciler, wrapped by requeue.WithBackoff), with the simulated kubelet beside it, and a DNS
// provider of its own. Everything stops when the test ends. t is *testing.T in the plain tests of
// this package and GinkgoT() in its Ginkgo suite (TestControllers): both are a testenv.TB, which
// is the same type as faults.TB and reconciletest.TB, so the helpers pass t on to either.
func startOperator(t testenv.TB, o operatorOptions) *operator {
	t.Helper()
	op := &operator{
		namespace: env.Namespace(t),
		directory: env.Namespace(t),
		system:    env.Namespace(t),
		token:     rand.Text(),
	}
	op.secret = client.ObjectKey{Namespace: op.system, Name: "dns-credentials"}

	o.dns.Token = op.token
	op.dns = clouddnstest.NewServer(o.dns)
	server := httptest.NewServer(op.dns)
	t.Cleanup(server.Close)
	op.endpoint = server.URL

	if !o.noSecret {
		op.writeToken(t, op.token)
	}

	// Tests run in parallel, each with an operator of its own: each sees only the Clusters of its
	// test, labelled with the operator's namespace. (A cache limited to the test's namespaces
	// would do too, but read-your-writes consistency does not work with multi-namespace caches.)
	cacheOptions := controller.CacheOptions(op.secret)
	for obj, b := range cacheOptions.ByObject {
		if _, ok := obj.(*appsv1alpha1.Cluster); ok {
			b.Label = labels.SelectorFromSet(labels.Set{operatorLabel: op.namespace})
			cacheOptions.ByObject[obj] = b
		}
	}
	op.mgr = env.NewManager(t, ctrl.Options{
		Cache:    cacheOptions,
		NewCache: o.newCache,
		Client:   controller.ClientOptions(),
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			inner, err := client.New(config, options)
			if err != nil {
				return nil, err
			}
			op.client = faults.New(t, inner, o.plan)
			return op.client, nil
		},
	})
	provider := &dns.Provider{Endpoint: server.URL, Secret: op.secret, Reader: op.mgr.GetClient()}
	op.reconciler = controller.NewReconciler(op.mgr, provider, controller.Options{DirectoryNamespace: op.directory, MaxConcurrentReconciles: 4})
	if !o.manual {
		if err := op.reconciler.SetupWithManager(t.Context(), op.mgr); err != nil {
			t.Fatalf("failed to set up the controller: %v", err)
		}
	}
	testenv.StartManager(t, op.mgr)
	startKubelet(t, op.namespace, o.kubeletDelay)
	return op
}

// startKubelet runs the simulated kubelet for the operator's StatefulSets, in a manager of its
// own: it is another component of the cluster, and its writes are not the operator's.
func startKubelet(t testenv.TB, namespace string, delay time.Duration) {
	t.Helper()
	mgr := env.NewManager(t, ctrl.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}}})
	sim := &kubelet.Simulator{
		Client:       mgr.GetClient(),
		ReplicaDelay: delay,
		Selector:     labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy}),
	}
	if err := sim.SetupWithManager(mgr); err != nil {
		t.Fatalf("failed to set up the kubelet simulator: %v", err)
	}
	testenv.StartManager(t, mgr)
}

// writeToken creates or updates the Secret with the DNS token.
func (op *operator) writeToken(t testenv.TB, token string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: op.secret.Name, Namespace: op.secret.Namespace}}
	_, err := ctrl.CreateOrUpdate(t.Context(), env.Client(), secret, func() error {
		secret.Data = map[string][]byte{dns.TokenKey: []byte(token)}
		return nil
	})
	if err != nil {
		t.Fatalf("failed to write the DNS credentials: %v", err)
	}
}

// newCluster returns a Cluster of three replicas in the operator's namespace.
func (op *operator) newCluster(name string) *appsv1alpha1.Cluster {
	return &appsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: op.namespace, Labels: map[string]string{operatorLabel: op.namespace}},
		Spec: appsv1alpha1.ClusterSpec{
			Replicas: 3,
			Version:  "1.4.2",
			DNSName:  name + ".clusters.example.com",
			Config:   map[string]string{"log-level": "info"},
		},
	}
}

// create creates cluster and waits until the operator's cache has seen it.
func (op *operator) create(t testenv.TB, cluster *appsv1alpha1.Cluster) {
	t.Helper()
	if err := env.CreateAndWait(t.Context(), cluster, op.mgr.GetCache()); err != nil {
		t.Fatalf("failed to create Cluster %s: %v", cluster.Name, err)
	}
}

// record returns the DNS record called name, or false.
func (op *operator) record(name string) (clouddns.Record, bool) {
	for _, r := range op.dns.Records() {
		if r.Name == name {
			return r, true
		}
	}
	return clouddns.Record{}, false
}

// directoryEntry returns the key of cluster's entry in the directory namespace.
func (op *operator) directoryEntry(cluster *appsv1alpha1.Cluster) client.ObjectKey {
	return client.ObjectKey{Namespace: op.directory, Name: cluster.Namespace + "." + cluster.Name}
}

// scale sets the replicas of cluster through the API server, as kubectl scale would, and
// returns the new generation.
func scale(t testenv.TB, cluster *appsv1alpha1.Cluster, replicas int32) int64 {
	t.Helper()
	before := cluster.DeepCopy()
	cluster.Spec.Replicas = replicas
	if err := env.Client().Patch(t.Context(), cluster, client.MergeFrom(before)); err != nil {
		t.Fatalf("failed to scale Cluster %s: %v", cluster.Name, err)
	}
	return cluster.Generation
}
