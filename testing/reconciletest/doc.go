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
// an object that is already as desired writes nothing, and it recovers from API failures.
//
// "Is your reconciler idempotent? Genuinely, not just usually." With a [Harness], that is one
// line:
//
//	c := faults.Record(fake.NewClientBuilder().WithObjects(cluster).WithStatusSubresource(cluster).Build())
//	h := &reconciletest.Harness{Reconciler: &ClusterReconciler{Client: c}, Client: c}
//	h.AssertIdempotent(t, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cluster)})
//
// [Harness.AssertIdempotent] reconciles until the reconciler returns neither an error nor a
// requeue, then once more, and fails the test when that reconcile sends a write request. The
// failure lists each write, the patch it sent, and a diff of what it changed, such as the
// annotation a reconciler bumps or the status it rewrites on every pass.
//
// # Steps and results
//
// [Harness.Reconcile] runs one reconcile and returns a [Step]: its result, its error and the
// calls it made. [BeDone], [Requeue], [RequeueAfter], [BeTerminal] and [HaveFailed] assert on it:
//
//	g.Expect(h.Reconcile(t, req)).To(reconciletest.RequeueAfter(30 * time.Second))
//
// [Harness.ReconcileUntilStable] returns how many reconciles it took. Requeues are never waited
// for: the harness reconciles again at once, so tests do not depend on time.
//
// # Faults
//
// The harness sees the reconciler's requests through a [faults.Client], which can also inject
// failures. [Harness.Converge] reconciles under the client's fault plan until a reconcile is
// stable and writes nothing, and reports how many reconciles that took and the plan's seed:
//
//	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{
//		{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Subresource: "status"}, Nth: 1, Fault: faults.Conflict},
//		{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.InternalError},
//	}})
//	h := &reconciletest.Harness{Reconciler: r, Client: c, MaxSteps: 20}
//	h.Converge(t, req)
//
// # envtest and caches
//
// The same tests run against envtest. When the reconciler reads through a manager's cache, set
// [Harness.Cache]: after each reconcile the harness waits until the cache returns every object
// the reconcile wrote at the written resourceVersion, so the next reconcile does not act on a
// stale read, which would make the test flaky or hide real bugs:
//
//	mgr := env.NewManager(t, ctrl.Options{})
//	testenv.StartManager(t, mgr)
//	c := faults.Record(mgr.GetClient())
//	h := &reconciletest.Harness{Reconciler: &ClusterReconciler{Client: c}, Client: c, Cache: mgr.GetCache()}
//
// # What the harness does not do
//
// It runs no controller: watches, predicates, event handlers and the work queue are not
// involved, so it cannot show that a write triggers another reconcile, or that a requeue comes
// on time. Writes made by others during a test (the test's own client) are not waited for; use
// testenv's CreateAndWait and WaitUntilSeen for them.
//
// The [testing guide] and the [reconciliation guide] show the harness in context.
//
// [testing guide]: https://github.com/tenon-dev/tenon/blob/main/docs/testing.md
// [reconciliation guide]: https://github.com/tenon-dev/tenon/blob/main/docs/reconciliation.md
package reconciletest
