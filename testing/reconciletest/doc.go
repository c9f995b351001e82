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

// Package reconciletest drives a reconcile.Reconciler directly, one reconcile at a time, and
// proves the properties every controller should have: it reaches a stable state, a reconcile of
// an object that is already as desired writes nothing, and it recovers from API failures. For a
// controller that runs in a manager, [Record] shows what it returned to controller-runtime.
//
// "Is your reconciler idempotent? Genuinely, not just usually." With a [Harness], that is one
// line:
//
//	c := faults.Record(fake.NewClientBuilder().WithObjects(cluster).WithStatusSubresource(cluster).Build())
//	h := &reconciletest.Harness{Reconciler: &ClusterReconciler{Client: c}, Client: c}
//	h.AssertIdempotent(t, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cluster)})
//
// [Harness.AssertIdempotent] reconciles until the reconciler finishes (returns no error, and
// either no requeue or a poll), then once more, and fails the test when that reconcile sends a
// write request. The failure lists each write, the patch it sent, and a diff of what it changed,
// such as the annotation a reconciler bumps or the status it rewrites on every pass.
//
// The last reconcile runs in a later second than the end of the one before (the harness waits
// for the next second, less than one), so a write computed from the time, such as a status that
// says "synced at 10:04:05", shows up as the write it makes on every pass. A reconciler that
// reads the time from a clock the test controls gets it as [Harness.Clock], which the harness
// moves forward too.
//
// # Stable reconciles and requeues
//
// A reconcile is stable when it returns no error, sends no write request (the harness counts
// them through a recording [faults.Client]), and asks for no requeue the harness waits for: see
// [Step.Stable]. A reconciler that writes nothing and polls at steady state, as requeue.Poll
// does, is stable.
//
// Requeues are honoured with a bounded real wait: a RequeueAfter of at most [Harness.MaxWait]
// (10 s by default) is waited out and the object reconciled again, as the controller would, so a
// reconciler that provisions something asynchronously is driven to Ready; a longer RequeueAfter
// counts as a poll, and is not waited for. [Harness.ReconcileUntilStable] reconciles until a
// reconcile is stable, and returns how many that took.
//
// # Steps and results
//
// [Harness.Reconcile] runs one reconcile, without waiting for anything, and returns a [Step]:
// its result, its error and the calls it made. The result matchers of package testing/matchers
// (BeDone, BeRequeued, BeRequeuedAfter, BeTerminal and HaveFailed) assert on it:
//
//	g.Expect(h.Reconcile(t, req)).To(matchers.BeRequeuedAfter(30 * time.Second))
//
// # Faults
//
// The harness sees the reconciler's requests through a [faults.Client], which can also inject
// failures. Under a fault plan, [Harness.ReconcileUntilStable] proves that the reconciler
// recovers from every fault, and logs how many reconciles that took and the plan's seed:
//
//	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{
//		{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Subresource: "status"}, Nth: 1, Fault: faults.Conflict},
//		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.InternalError},
//	}})
//	h := &reconciletest.Harness{Reconciler: r, Client: c, MaxSteps: 20}
//	h.ReconcileUntilStable(t, req)
//
// # envtest and caches
//
// The same tests run against envtest. When the reconciler reads through a manager's cache, set
// [Harness.Cache]: after each reconcile the harness waits until the cache returns every object
// the reconcile wrote at the written resourceVersion, so the next reconcile does not act on a
// stale read, which would make the test flaky or hide real bugs:
//
//	mgr := env.NewManager(t, ctrl.Options{}, ns)
//	testenv.StartManager(t, mgr)
//	c := faults.Record(mgr.GetClient())
//	h := &reconciletest.Harness{Reconciler: &ClusterReconciler{Client: c}, Client: c, Cache: mgr.GetCache()}
//
// # A controller in a manager
//
// The harness runs no controller. To see what a controller that runs in a manager returns to
// controller-runtime (errors, terminal errors, requeues), without reading logs or global
// metrics, register its reconciler wrapped by [Record], and assert on the [Recorder]'s steps:
//
//	rec := reconciletest.Record(&ClusterReconciler{Client: mgr.GetClient()})
//	err := ctrl.NewControllerManagedBy(mgr).For(&v1.Cluster{}).Complete(rec)
//	// ... start the manager, create a Cluster ...
//	g.Eventually(rec.Last).WithArguments(req).Should(matchers.BeRequeuedAfter(5 * time.Minute))
//	g.Expect(rec.Steps()).NotTo(ContainElement(matchers.HaveFailed()))
//
// # Ginkgo
//
// The harness takes a [TB], which Ginkgo v2's GinkgoT() satisfies as *testing.T does; GinkgoTB()
// is not needed: h.AssertIdempotent(GinkgoT(), req) fails the spec with the same message. [TB]
// is the same type as faults.TB and testenv.TB, so a helper of your suite that takes one passes
// its t on to the harness. The step matchers are gomega matchers, for Ginkgo's Expect and
// Eventually.
//
// # What the harness does not do
//
// It runs no controller: watches, predicates, event handlers and the work queue are not
// involved, so it cannot show that a write triggers another reconcile, or that a requeue comes
// on time. Writes made by others during a test (the test's own client) are not waited for; use
// testenv's CreateAndWait and WaitUntilSeen for them. Its waits are real: a test that drives a
// reconciler through requeues takes as long as they say, up to MaxWait each, and
// AssertIdempotent takes up to a second more. A time written to a coarser precision than the
// second, by the real clock, shows only when the last reconcile happens to cross its boundary.
//
// The [testing guide] and the [reconciliation guide] show the harness in context.
//
// [testing guide]: https://github.com/tenon-dev/tenon/blob/main/docs/testing.md
// [reconciliation guide]: https://github.com/tenon-dev/tenon/blob/main/docs/reconciliation.md
package reconciletest
