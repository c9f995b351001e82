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

package patch_test

// The Applier's no-op proofs where an apply empties a value: sequences of applies of real kinds
// where the last element of a list of type map or set, or the last key of a granular map, is
// removed, with and without rivals (another field manager, the same manager from a second
// worker, an Update writer), and empty lists the stored form drops (finalizers: []). At each step of this manager, a dry run (sent by a
// probe Applier that cannot prove anything) tells whether the apply changes the object; the
// Applier must send exactly the applies that change it, may send once more an apply that then
// writes nothing, and must reach 0 requests at steady state.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// fpRun drives one sequence.
type fpRun struct {
	t       *testing.T
	cc      *countingClient
	base    client.WithWatch
	manager string
	a       *patch.Applier
	log     []string
	// writes counts the resourceVersion changes made by this manager's applies; sends its
	// requests.
	writes, sends int
}

func newFPRun(t *testing.T, manager string) *fpRun {
	t.Helper()
	base, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cc := countRequests(base)
	return &fpRun{t: t, cc: cc, base: base, manager: manager, a: patch.NewApplier(cc, manager, patch.ApplierOptions{})}
}

func (r *fpRun) get(u *unstructured.Unstructured) *unstructured.Unstructured {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	if err := r.base.Get(context.Background(), client.ObjectKeyFromObject(u), live); err != nil {
		return nil
	}
	return live
}

// dryRun returns what the apply of desired changes on live (empty: nothing), or the error the
// API server answers.
func (r *fpRun) dryRun(desired *unstructured.Unstructured, status bool, live *unstructured.Unstructured) (string, error) {
	var response []byte
	dry := dryRunApplies(r.base, func(_, answer []byte) { response = answer })
	probe := patch.NewApplier(dry, r.manager, patch.ApplierOptions{Reader: withoutManagedFields{r.base}})
	var err error
	if status {
		_, err = probe.ApplyStatus(context.Background(), desired.DeepCopy())
	} else {
		_, err = probe.Apply(context.Background(), desired.DeepCopy())
	}
	if err != nil {
		return "", err
	}
	after := &unstructured.Unstructured{}
	if err := after.UnmarshalJSON(response); err != nil {
		return "", err
	}
	return cmp.Diff(withoutFieldsMetadata(live), withoutFieldsMetadata(after)) + cmp.Diff(fieldSets(live), fieldSets(after)), nil
}

// mine applies desired with the Applier under test and checks a skip against the dry run.
func (r *fpRun) mine(label string, desired *unstructured.Unstructured, status bool) {
	r.t.Helper()
	live := r.get(desired)
	diff, dryErr := "", error(nil)
	if live != nil {
		diff, dryErr = r.dryRun(desired, status, live)
	}
	r.cc.take()
	var err error
	if status {
		_, err = r.a.ApplyStatus(context.Background(), desired.DeepCopy())
	} else {
		_, err = r.a.Apply(context.Background(), desired.DeepCopy())
	}
	got := r.cc.take()
	sent := got["apply"] + got["status apply"]
	after := r.get(desired)
	wrote := live == nil && after != nil || live != nil && after != nil && live.GetResourceVersion() != after.GetResourceVersion()
	r.sends += sent
	if wrote {
		r.writes++
	}
	line := fmt.Sprintf("%-28s sent=%d wrote=%-5t dryRunChanges=%-5t err=%v dryErr=%v", label, sent, wrote, diff != "", err, dryErr)
	r.log = append(r.log, line)
	r.t.Log(line)
	if live != nil && sent == 0 && diff != "" {
		r.t.Errorf("%s: the Applier SKIPPED an apply that changes the object:\n%s", label, diff)
	}
	if live != nil && sent == 0 && dryErr != nil {
		r.t.Errorf("%s: the Applier SKIPPED an apply the API server refuses: %v", label, dryErr)
	}
}

