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

// Package testenv runs a real Kubernetes control plane (etcd and kube-apiserver, through
// controller-runtime's envtest) for the tests of one Go package, with what plain envtest lacks:
// a garbage collector, webhooks served by the tests' managers, per-test namespaces, cache-aware
// waits, users with exactly the permissions of an operator's RBAC manifests, API server restarts
// that clients survive, and a guarantee that no control-plane process outlives the tests.
//
// Use it for behaviour that only a real API server has: metadata.generation, resourceVersion
// conflicts, the status subresource, server-side apply, finalizers, admission validation (OpenAPI,
// CEL and webhooks), conversion between CRD versions, RBAC and garbage collection. For pure logic, the fake client
// (sigs.k8s.io/controller-runtime/pkg/client/fake) is faster; tenon's guide on testing says which
// to pick when.
//
// # Starting the environment
//
// Start one environment per test package, in TestMain:
//
//	var env *testenv.Environment
//
//	func TestMain(m *testing.M) {
//		env = testenv.New(testenv.Options{
//			CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")},
//			Scheme:            scheme,
//			GarbageCollector:  true,
//		})
//		os.Exit(env.Run(m))
//	}
//
// The binaries are looked up in [Options.BinaryAssetsDirectory], then KUBEBUILDER_ASSETS, then
// setup-envtest's standard directory. When they are missing, Run fails before any test with a
// message that says how to get them. tenon's command build-envtest builds them from Go modules,
// without the download setup-envtest needs, from any module that requires tenon:
//
//	go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest
//
// setup-envtest never provides kube-controller-manager, which the garbage collector runs;
// after `setup-envtest use`, the same command builds only that one.
//
// etcd and kube-apiserver run in their own process groups, so a test binary that panics or is
// killed would normally leave them running. The environment starts a small watchdog process
// that kills them (and kube-controller-manager) as soon as the test binary exits, whatever the
// cause, and removes the temporary files. On systems without /proc the watchdog cannot find the
// processes, and only [Environment.Stop] stops them.
//
// # Garbage collection
//
// envtest runs no controllers, so ownerReferences are never followed and deleted namespaces stay
// Terminating forever. With [Options.GarbageCollector], the environment also runs
// kube-controller-manager with only its garbage-collector and namespace controllers; Start
// returns once the collector has proved it works on a probe object.
//
// kube-apiserver allocates Services' cluster IPs from 10.0.0.0/16, not from envtest's /24, so a
// test may create thousands of Services rather than 254.
//
// # Tests
//
// Each test takes a namespace of its own from [Environment.Namespace], which is deleted when the
// test ends. [Environment.Client] reads and writes directly, without a cache. Controllers read
// through a cache instead, so a test that creates an object and then reconciles must wait until
// the cache has seen it: [Environment.CreateAndWait], [Environment.DeleteAndWait] and
// [Environment.WaitUntilSeen] do that. [Environment.NewManager] and [StartManager] run
// controllers for the duration of one test.
//
// Tests that run in parallel share the environment, so a manager sees every test's objects,
// and its controllers reconcile them. Give NewManager the test's namespace, and its cache holds
// only that namespace's objects (and cluster-scoped ones; the cluster-scoped children that
// tenon's ownership package tracks for a test's objects are deleted with the test's namespace,
// and ownership.EnqueueOwner never hands a manager an owner outside its namespaces):
//
//	ns := env.Namespace(t)
//	mgr := env.NewManager(t, ctrl.Options{}, ns)
//	// ... register the controller under test with mgr ...
//	testenv.StartManager(t, mgr)
//
// # Webhooks
//
// With [Options.WebhookDirectoryPaths], the environment installs the validating and mutating
// webhook configurations of those directories (kubebuilder's config/webhook), pointed at a
// webhook server of its own; a CRD whose kind the scheme can convert (a hub version and versions
// that convert to it) gets a conversion webhook pointed there too. A manager from
// [Environment.NewManager] serves the webhooks registered with it, as in production:
//
//	mgr := env.NewManager(t, ctrl.Options{}, ns)
//	// ... register the webhooks with mgr (ctrl.NewWebhookManagedBy), as cmd/main.go does ...
//	testenv.StartManager(t, mgr)
//
// The environment's server hands each request to the running manager whose namespaces hold the
// object, so tests that run in parallel may each run the same webhooks with managers of their
// own. While no manager serves a webhook, the API server's call fails and the webhook's
// failurePolicy decides, as on a cluster whose webhook is down.
//
// # RBAC-limited users
//
// [Environment.Client] and [Environment.NewManager] act as a cluster administrator, so a
// controller whose RBAC markers miss a verb passes every test and fails in production.
// [Environment.NewUser] creates a user bound to exactly the ClusterRoles and Roles of given YAML
// files, such as the config/rbac/role.yaml that controller-gen generates from the markers;
// [User.NewManager] runs the controller as that user, and a missing verb fails with the
// Forbidden error a real cluster returns:
//
//	u := env.NewUser(t, "operator", testenv.RoleFiles{"../../config/rbac/role.yaml"}, testenv.RoleNamespace(ns))
//	mgr := u.NewManager(t, ctrl.Options{})
//
// # Ginkgo
//
// The per-test helpers take a [TB], which *testing.T and Ginkgo v2's GinkgoT() both satisfy;
// Ginkgo's GinkgoTB() wrapper is not needed. [TB] is the same type as faults.TB and
// reconciletest.TB, so a helper of your suite that takes a testenv.TB passes its t on to
// faults.New and the reconciletest harness. The helpers' cleanups go through GinkgoT().Cleanup,
// that is DeferCleanup, so a namespace or manager taken in a BeforeEach or an It lives until the
// spec ends. A kubebuilder-style suite starts the environment in BeforeSuite instead of TestMain:
//
//	var env *testenv.Environment
//
//	func TestControllers(t *testing.T) {
//		RegisterFailHandler(Fail)
//		RunSpecs(t, "Controller Suite")
//	}
//
//	var _ = BeforeSuite(func() {
//		env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
//		Expect(env.Start()).To(Succeed())
//		DeferCleanup(env.Stop)
//	})
//
//	var _ = Describe("Cluster controller", func() {
//		var mgr manager.Manager
//		BeforeEach(func() {
//			ns := env.Namespace(GinkgoT())
//			mgr = env.NewManager(GinkgoT(), ctrl.Options{}, ns)
//			// ... register the controller under test with mgr ...
//			testenv.StartManager(GinkgoT(), mgr)
//		})
//		// ...
//	})
//
// GinkgoT() fails a spec at once, also for the errors a cleanup reports, where testing.T would
// let the test go on; nothing else differs. Under `ginkgo -p`, each process starts an
// environment of its own.
//
// # Counting requests as the API server saw them
//
// A counter inside a client sees only that client's requests. With [Options.AuditLog],
// kube-apiserver records every request it answers (who sent it, the verb, the object and the
// status code) and [Environment.AuditLog] reads the record: the witness for a test that claims an
// operator sends no writes at steady state, or a benchmark that counts them, including the
// requests of client-go's event broadcaster and retries no client-side counter sees. Take a
// [AuditMark] before and after what is measured:
//
//	before, _ := env.AuditLog().Mark(ctx)
//	// ... let the operator settle ...
//	events, _ := env.AuditLog().Since(before)
//	g.Expect(events.ByUser(u.Name()).Writes()).To(BeEmpty())
//
// Give the operator a user of its own ([Environment.NewUser]) to tell its requests apart from the
// test's and the API server's own.
//
// # Restarting the API server
//
// An operator must survive its API server going away: upgrades and control-plane failures restart
// kube-apiserver under it, and its watches, caches and requests must recover without the operator
// being restarted. [Environment.RestartAPIServer] restarts kube-apiserver while etcd, and with it
// every object, keeps running; [Environment.StopAPIServer] and [Environment.StartAPIServer] do the
// same in two steps, so that a test can act while the API server is down. The new process has the
// same flags, certificates and port, so the clients, users and managers created before it keep
// working with the configuration they have:
//
//	testenv.StartManager(t, mgr)
//	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())
//	g.Expect(env.CreateAndWait(ctx, obj, mgr.GetCache())).To(Succeed())
//
// Clients reconnect on their own schedule: client-go retries a broken watch after a delay that
// grows with each failure, up to a minute, and is reset after two minutes without one. A cache
// catches up within a second or two of a first restart, and later after several in a row, so wait
// for it with [Environment.CreateAndWait] or [Environment.WaitUntilSeen], or with Eventually and a
// generous timeout. The garbage collector reconnects the same way; StartAPIServer waits until it
// works again.
//
// [Environment.CompactEtcd] compacts etcd's history, as kube-apiserver does every five minutes in
// a real cluster; a restart after it makes every watch a client resumes from an older
// resourceVersion fail with 410 Gone, so that its informers list again, as after a control-plane
// upgrade or a long partition.
//
// Every test that uses the environment sees the restart. Restart in tests that do not run in
// parallel with others, or give them an environment of their own (New, Start, and Stop in
// t.Cleanup). Restarting needs /proc, which Linux has; elsewhere it fails with
// [ErrRestartNotSupported].
//
// The [testing guide] compares the fake client, envtest and end-to-end tests, and lists what
// envtest cannot do.
//
// [testing guide]: https://github.com/tenon-dev/tenon/blob/main/docs/testing.md
package testenv
