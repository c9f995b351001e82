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

// Package faults injects scripted API failures into a controller-runtime client and records
// every call it makes, so that tests can prove a controller survives conflicts, server errors,
// throttling, timeouts and slow responses, and can count the requests it sends.
//
// It wraps any client, through controller-runtime's interceptor: the fake client for fast unit
// tests, a client of an envtest or real API server, or a manager's client. The same plan
// therefore runs on both, and a behaviour found with the fake client can be confirmed against a
// real API server without rewriting the test.
//
// # Fault plans
//
// A [Plan] is data: a list of [Rule] values, each a [Match] that selects calls (by verb, kind,
// namespace, name and subresource), conditions that pick which of those calls it fires on (the
// Nth, every Nth, after a given verb on the same object, with a probability, at most N times), and
// what it does (an API error from [Fault], any error, latency, or a lost response: the call goes
// through but the caller sees an error). Some plans:
//
//	// Conflict on the 2nd status patch of Widget "w".
//	{Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Kind: "Widget", Name: "w", Subresource: "status"},
//		Nth: 2, Fault: faults.Conflict}
//	// 5% of writes return 500.
//	{Match: faults.Match{Verbs: faults.Writes}, Probability: 0.05, Fault: faults.InternalError}
//	// NotFound on the first Get after a Delete.
//	{Match: faults.Match{Verbs: faults.Verbs{faults.Get}}, After: faults.Delete, Nth: 1, Fault: faults.NotFound}
//	// 50 ms latency on every List.
//	{Match: faults.Match{Verbs: faults.Verbs{faults.List}}, Latency: 50 * time.Millisecond}
//	// Every 10th update times out, after the API server applied it.
//	{Match: faults.Match{Verbs: faults.Verbs{faults.Update}}, Every: 10, Fault: faults.Timeout, LostResponse: true}
//
// Faults are built as the API server builds them, with the call's resource and name, so
// apierrors.IsConflict, apierrors.SuggestsClientDelay and controller-runtime behave as on a
// cluster.
//
// # Replaying a run
//
// Random choices come from [Plan.Seed]. The draw for the Nth call a rule counts depends only on
// the seed, the rule and N, so a test that makes its calls in the same order sees the same faults
// again, and adding a rule does not change the choices of the others. A plan without a seed gets
// a random one; [New] logs it when the test fails, and TENON_FAULTS_SEED replays it:
//
//	TENON_FAULTS_SEED=8411209 go test -run TestReconcileUnderFaults ./...
//
// # Recording
//
// Every call is recorded as a [Call]: verb, kind, object key, subresource, outcome, error, the
// resourceVersion and a copy of the object a write returned. [Client.Count], [Client.Calls] and
// [Client.Writes] select calls with a [Selector], so a test can assert "exactly one status
// write" as
//
//	g.Expect(c.Count(faults.Writes, faults.Status)).To(Equal(1))
//
// [Record] records without injecting anything, for tests and benchmarks that only count
// requests.
//
// # Faults in a running manager
//
// To run a manager's controllers under a plan, give the manager a client constructor that wraps
// its client; reads the client serves from the cache are then recorded and faulted too:
//
//	var c *faults.Client
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		NewClient: func(config *rest.Config, opts client.Options) (client.Client, error) {
//			inner, err := client.New(config, opts)
//			if err != nil {
//				return nil, err
//			}
//			c, err = faults.Wrap(inner, plan)
//			return c, err
//		},
//	})
//
// # Ginkgo
//
// [New] takes a [TB], which Ginkgo v2's GinkgoT() satisfies as *testing.T does (GinkgoTB() is
// not needed): faults.New(GinkgoT(), c, plan) in a BeforeEach or an It logs the seed when the
// spec fails. [TB] is the same type as testenv.TB and reconciletest.TB, so a helper of your
// suite that takes one passes its t on to New. [Wrap] and [Record] take no test at all.
//
// # What this package cannot do
//
//   - It sees the calls made through the Client, not the requests of informers: a manager's
//     cache lists and watches with its own connection, so faults never reach it, and a read a
//     manager's client serves from its cache is recorded (and can be faulted) as a get or list
//     although no request reached the API server.
//   - An injected 429 or 503 reaches the caller at once. client-go retries real ones that carry a
//     Retry-After, up to ten times, before its caller sees the error; an injected one is what a
//     caller sees once those retries ran out.
//   - Under concurrency, which call is the Nth depends on scheduling; seeded replays are exact
//     only for code that makes its calls in a deterministic order, as a single reconcile does.
//
// The [testing guide] shows where fault plans fit among unit, envtest and end-to-end tests.
//
// [testing guide]: https://github.com/tenon-dev/tenon/blob/main/docs/testing.md
package faults