// steady applies desired n times and requires the last to send nothing.
func (r *fpRun) steady(label string, desired *unstructured.Unstructured, status bool, n int) {
	r.t.Helper()
	before := r.sends
	for i := range n {
		r.mine(fmt.Sprintf("%s steady %d", label, i+1), desired, status)
	}
	if last := r.log[len(r.log)-1]; !strings.Contains(last, "sent=0") && strings.Contains(last, "err=<nil>") {
		r.t.Errorf("%s: still sending at steady state (%d requests in %d applies)", label, r.sends-before, n)
	}
}

// other applies obj as another field manager, with force.
func (r *fpRun) other(manager string, obj *unstructured.Unstructured, status bool) {
	r.t.Helper()
	ac := client.ApplyConfigurationFromUnstructured(obj.DeepCopy())
	var err error
	if status {
		err = r.base.Status().Apply(context.Background(), ac, client.FieldOwner(manager), client.ForceOwnership)
	} else {
		err = r.base.Apply(context.Background(), ac, client.FieldOwner(manager), client.ForceOwnership)
	}
	r.t.Logf("%-28s err=%v", "other "+manager, err)
	if err != nil {
		r.t.Fatalf("other writer %s: %v", manager, err)
	}
}

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

func capiCluster(ns, name string, extra map[string]any) *unstructured.Unstructured {
	m := map[string]any{"spec": map[string]any{"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}}}}}
	for k, v := range extra {
		m[k] = v
	}
	return obj("cluster.x-k8s.io/v1beta2", "Cluster", ns, name, m)
}

func capiClusterStatus(ns, name string, status map[string]any) *unstructured.Unstructured {
	return obj("cluster.x-k8s.io/v1beta2", "Cluster", ns, name, map[string]any{"status": status})
}

// TestAnEmptiedValueCAPIFailureDomains: [x] -> [] -> [] -> [] on Cluster status.failureDomains
// (list of type map, minItems 1), through the status subresource.
func TestAnEmptiedValueCAPIFailureDomains(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "capi-status")
	r.mine("create cluster", capiCluster(ns, "c1", nil), false)
	fd := func(l []any) *unstructured.Unstructured {
		return capiClusterStatus(ns, "c1", map[string]any{"phase": "Provisioned", "failureDomains": l})
	}
	r.mine("status fd [a]", fd([]any{map[string]any{"name": "a", "controlPlane": true}}), true)
	r.mine("status fd []", fd([]any{}), true)
	r.mine("status fd [] again", fd([]any{}), true)
	r.mine("status fd [] again 2", fd([]any{}), true)
}

// TestAnEmptiedValueCAPIAvailabilityGates: spec.availabilityGates (list of type map, minItems 1)
// on the main resource: [g] -> [] -> [] -> []; then with a rival owning a second gate.
func TestAnEmptiedValueCAPIAvailabilityGates(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "capi-spec")
	gates := func(l []any) *unstructured.Unstructured {
		return capiCluster(ns, "c2", map[string]any{"spec": map[string]any{"paused": false,
			"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}}}, "availabilityGates": l}})
	}
	r.mine("create gates [g1]", gates([]any{map[string]any{"conditionType": "G1"}}), false)
	r.mine("gates []", gates([]any{}), false)
	r.mine("gates [] again", gates([]any{}), false)
	r.mine("gates [] again 2", gates([]any{}), false)

	// A rival owns G2; this manager gives up G1 and applies [] again and again.
	r.mine("gates [g1] back", gates([]any{map[string]any{"conditionType": "G1"}}), false)
	r.other("rival", obj("cluster.x-k8s.io/v1beta2", "Cluster", ns, "c2", map[string]any{"spec": map[string]any{
		"availabilityGates": []any{map[string]any{"conditionType": "G2"}}}}), false)
	r.mine("gates [] with rival G2", gates([]any{}), false)
	r.steady("gates [] with rival G2", gates([]any{}), false, 2)
	// The rival gives up G2: the list is pruned; the next apply of [] would create it empty.
	r.other("rival", obj("cluster.x-k8s.io/v1beta2", "Cluster", ns, "c2", map[string]any{"spec": map[string]any{}}), false)
	r.mine("gates [] after rival left", gates([]any{}), false)
	r.mine("gates [] after rival left 2", gates([]any{}), false)
}

// TestAnEmptiedValueGatewayListeners: Gateway spec.addresses [ip] -> [] -> [] (the API server
// keeps the empty list).
func TestAnEmptiedValueGatewayListeners(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "gw")
	gw := func(addresses []any) *unstructured.Unstructured {
		return obj("gateway.networking.k8s.io/v1", "Gateway", ns, "g", map[string]any{"spec": map[string]any{"gatewayClassName": "example",
			"listeners": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP"}}, "addresses": addresses}})
	}
	r.mine("create addresses [ip]", gw([]any{map[string]any{"type": "IPAddress", "value": "10.0.0.1"}}), false)
	r.mine("addresses []", gw([]any{}), false)
	r.mine("addresses [] again", gw([]any{}), false)
	r.steady("addresses []", gw([]any{}), false, 2)
}

// TestAnEmptiedValueDeploymentPorts: a built-in kind whose Go type omits an empty list of type
// map: container ports [80] -> [] -> [] and env [x] -> []. The stored form never holds the empty
// list, and the Go type tells the Applier so: one request per change, none at steady state.
func TestAnEmptiedValueDeploymentPorts(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "deployer")
	dep := func(ports, envs []any) *unstructured.Unstructured {
		c := map[string]any{"name": "c", "image": "nginx", "ports": ports, "env": envs}
		return obj("apps/v1", "Deployment", ns, "web", map[string]any{"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{c}}}}})
	}
	p80 := []any{map[string]any{"containerPort": int64(80)}}
	e1 := []any{map[string]any{"name": "A", "value": "1"}}
	r.mine("create ports [80] env [A]", dep(p80, e1), false)
	r.mine("ports [] env [A]", dep([]any{}, e1), false)
	r.mine("ports [] env [A] again", dep([]any{}, e1), false)
	r.steady("ports [] env [A]", dep([]any{}, e1), false, 2)
	r.mine("ports [] env []", dep([]any{}, []any{}), false)
	r.steady("ports [] env []", dep([]any{}, []any{}), false, 2)
	if r.writes != 3 || r.sends != 3 {
		t.Errorf("%d writes in %d requests, want 3 in 3: one per change", r.writes, r.sends)
	}

	// From creation with empty lists: absent -> [] -> [].
	r2 := newFPRun(t, "deployer")
	dep2 := func() *unstructured.Unstructured {
		u := dep([]any{}, []any{})
		u.SetName("web2")
		return u
	}
	r2.mine("create ports [] env []", dep2(), false)
	r2.steady("ports [] env []", dep2(), false, 3)
	if r2.writes != 1 || r2.sends != 1 {
		t.Errorf("from creation: %d writes in %d requests, want 1 in 1", r2.writes, r2.sends)
	}
}

// TestAnEmptiedValueCRFinalizersAndOwnerRefsEmpty: a custom resource applied with
// metadata.finalizers: [] and ownerReferences: [] (lists of type set / map that own nothing,
// which ObjectMeta's stored form omits), and empty labels and annotations: the API server
// stores the object again on every such apply of a custom resource, so the Applier must send
// one per change and none at steady state, also after another writer's status update.
func TestAnEmptiedValueCRFinalizersAndOwnerRefsEmpty(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range []struct {
		name string
		meta map[string]any
	}{
		{"finalizers", map[string]any{"finalizers": []any{}}},
		{"ownerReferences", map[string]any{"ownerReferences": []any{}}},
		{"labels", map[string]any{"labels": map[string]any{}}},
		{"annotations", map[string]any{"annotations": map[string]any{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFPRun(t, "cr-"+strings.ToLower(tc.name))
			mk := func(foo string) *unstructured.Unstructured {
				u := obj("deprecatedtest.cluster.x-k8s.io/v1alpha1", "Phase1Obj", ns, "p-"+strings.ToLower(tc.name), map[string]any{"spec": map[string]any{"foo": foo}})
				meta := u.Object["metadata"].(map[string]any)
				for k, v := range tc.meta {
					meta[k] = runtime.DeepCopyJSONValue(v)
				}
				return u
			}
			r.mine("create", mk("a"), false)
			r.steady("after create", mk("a"), false, 3)
			w := r.writes
			r.mine("change foo", mk("b"), false)
			r.steady("after change", mk("b"), false, 3)
			if r.writes-w != 1 {
				t.Errorf("%s: a change and three identical reconciles wrote %d times, want 1", tc.name, r.writes-w)
			}
			// Another writer changes the object (a status update by its controller): each
			// reconcile after that must not write.
			for i := range 3 {
				r.other("status-writer", obj("deprecatedtest.cluster.x-k8s.io/v1alpha1", "Phase1Obj", ns, "p-"+strings.ToLower(tc.name),
					map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True",
						"lastTransitionTime": fmt.Sprintf("2026-01-0%dT00:00:00Z", i+1), "severity": ""}}}}), true)
				w := r.writes
				r.mine(fmt.Sprintf("after status write %d", i), mk("b"), false)
				if r.writes != w {
					t.Errorf("%s: the unchanged apply after another writer's status write %d wrote", tc.name, i)
				}
			}
		})
	}
}

// TestAnEmptiedValueNestedEmptied: an element of a list of type map keeps its key while the
// manager empties a list (Kueue ClusterQueue status.flavorsReservation[].resources, required)
// or a granular map (Cluster status.failureDomains[].attributes) inside it.
func TestAnEmptiedValueNestedEmptied(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "kueue-status")
	r.mine("create clusterqueue", obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "cq-"+ns, map[string]any{"spec": map[string]any{"namespaceSelector": map[string]any{}}}), false)
	cq := func(res []any) *unstructured.Unstructured {
		return obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "cq-"+ns, map[string]any{"status": map[string]any{
			"flavorsReservation": []any{map[string]any{"name": "f", "resources": res}}}})
	}
	r.mine("reservation [f:[cpu]]", cq([]any{map[string]any{"name": "cpu", "total": "1"}}), true)
	r.mine("reservation [f:[]]", cq([]any{}), true)
	r.mine("reservation [f:[]] again", cq([]any{}), true)
	r.mine("reservation [f:[]] again 2", cq([]any{}), true)

	r2 := newFPRun(t, "capi-status")
	r2.mine("create cluster", capiCluster(ns, "c3", nil), false)
	fd := func(attrs map[string]any) *unstructured.Unstructured {
		return capiClusterStatus(ns, "c3", map[string]any{"failureDomains": []any{map[string]any{"name": "a", "attributes": attrs}}})
	}
	r2.mine("fd a attrs {k}", fd(map[string]any{"k": "v"}), true)
	r2.mine("fd a attrs {}", fd(map[string]any{}), true)
	r2.mine("fd a attrs {} again", fd(map[string]any{}), true)
	r2.steady("fd a attrs {}", fd(map[string]any{}), true, 2)
}

