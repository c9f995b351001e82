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

// Package matchers provides gomega matchers for Kubernetes objects: status conditions
// (metav1.Condition), readiness as kstatus and `kubectl wait` see it, finalizers, ownership (by
// owner reference or by the tracking labels of package ownership) and deletion; and for what a
// reconcile returned.
//
// They work on any object whose conditions the conditions package can read: a type with a
// GetConditions method ([conditions.Getter]), an *unstructured.Unstructured with
// status.conditions, and, for the condition matchers, a bare []metav1.Condition. They do not
// depend on cluster-api or Flux API types.
//
//	g.Expect(cluster).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionTrue, matchers.CurrentGeneration{}))
//	g.Expect(cluster).To(matchers.BeReady())
//	g.Expect(cluster).To(matchers.BeCompliant())
//	g.Expect(configMap).To(matchers.BeControlledBy(cluster))
//	g.Eventually(cluster).WithTimeout(30 * time.Second).Should(matchers.BeGone(k8sClient))
//
// The result matchers assert on what one reconcile returned, a reconciletest.Step (from a
// reconciletest.Harness, or a Recorder of a controller in a manager): [BeDone], [BeRequeued],
// [BeRequeuedAfter], [BeTerminal] and [HaveFailed].
//
//	g.Expect(h.Reconcile(t, req)).To(matchers.BeRequeuedAfter(time.Minute))
//
// # Failure messages
//
// A failure says what was expected, what differs, and shows the object's conditions as a table,
// so a failed test explains itself without another run:
//
//	Expected Widget default/w (generation 2, status.observedGeneration 2) to have condition Ready=True
//	but Ready is False (QuotaExceeded: cpu quota exceeded)
//	Conditions of Widget default/w (generation 2, status.observedGeneration 2):
//	  TYPE         STATUS  REASON         OBSERVED  LAST TRANSITION       MESSAGE
//	  Ready        False   QuotaExceeded  2         2026-01-02T03:04:05Z  cpu quota exceeded
//	  Reconciling  True    Progressing    2         2026-01-02T03:04:05Z  waiting for quota
//
// # Polling
//
// The matchers look at the value they are given. With Eventually, give them a function that
// reads the object, or use [BeGone], which reads through a client itself:
//
//	g.Eventually(func(g Gomega) {
//		g.Expect(c.Get(ctx, key, cluster)).To(Succeed())
//		g.Expect(cluster).To(matchers.BeReady())
//	}).WithTimeout(30 * time.Second).Should(Succeed())
//
// # Ginkgo
//
// The matchers are plain gomega matchers: in a Ginkgo suite, use them with Ginkgo's Expect and
// Eventually as with any other matcher, nothing to adapt:
//
//	Eventually(func(g Gomega) {
//		g.Expect(k8sClient.Get(ctx, key, cluster)).To(Succeed())
//		g.Expect(cluster).To(matchers.BeReady())
//	}).Should(Succeed())
//
// Use these matchers in tests only; production code reads conditions with the conditions
// package.
//
// The [testing guide] shows where the matchers fit among unit, envtest and end-to-end tests.
//
// [testing guide]: https://github.com/tenon-dev/tenon/blob/main/docs/testing.md
package matchers
