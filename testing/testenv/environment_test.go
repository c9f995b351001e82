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
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

// env is shared by the tests of this package, as the package documentation recommends, and by
// the examples of package testenv_test (see SharedEnvironment). It is created here rather than in
// TestMain so that the examples' package can take the pointer when it is initialized.
var env = New(Options{
	CRDDirectoryPaths:     []string{testtypes.CRDDirectory(), DiskCRDDirectory},
	WebhookDirectoryPaths: []string{DiskWebhookDirectory},
	Scheme:                testScheme(),
	GarbageCollector:      true,
})

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(testtypes.AddToScheme(s))
	utilruntime.Must(AddDisksToScheme(s))
	return s
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnvVar) != "" {
		// A helper process of TestNoProcessOutlivesACrashedTestBinary starts its own environment.
		os.Exit(m.Run())
	}
	os.Exit(env.Run(m))
}

// SharedEnvironment returns the environment the tests of this package share. The examples, in
// package testenv_test, run in the same test binary after the tests, while the environment runs,
// and use it as a user's tests use the variable their TestMain sets. It exists only in this
// package's tests.
func SharedEnvironment() *Environment { return env }

func TestGarbageCollectorDeletesDependentsOfADeletedOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)

	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "child", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: testtypes.GroupVersion.String(), Kind: "Widget", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true),
		}},
	}}
	g.Expect(c.Create(ctx, child)).To(Succeed())
	unowned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unowned", Namespace: ns}}
	g.Expect(c.Create(ctx, unowned)).To(Succeed())

	g.Expect(c.Delete(ctx, owner)).To(Succeed())

	g.Eventually(func() error {
		return c.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
	}).WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(unowned), &corev1.ConfigMap{})).To(Succeed(),
		"the collector must delete only dependents of the deleted owner")
}

func TestGarbageCollectorForegroundDeletionRemovesOwnerAndDependents(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "child", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			BlockOwnerDeletion: ptr.To(true),
		}},
	}}
	g.Expect(c.Create(ctx, child)).To(Succeed())

	g.Expect(c.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())

	for _, obj := range []client.Object{child, owner} {
		g.Eventually(func() error {
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		}).WithTimeout(30*time.Second).Should(Satisfy(apierrors.IsNotFound), "%T %s", obj, obj.GetName())
	}
}

func TestDeletedNamespaceFinishesTerminating(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "terminating-"}}
	g.Expect(c.Create(ctx, ns)).To(Succeed())
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns.Name}},
		&testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: ns.Name}},
	} {
		g.Expect(c.Create(ctx, obj)).To(Succeed())
	}

	g.Expect(c.Delete(ctx, ns)).To(Succeed())

	g.Eventually(func() error {
		return c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
	}).WithTimeout(60 * time.Second).Should(Satisfy(apierrors.IsNotFound))
}