// TestAnEmptiedValueSameManagerTwoWorkers: two Appliers with the same field manager (two
// replicas, or two reconcilers of one process sharing the name) apply the same list, one with an
// element, the other empty; then an Update-operation writer owns an element.
func TestAnEmptiedValueSameManagerTwoWorkers(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "capi-spec")
	other := patch.NewApplier(r.cc, "capi-spec", patch.ApplierOptions{})
	gates := func(l []any) *unstructured.Unstructured {
		return capiCluster(ns, "c4", map[string]any{"spec": map[string]any{
			"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}}}, "availabilityGates": l}})
	}
	g1 := []any{map[string]any{"conditionType": "G1"}}
	r.mine("A gates [g1]", gates(g1), false)
	r.steady("A gates [g1]", gates(g1), false, 1)
	_, err := other.Apply(t.Context(), gates([]any{}))
	t.Logf("B gates []: %v", err)
	r.mine("A gates [g1] after B", gates(g1), false)
	r.steady("A gates [g1] after B", gates(g1), false, 2)

	// An Update-operation writer (kubectl edit) adds G2; A applies [] (keeps G2), then the writer
	// removes G2 by an update.
	live := r.get(gates(nil))
	l, _, _ := unstructured.NestedSlice(live.Object, "spec", "availabilityGates")
	l = append(l, map[string]any{"conditionType": "G2"})
	_ = unstructured.SetNestedSlice(live.Object, l, "spec", "availabilityGates")
	if err := r.base.Update(t.Context(), live, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	r.mine("A gates [] with G2 by update", gates([]any{}), false)
	r.steady("A gates [] with G2 by update", gates([]any{}), false, 2)
	live = r.get(gates(nil))
	unstructured.RemoveNestedField(live.Object, "spec", "availabilityGates")
	if err := r.base.Update(t.Context(), live, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	r.mine("A gates [] after G2 removed", gates([]any{}), false)
	r.mine("A gates [] after G2 removed 2", gates([]any{}), false)
}

// phase1 is a Cluster API test custom resource with metadata.finalizers: [] (a list of type set
// that owns nothing and that ObjectMeta's stored form omits), as a controller that renders its
// children from templates into unstructured objects declares it.
func phase1(ns, name, foo string) *unstructured.Unstructured {
	u := obj("deprecatedtest.cluster.x-k8s.io/v1alpha1", "Phase1Obj", ns, name, map[string]any{"spec": map[string]any{"foo": foo}})
	u.Object["metadata"].(map[string]any)["finalizers"] = []any{}
	return u
}

// TestAnEmptyFinalizersListWritesOncePerChange: an apply of a custom resource with
// `finalizers: []` writes (a new resourceVersion, the same content: the patched metadata holds
// the empty list, its stored form does not), so the answer must be taken for a fixed point, as
// ObjectMeta's Go type tells, and the next identical apply skipped: 1 write per change, not 2.
func TestAnEmptyFinalizersListWritesOncePerChange(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "cr-finalizers")
	r.mine("create", phase1(ns, "p", "a"), false)
	r.mine("reconcile 2", phase1(ns, "p", "a"), false)
	r.mine("reconcile 3", phase1(ns, "p", "a"), false)
	if r.writes != 1 {
		t.Errorf("creation and two identical reconciles: %d writes, want 1", r.writes)
	}
	w := r.writes
	r.mine("change", phase1(ns, "p", "b"), false)
	r.mine("reconcile 2", phase1(ns, "p", "b"), false)
	r.mine("reconcile 3", phase1(ns, "p", "b"), false)
	if r.writes-w != 1 {
		t.Errorf("a change and two identical reconciles: %d writes, want 1", r.writes-w)
	}
}

// TestAnEmptyFinalizersListIsProvedAfterAnotherWritersStatus: another controller updates the status
// of the custom resource, which ends what the Applier remembers of its last apply; the proof from
// managedFields must then hold although the entry owns nothing for `finalizers: []` (ObjectMeta's
// schema declares nothing there), or every status update of another writer costs a write.
func TestAnEmptyFinalizersListIsProvedAfterAnotherWritersStatus(t *testing.T) {
	ns := env.Namespace(t)
	r := newFPRun(t, "cr-finalizers")
	r.mine("create", phase1(ns, "q", "a"), false)
	r.mine("reconcile", phase1(ns, "q", "a"), false)
	r.mine("reconcile", phase1(ns, "q", "a"), false)
	w := r.writes
	for i := range 3 {
		r.other("status-writer", obj("deprecatedtest.cluster.x-k8s.io/v1alpha1", "Phase1Obj", ns, "q",
			map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True",
				"lastTransitionTime": fmt.Sprintf("2026-01-0%dT00:00:00Z", i+1)}}}}), true)
		r.mine(fmt.Sprintf("reconcile after status write %d", i+1), phase1(ns, "q", "a"), false)
	}
	if r.writes != w {
		t.Errorf("unchanged desired object: %d writes after 3 status writes of another controller, want 0", r.writes-w)
	}
}
