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

package chaos

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"

	"github.com/tenon-dev/tenon/conditions"
)

// The two ValidatingAdmissionPolicies of the admission scenario, and the annotation that makes
// the second deny a Cluster's status.
const (
	denyLargePolicy  = "tenon-chaos-deny-large-statefulsets"
	denyStatusPolicy = "tenon-chaos-deny-status"
	denyStatusKey    = "chaos.tenon.dev/deny-status"
	// maxAllowedReplicas is what the first policy lets a StatefulSet have.
	maxAllowedReplicas = 5
	// maxTerminalAttempts bounds the denied applies of a Stalled Cluster's StatefulSet: one per
	// event the Cluster and its children cause, where a loop would send hundreds.
	maxTerminalAttempts = 10
)

// admissionDenials: ValidatingAdmissionPolicies, built into the API server, deny some of the
// operator's writes: the apply of a child (a StatefulSet larger than the policy allows, denied as
// Invalid) and the status patch of a Cluster (denied as Forbidden while an annotation is set).
// Each denied Cluster must say so, or the operator must keep reporting the error; no denial may
// come back as a conflict (which is quiet), and none may be retried faster than its backoff.
// Once the policies go, every Cluster converges.
func admissionDenials(t *testing.T, w *world) *result {
	ctx := t.Context()
	n := w.sizes.AdmissionClusters
	ns := w.namespace(t, "admission")
	w.denyWrites(t, ns)

	log := &writes{}
	p := w.newProxy(t, "admission", w.user.Config(), log)
	w.startOperator(t, "admission", p)
	started := time.Now()
	allowed := w.createClusters(t, ns, "allowed", n, 3)
	large := w.createClusters(t, ns, "large", n, 7)
	var muted []string
	for i := range n {
		c := newCluster(ns, fmt.Sprintf("muted-%d", i), 1)
		c.Annotations = map[string]string{denyStatusKey: "true"}
		if err := w.admin.Create(ctx, c); err != nil {
			t.Fatalf("failed to create Cluster %s: %v", c.Name, err)
		}
		muted = append(muted, c.Name)
	}

	// Every Cluster says what happened to it, as far as the policies let it: the allowed ones are
	// Ready, the large ones Stalled with the API server's reason and the policy's name, and the
	// muted ones, whose status cannot be written, have the operator report the denial as an error.
	var sample, missing string
	if err := poll(ctx, w.sizes.Timeout, func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		missing = ""
		for i := range list.Items {
			c := &list.Items[i]
			switch {
			case slices.Contains(allowed, c.Name):
				if !conditions.IsReady(c) {
					missing = c.Name + " is not Ready"
				}
			case slices.Contains(large, c.Name):
				stalled, ready := conditions.Get(c, conditions.Stalled), conditions.Get(c, conditions.Ready)
				observed, _ := conditions.GetObservedGeneration(c)
				if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != string(metav1.StatusReasonInvalid) ||
					!strings.Contains(stalled.Message, denyLargePolicy) || ready == nil || ready.Status != metav1.ConditionFalse ||
					ready.Reason != stalled.Reason || observed != c.Generation {
					missing = fmt.Sprintf("%s: Stalled %+v, Ready %+v", c.Name, stalled, ready)
					continue
				}
				sample = fmt.Sprintf("Stalled=True %s: %s", stalled.Reason, stalled.Message)
			}
		}
		if missing != "" {
			return false, nil
		}
		for _, name := range muted {
			if reported := w.reportedDenials(ns, name, denyStatusPolicy); reported == 0 {
				missing = name + ": no Reconciler error names the denied status write"
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the Clusters did not report the denials: %v (last: %s)\n%s", err, missing, w.logs.tail(30))
	}
	reported := time.Since(started)

	// The denials are not retried faster than their backoff. A Stalled Cluster is not retried
	// at all until something changes; a Forbidden status write follows controller-runtime's
	// per-object exponential backoff (5ms, doubling), so its attempts grow with the logarithm of
	// the time. A denial relabelled as a conflict would be a quiet requeue, with no Reconciler
	// error (checked above), and the status patches must be answered with the policy's 403.
	elapsed := time.Since(started)
	wedged := 0
	var problems []string
	// The backoff's attempts, plus one reconcile for each event the Cluster's own children cause.
	statusBound := int(math.Ceil(math.Log2(float64(elapsed)/float64(5*time.Millisecond)))) + 10
	attempts := map[string]int{}
	for _, wr := range log.list() {
		if wr.Method != "PATCH" || wr.Status < 400 {
			continue
		}
		for _, name := range large {
			if strings.HasSuffix(wr.Path, "/statefulsets/"+name) {
				attempts[name]++
			}
		}
		for _, name := range muted {
			if strings.HasSuffix(wr.Path, "/clusters/"+name+"/status") {
				attempts[name]++
				if wr.Status != 403 {
					problems = append(problems, fmt.Sprintf("the status patch of %s was answered %d, want the policy's 403", name, wr.Status))
				}
			}
		}
	}
	maxLarge, maxMuted := 0, 0
	for _, name := range large {
		maxLarge = max(maxLarge, attempts[name])
		// One apply per reconcile the Cluster's own events cause (its creation, the children the
		// operator could create, a resync), never a loop.
		if attempts[name] == 0 || attempts[name] > maxTerminalAttempts {
			wedged++
			problems = append(problems, fmt.Sprintf("Cluster %s: %d denied applies of its StatefulSet in %s, want 1 to %d", name, attempts[name], secs(elapsed), maxTerminalAttempts))
		}
	}
	for _, name := range muted {
		maxMuted = max(maxMuted, attempts[name])
		if attempts[name] == 0 || attempts[name] > statusBound {
			wedged++
			problems = append(problems, fmt.Sprintf("Cluster %s: %d denied status patches in %s, want 1 to %d (exponential backoff)", name, attempts[name], secs(elapsed), statusBound))
		}
	}

	// The policies go; the user makes the large Clusters fit and lifts the annotation (an
	// annotation change wakes the controller). Everything converges, nothing is left over.
	w.allowWrites(t)
	healed := time.Now()
	w.setReplicas(t, ns, large, 3)
	for _, name := range muted {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, denyStatusKey))
		if err := w.admin.Patch(ctx, &appsv1alpha1.Cluster{ObjectMeta: metaName(ns, name)}, patch); err != nil {
			t.Fatalf("failed to lift the annotation of Cluster %s: %v", name, err)
		}
	}
	converge := w.waitConverged(t, ns)
	recovered := time.Since(healed)
	want := map[string]int32{}
	for _, name := range slices.Concat(allowed, large, muted) {
		want[name] = 3
	}
	for _, name := range muted {
		want[name] = 1
	}
	mid := w.settledAudit(t, ns)
	lost, lostProblems := w.lostEdits(t, ns, want)
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	return &result{
		Operations: fmt.Sprintf("%d creates (%d allowed, %d with a denied child, %d with a denied status), %d scales, %d annotation removals, %d deletes", 3*n, n, n, n, n, n, 3*n),
		Faults: fmt.Sprintf("2 ValidatingAdmissionPolicies: StatefulSets over %d replicas denied (Invalid, 422), status patches of annotated Clusters denied (Forbidden, 403); at most %d denied applies and %d denied status patches per Cluster in %s",
			maxAllowedReplicas, maxLarge, maxMuted, secs(elapsed)),
		Convergence: fmt.Sprintf("every denial reported %s after the creates; converged %s after the Clusters were fixed (%s after the policies were deleted), delete %s", secs(reported), secs(converge), secs(recovered), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + mid.Missing, Wedged: wedged + mid.Wedged + final.Wedged,
		Problems: slices.Concat(problems, mid.Problems, lostProblems, final.Problems),
		Details: []string{
			fmt.Sprintf("Two policies bound to the scenario's namespace: one denies a StatefulSet with more than %d replicas (the API server answers 422 Invalid), the other denies a Cluster's status while the annotation %s is set (403 Forbidden). %d Clusters of 3 replicas, %d of 7 and %d annotated ones of 1 are created.", maxAllowedReplicas, denyStatusKey, n, n, n),
			fmt.Sprintf("A Cluster whose StatefulSet is denied reports it, e.g. %q; it is not retried until it changes (a terminal error). A Cluster whose status is denied cannot say so: the operator reports each attempt as a Reconciler error naming the policy, with controller-runtime's exponential backoff (at most %d attempts allowed in %s). Either kind retried more often counts as wedged; a status denial answered other than 403, or not reported (a conflict would be a quiet requeue), is a problem.", sample, statusBound, secs(elapsed)),
			"Then the policies are deleted, the large Clusters scaled to 3 and the annotations removed; every Cluster must converge and delete cleanly.",
		},
	}
}

// denyWrites creates the scenario's ValidatingAdmissionPolicies and their bindings for namespace,
// and waits until the API server enforces both.
func (w *world) denyWrites(t *testing.T, namespace string) {
	t.Helper()
	ctx := t.Context()
	inNamespace := &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{corev1.LabelMetadataName: namespace},
	}}
	rule := func(group, resource string, ops ...admissionv1.OperationType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
		}}
	}
	forbidden := metav1.StatusReasonForbidden
	policies := []*admissionv1.ValidatingAdmissionPolicy{
		{
			ObjectMeta: metav1.ObjectMeta{Name: denyLargePolicy},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
					rule("apps", "statefulsets", admissionv1.Create, admissionv1.Update),
				}},
				Validations: []admissionv1.Validation{{
					Expression: fmt.Sprintf("!has(object.spec.replicas) || object.spec.replicas <= %d", maxAllowedReplicas),
					Message:    fmt.Sprintf("a StatefulSet may have at most %d replicas here", maxAllowedReplicas),
				}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: denyStatusPolicy},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
					rule(appsv1alpha1.GroupVersion.Group, "clusters/status", admissionv1.Update),
				}},
				Validations: []admissionv1.Validation{{
					Expression: fmt.Sprintf("!has(object.metadata.annotations) || !(%q in object.metadata.annotations)", denyStatusKey),
					Message:    "the status of this Cluster is frozen by " + denyStatusKey,
					Reason:     &forbidden,
				}},
			},
		},
	}
	for _, policy := range policies {
		if err := w.admin.Create(ctx, policy); err != nil {
			t.Fatalf("failed to create ValidatingAdmissionPolicy %s: %v", policy.Name, err)
		}
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				MatchResources:    inNamespace,
			},
		}
		if err := w.admin.Create(ctx, binding); err != nil {
			t.Fatalf("failed to create ValidatingAdmissionPolicyBinding %s: %v", binding.Name, err)
		}
	}
	t.Cleanup(func() { w.allowWrites(t) })

	// The API server enforces a policy once its informers have it: probe with dry runs until both
	// deny. The probe Cluster has no finalizer (no operator runs yet) and is deleted at once.
	probe := newCluster(namespace, "probe", 1)
	probe.Annotations = map[string]string{denyStatusKey: "true"}
	if err := w.admin.Create(ctx, probe); err != nil {
		t.Fatalf("failed to create the probe Cluster: %v", err)
	}
	defer func() {
		if err := client.IgnoreNotFound(w.admin.Delete(ctx, probe)); err != nil {
			t.Errorf("failed to delete the probe Cluster: %v", err)
		}
	}()
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "probe"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](maxAllowedReplicas + 2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
			},
		},
	}
	if err := poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		err := w.admin.Create(ctx, sts.DeepCopy(), client.DryRunAll)
		if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), denyLargePolicy) {
			return false, nil
		}
		status := probe.DeepCopy()
		status.Status.ReadyReplicas = 1
		err = w.admin.Status().Update(ctx, status, client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), denyStatusPolicy), nil
	}); err != nil {
		t.Fatalf("the API server did not enforce the policies: %v", err)
	}
}

// allowWrites deletes the admission scenario's policies and bindings. The API server stops
// enforcing them a moment later; the scenario's writes after it no longer match them anyway.
func (w *world) allowWrites(t *testing.T) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	for _, name := range []string{denyLargePolicy, denyStatusPolicy} {
		if err := client.IgnoreNotFound(w.admin.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})); err != nil {
			t.Errorf("failed to delete ValidatingAdmissionPolicyBinding %s: %v", name, err)
		}
		if err := client.IgnoreNotFound(w.admin.Delete(ctx, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}})); err != nil {
			t.Errorf("failed to delete ValidatingAdmissionPolicy %s: %v", name, err)
		}
	}
}

// reportedDenials counts the operator's Reconciler error lines for the Cluster namespace/name
// that name policy.
func (w *world) reportedDenials(namespace, name, policy string) int {
	n := 0
	for line := range strings.SplitSeq(w.logs.String(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, policy) &&
			strings.Contains(line, `"name":"`+name+`"`) && strings.Contains(line, `"namespace":"`+namespace+`"`) {
			n++
		}
	}
	return n
}