func TestMissingBinariesErrorNamesTheCommandToRun(t *testing.T) {
	tests := []struct {
		name             string
		assets           string // KUBEBUILDER_ASSETS; empty: unset
		explicit         bool   // pass the directory as Options.BinaryAssetsDirectory instead
		garbageCollector bool
		wantInMessage    []string
	}{
		{
			name:          "an empty KUBEBUILDER_ASSETS directory",
			assets:        t.TempDir(),
			wantInMessage: []string{"go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest", "no etcd, kube-apiserver", assetsEnvVar},
		},
		{
			name:          "an empty explicit directory",
			explicit:      true,
			wantInMessage: []string{"go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest", "no etcd, kube-apiserver"},
		},
		{
			name:             "a directory without kube-controller-manager when the garbage collector is on",
			assets:           onlyEtcdAndAPIServer(t),
			garbageCollector: true,
			wantInMessage:    []string{"has no kube-controller-manager", "setup-envtest does not download", "cmd/build-envtest -dir <its directory>` builds only that one"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			opts := Options{GarbageCollector: tt.garbageCollector}
			if tt.explicit {
				opts.BinaryAssetsDirectory = t.TempDir()
			} else {
				t.Setenv(assetsEnvVar, tt.assets)
			}

			err := New(opts).Start()

			g.Expect(err).To(MatchError(ErrBinariesNotFound))
			for _, want := range tt.wantInMessage {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
			g.Expect(err.Error()).NotTo(ContainSubstring("fork/exec"))
		})
	}
}

// onlyEtcdAndAPIServer returns a directory with executable files named etcd and kube-apiserver.
func onlyEtcdAndAPIServer(t *testing.T) string {
	dir := t.TempDir()
	for _, name := range []string{etcdBinary, apiServerBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUseExistingClusterDoesNotPointTheEnvironmentAtTheKubeconfigsCluster(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: someone, cluster: {server: "https://192.0.2.1:6443"}}]
users: [{name: someone, user: {token: secret}}]
contexts: [{name: someone, context: {cluster: someone, user: someone}}]
current-context: someone
`), 0o600)).To(Succeed())
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	t.Setenv("KUBECONFIG", kubeconfig)

	e := New(Options{})
	g.Expect(e.Start()).To(Succeed())
	t.Cleanup(func() { g.Expect(e.Stop()).To(Succeed()) })

	g.Expect(e.Config().Host).NotTo(ContainSubstring("192.0.2.1"), "the environment must run its own control plane")
	g.Expect(e.Client().List(t.Context(), &corev1.NamespaceList{})).To(Succeed())
}

func TestMissingCRDPathIsAnErrorBeforeAnythingStarts(t *testing.T) {
	g := NewWithT(t)
	missing := filepath.Join(t.TempDir(), "config", "crd", "bases")

	e := New(Options{CRDDirectoryPaths: []string{missing}})
	err := e.Start()

	g.Expect(err).To(MatchError(ContainSubstring(missing)))
	g.Expect(err).To(MatchError(ContainSubstring("does not exist")))
	g.Expect(e.env).To(BeNil(), "no control plane may be started for a bad CRD path")
}

func TestEachTestGetsItsOwnNamespace(t *testing.T) {
	var first, second string
	t.Run("first", func(t *testing.T) {
		first = env.Namespace(t)
		g := NewWithT(t)
		g.Expect(env.Client().Create(t.Context(), &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: first}})).To(Succeed())
	})
	t.Run("second", func(t *testing.T) {
		second = env.Namespace(t)
		g := NewWithT(t)
		var widgets testtypes.WidgetList
		g.Expect(env.Client().List(t.Context(), &widgets, client.InNamespace(second))).To(Succeed())
		g.Expect(widgets.Items).To(BeEmpty(), "a test must not see another test's objects")
	})

	g := NewWithT(t)
	g.Expect(first).To(HavePrefix("testeachtestgetsitsownnamespace-first-"))
	g.Expect(second).NotTo(Equal(first))
	// The first subtest has ended, so its namespace is being deleted (or already gone).
	var ns corev1.Namespace
	err := env.Client().Get(t.Context(), client.ObjectKey{Name: first}, &ns)
	if err == nil {
		g.Expect(ns.DeletionTimestamp).NotTo(BeNil(), "namespace %s must be deleted when its test ends", first)
	} else {
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "unexpected error: %v", err)
	}
}

func TestNamespacePrefix(t *testing.T) {
	tests := []struct {
		testName string
		want     string
	}{
		{"TestSimple", "testsimple-"},
		{"TestA/sub_test_with spaces", "testa-sub-test-with-spaces-"},
		{"Test/__weird__//", "test-weird-"},
		{"123", "test-123-"},
		{"TestAVeryLongNameThatGoesOnAndOnBeyondFortyCharacters/AndMore", "testaverylongnamethatgoesonandonbeyondfo-"},
	}
	for _, tt := range tests {
		t.Run(tt.testName, func(t *testing.T) {
			NewWithT(t).Expect(namespacePrefix(tt.testName)).To(Equal(tt.want))
		})
	}
}

// startCache starts an informer cache on the environment for the duration of the test.
func startCache(t *testing.T) cache.Cache {
	t.Helper()
	c, err := cache.New(env.Config(), cache.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	// Informers start lazily; ask for Widgets now so the first Get below is served from a watch.
	if _, err := c.GetInformer(ctx, &testtypes.Widget{}); err != nil {
		t.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return c
}

func TestCreateAndWaitReturnsOnceTheCacheHasTheObject(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	cached := startCache(t)

	for i := range 20 {
		w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: ns}, Spec: testtypes.WidgetSpec{Replicas: ptr.To(int32(i))}}
		g.Expect(env.CreateAndWait(ctx, w, cached)).To(Succeed())

		// No Eventually: the cache must already have it.
		var seen testtypes.Widget
		g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(w), &seen)).To(Succeed())
		g.Expect(seen.ResourceVersion).To(Equal(w.ResourceVersion))
		g.Expect(seen.Spec.Replicas).To(HaveValue(BeEquivalentTo(i)))
	}
}

func TestWaitUntilSeenFailsWithWhatTheReaderLastSaw(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	cached := startCache(t)
	ghost := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns, ResourceVersion: "1"}}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := env.WaitUntilSeen(ctx, cached, ghost)

	g.Expect(err).To(MatchError(ContainSubstring("last seen: not found")))
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "got %v", err)
}

func TestDeleteAndWaitStopsAtFinalizersThenAtGone(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	cached := startCache(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{
		Name: "held", Namespace: ns, Finalizers: []string{"test.tenon.dev/hold"},
	}}
	g.Expect(env.CreateAndWait(ctx, w, cached)).To(Succeed())

	g.Expect(env.DeleteAndWait(ctx, w, cached)).To(Succeed())

	// Held by its finalizer: obj reflects the terminating state the cache returned.
	g.Expect(w.DeletionTimestamp).NotTo(BeNil())
	g.Expect(w.Finalizers).To(ConsistOf("test.tenon.dev/hold"))
	var seen testtypes.Widget
	g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(w), &seen)).To(Succeed())
	g.Expect(seen.DeletionTimestamp).NotTo(BeNil())

	w.Finalizers = nil
	g.Expect(env.Client().Update(ctx, w)).To(Succeed())
	g.Expect(env.DeleteAndWait(ctx, w, cached)).To(Succeed())

	g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(w), &seen)).To(Satisfy(apierrors.IsNotFound),
		"after DeleteAndWait the cache must no longer have the object")
}

func TestDeleteAndWaitOfAnObjectThatIsAlreadyGone(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	cached := startCache(t)

	err := env.DeleteAndWait(t.Context(), &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "never-created", Namespace: ns}}, cached)

	g.Expect(err).NotTo(HaveOccurred())
}

// envtest's default Service range is a /24; an operator test at scale needs more than 254
// Services with cluster IPs.
func TestServicesGetClusterIPsBeyondEnvtestsDefaultRange(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	for i := range 260 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		g.Expect(env.Client().Create(ctx, svc)).To(Succeed(), "Service %d", i)
		g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	}
}

// A cluster-scoped child tracked for an owner in a test's namespace outlived the test, and every
// later test's manager saw it (issue 26, item 10).
func TestNamespaceCleanupDeletesTheClusterScopedObjectsTrackedForItsOwners(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	running := env.Namespace(t)
	var left, othersChild *testtypes.Fixture

	t.Run("a test that leaves a tracked cluster-scoped child behind", func(t *testing.T) {
		g := NewWithT(t)
		ns := env.Namespace(t)
		owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner", UID: "uid-owner"}}
		left = &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{GenerateName: "left-"}}
		_, _, err := ownership.Set(owner, left, env.Scheme())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client().Create(ctx, left)).To(Succeed())

		othersOwner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: running, Name: "owner", UID: "uid-other"}}
		othersChild = &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{GenerateName: "running-"}}
		_, _, err = ownership.Set(othersOwner, othersChild, env.Scheme())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client().Create(ctx, othersChild)).To(Succeed())
	})

	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(left), &testtypes.Fixture{})).To(Satisfy(apierrors.IsNotFound),
		"the child tracked for an owner in the finished test's namespace is deleted with the namespace")
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(othersChild), &testtypes.Fixture{})).To(Succeed(),
		"the child of an owner in a namespace still in use is left")
	g.Expect(env.Client().Delete(ctx, othersChild)).To(Succeed())
}
