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

// The rival is often ourselves: two workers of one controller share its field manager and its
// Applier, and server-side apply lets a manager overwrite what it applied before. These tests put
// our own field manager, with a reader that lags, in the way of an owned apply and of the
// Applier's proof that an apply would change nothing.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
)

// frozenReader answers every read with the objects it holds, as a cache that stopped at the
// moment hold was called would; an object it does not hold is read from Reader.
type frozenReader struct {
	client.Reader
	mu   sync.Mutex
	objs map[client.ObjectKey]client.Object
}

// hold makes r answer with obj, as it is now, for obj's key.
func (r *frozenReader) hold(obj client.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objs == nil {
		r.objs = map[client.ObjectKey]client.Object{}
	}
	r.objs[client.ObjectKeyFromObject(obj)] = obj.DeepCopyObject().(client.Object)
}

func (r *frozenReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	held, ok := r.objs[key]
	r.mu.Unlock()
	if !ok {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	if reflect.TypeOf(held) != reflect.TypeOf(obj) {
		return fmt.Errorf("frozenReader holds a %T for %s, asked for a %T", held, key, obj)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(held.DeepCopyObject()).Elem())
	return nil
}

// TestTwoWorkersOfOneControllerNeverBothTakeOneChild has two owners, reconciled by one
// controller (one Applier, one field manager), apply the same unowned child one after the other,
// each after a read that shows it unowned: the second read lags behind the first apply, as a
// cache does. Server-side apply lets a manager drop a reference it applied before, so without a
// condition on what was read the second apply would take the child from the first owner. It
// must fail instead: an AdoptionError naming the first owner when the Applier can read the
// child again, a conflict when it cannot, and nothing written either way.
func TestTwoWorkersOfOneControllerNeverBothTakeOneChild(t *testing.T) {
	for _, tc := range []struct {
		name      string
		force     bool
		apiReader bool
		// tracked puts the child in another namespace, where the owner's mark is tracking
		// labels and annotations rather than an owner reference.
		tracked bool
	}{
		{name: "with ForceConflicts and an API reader", force: true, apiReader: true},
		{name: "without ForceConflicts, with an API reader", apiReader: true},
		{name: "with ForceConflicts, without an API reader", force: true},
		{name: "a tracked child in another namespace, with ForceConflicts and an API reader", force: true, apiReader: true, tracked: true},
		{name: "a tracked child in another namespace, without ForceConflicts or an API reader", tracked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			childNS := ns
			if tc.tracked {
				childNS = env.Namespace(t)
			}
			first, second := newOwner(t, ns, "first"), newOwner(t, ns, "second")
			child := someonesConfigMap(childNS, "child")
			if !tc.force {
				child.Data = nil // nothing the controller applies is someone else's
			}
			g.Expect(env.Client().Create(ctx, child)).To(Succeed())
			reader := &frozenReader{Reader: env.Client()}
			reader.hold(child) // unowned, for both workers
			opts := patch.ApplierOptions{Reader: reader}
			if tc.apiReader {
				opts.APIReader = env.Client()
			}
			a := patch.NewApplier(env.Client(), "controller", opts)
			applyOpts := func(owner client.Object) []patch.ApplyCallOption {
				return []patch.ApplyCallOption{patch.OwnedBy(owner), patch.ForceConflicts(tc.force)}
			}

			_, err := a.Apply(ctx, ownedConfigMap(childNS, "child", "first"), applyOpts(first)...)
			g.Expect(err).NotTo(HaveOccurred())
			adopted := liveOf(g, child).(*corev1.ConfigMap)
			g.Expect(ownership.Owns(first, adopted)).To(BeTrue())

			_, err = a.Apply(ctx, ownedConfigMap(childNS, "child", "second"), applyOpts(second)...)

			var refused *ownership.AdoptionError
			if tc.apiReader {
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
				g.Expect(refused.Owner.UID).To(Equal(first.GetUID()))
			} else {
				g.Expect(apierrors.IsConflict(err) || errors.As(err, &refused)).To(BeTrue(), "want a conflict or an *ownership.AdoptionError, got %v", err)
			}
			live := liveOf(g, child).(*corev1.ConfigMap)
			g.Expect(live.ResourceVersion).To(Equal(adopted.ResourceVersion), "nothing written")
			g.Expect(ownership.Owns(first, live)).To(BeTrue())
			g.Expect(live.Data).To(Equal(map[string]string{"value": "first"}))
		})
	}
}

// TestTwoWorkersOfOneControllerApplyingOneChildAtOnce runs the race of the test above for real:
// two workers read the unowned child, and only when both have read do they apply, many times
// over. Exactly one owner takes the child; the other gets an AdoptionError naming it.
func TestTwoWorkersOfOneControllerApplyingOneChildAtOnce(t *testing.T) {
	const rounds = 30
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owners := []client.Object{newOwner(t, ns, "first"), newOwner(t, ns, "second")}
	for round := range rounds {
		name := fmt.Sprintf("child-%d", round)
		g.Expect(env.Client().Create(ctx, someonesConfigMap(ns, name))).To(Succeed())
		var read sync.WaitGroup
		read.Add(2)
		reader := &hookedReader{Reader: env.Client(), around: func(_ int, get func() error) error {
			err := get()
			read.Done()
			read.Wait() // both workers read it unowned before either applies
			return err
		}}
		a := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{Reader: reader, APIReader: env.Client()})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = a.Apply(ctx, ownedConfigMap(ns, name, fmt.Sprint(i)), patch.OwnedBy(owners[i]), patch.ForceConflicts(true))
			})
		}
		wg.Wait()

		live := liveOf(g, someonesConfigMap(ns, name)).(*corev1.ConfigMap)
		winner := -1
		for i, o := range owners {
			if ownership.Owns(o, live) {
				winner = i
			}
		}
		g.Expect(winner).NotTo(Equal(-1), "round %d: one of the owners has the child: %v", round, live.OwnerReferences)
		g.Expect(errs[winner]).NotTo(HaveOccurred(), "round %d", round)
		var refused *ownership.AdoptionError
		g.Expect(errors.As(errs[1-winner], &refused)).To(BeTrue(), "round %d: want an *ownership.AdoptionError for the loser, got %v", round, errs[1-winner])
		g.Expect(live.Data).To(Equal(map[string]string{"value": fmt.Sprint(winner)}), "round %d: the winner's data", round)
	}
}

// TestAChildARivalAdoptsAfterOurReadIsAnAdoptionErrorNotAnInvalidSpec has a rival controller
// take the unowned child between our read and our apply. The API server refuses a second
// controller reference ("Only one reference can have Controller set to true"), so nothing is
// stolen; but that 422 would make requeue treat a lost race as an invalid spec and stall the
// owner. A lost race is an AdoptionError (with an API reader) or a conflict (without one).
func TestAChildARivalAdoptsAfterOurReadIsAnAdoptionErrorNotAnInvalidSpec(t *testing.T) {
	for _, apiReader := range []bool{true, false} {
		t.Run(fmt.Sprintf("API reader %t", apiReader), func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			ns := env.Namespace(t)
			owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
			child := someonesConfigMap(ns, "child")
			g.Expect(env.Client().Create(ctx, child)).To(Succeed())
			reader := &frozenReader{Reader: env.Client()}
			reader.hold(child)
			// The rival adopts it with an update of its own.
			taken := liveOf(g, child).(*corev1.ConfigMap)
			g.Expect(controllerutil.SetControllerReference(rival, taken, env.Scheme())).To(Succeed())
			g.Expect(env.Client().Update(ctx, taken)).To(Succeed())

			opts := patch.ApplierOptions{Reader: reader}
			if apiReader {
				opts.APIReader = env.Client()
			}
			a := patch.NewApplier(env.Client(), "controller", opts)
			_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "ours"), patch.OwnedBy(owner), patch.ForceConflicts(true))

			g.Expect(apierrors.IsInvalid(err)).To(BeFalse(), "a lost race is not an invalid spec: %v", err)
			var refused *ownership.AdoptionError
			if apiReader {
				g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *ownership.AdoptionError, got %v", err)
			} else {
				g.Expect(apierrors.IsConflict(err) || errors.As(err, &refused)).To(BeTrue(), "want a conflict or an *ownership.AdoptionError, got %v", err)
			}
			live := liveOf(g, child).(*corev1.ConfigMap)
			g.Expect(live.ResourceVersion).To(Equal(taken.ResourceVersion), "nothing written")
		})
	}
}

// TestAControllerReferenceARivalSwappedInIsAConflictNotAnInvalidSpec has the child ours as the
// reader holds it, and a rival replace our controller reference with its own before the apply:
// the apply, which names the uid the reader held, is refused by the API server for its second
// controller reference; that is a lost race, not an invalid spec.
func TestAControllerReferenceARivalSwappedInIsAConflictNotAnInvalidSpec(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner, rival := newOwner(t, ns, "owner"), newOwner(t, ns, "rival")
	reader := &frozenReader{Reader: env.Client()}
	a := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{Reader: reader})
	_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "ours"), patch.OwnedBy(owner))
	g.Expect(err).NotTo(HaveOccurred())
	child := liveOf(g, ownedConfigMap(ns, "child", "")).(*corev1.ConfigMap)
	reader.hold(child)

	child.OwnerReferences = nil
	g.Expect(controllerutil.SetControllerReference(rival, child, env.Scheme())).To(Succeed())
	g.Expect(env.Client().Update(ctx, child)).To(Succeed())

	_, err = a.Apply(ctx, ownedConfigMap(ns, "child", "changed"), patch.OwnedBy(owner))

	g.Expect(apierrors.IsInvalid(err)).To(BeFalse(), "a lost race is not an invalid spec: %v", err)
	var refused *ownership.AdoptionError
	g.Expect(apierrors.IsConflict(err) || errors.As(err, &refused)).To(BeTrue(), "want a conflict or an *ownership.AdoptionError, got %v", err)
	live := liveOf(g, child).(*corev1.ConfigMap)
	g.Expect(live.ResourceVersion).To(Equal(child.ResourceVersion), "nothing written")
}

// TestARevertIsAppliedWhileTheReaderLagsBehindOurOwnApply applies A, then B, then A again, with
// a reader that still holds the object as the first apply left it: the third apply must be
// sent. The managedFields on the lagging object show A owned by the manager, but the Applier
// knows it applied B since, so that object proves nothing.
func TestARevertIsAppliedWhileTheReaderLagsBehindOurOwnApply(t *testing.T) {
	t.Run("Apply", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		ns := env.Namespace(t)
		reader := &frozenReader{Reader: env.Client()}
		a := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{Reader: reader})

		_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "A"))
		g.Expect(err).NotTo(HaveOccurred())
		reader.hold(liveOf(g, ownedConfigMap(ns, "child", "")))
		changed, err := a.Apply(ctx, ownedConfigMap(ns, "child", "B"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		changed, err = a.Apply(ctx, ownedConfigMap(ns, "child", "A"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue(), "the revert to A is sent")

		live := liveOf(g, ownedConfigMap(ns, "child", "")).(*corev1.ConfigMap)
		g.Expect(live.Data).To(Equal(map[string]string{"value": "A"}))
	})
	t.Run("ApplyStatus", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		ns := env.Namespace(t)
		w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
		g.Expect(env.Client().Create(ctx, w)).To(Succeed())
		reader := &frozenReader{Reader: env.Client()}
		a := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{Reader: reader})
		ready := func(status metav1.ConditionStatus) *testtypes.Widget {
			d := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
			d.Status.Conditions = []metav1.Condition{{Type: string(conditions.Ready), Status: status, Reason: "Checked"}}
			return d
		}

		_, err := a.ApplyStatus(ctx, ready(metav1.ConditionTrue))
		g.Expect(err).NotTo(HaveOccurred())
		reader.hold(liveOf(g, w))
		_, err = a.ApplyStatus(ctx, ready(metav1.ConditionFalse))
		g.Expect(err).NotTo(HaveOccurred())
		changed, err := a.ApplyStatus(ctx, ready(metav1.ConditionTrue))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue(), "the revert to True is sent")

		live := liveOf(g, w).(*testtypes.Widget)
		g.Expect(conditions.IsTrue(live, conditions.Ready)).To(BeTrue())
	})
}

// TestAnApplyAnAdmissionPluginAddedToIsNotSkippedAsUnchanged creates a Node by applying its taints:
// the API server's admission adds a not-ready taint as the Node is created, to the list the
// manager owns as a whole. Applying the same taints again removes it, so the Applier's memory of
// its apply must not skip that apply as one that changes nothing; the apply after it is skipped.
func TestAnApplyAnAdmissionPluginAddedToIsNotSkippedAsUnchanged(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	a := patch.NewApplier(c, "node-tainter", patch.ApplierOptions{})
	name := env.Namespace(t) + "-node"
	t.Cleanup(func() {
		_ = env.Client().Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	desired := func() *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{
			Taints: []corev1.Taint{{Key: "example.com/dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}}}
	}

	_, err := a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	created := &corev1.Node{}
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Name: name}, created)).To(Succeed())
	g.Expect(created.Spec.Taints).To(HaveLen(2), "the admission plugin added its taint")
	c.take()

	changed, err := a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "the apply removes the taint the manager owns and no longer declares")
	g.Expect(c.take()).To(Equal(counts{"get": 1, "apply": 1}))

	changed, err = a.Apply(ctx, desired())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(c.take()).To(Equal(counts{"get": 1}), "now unchanged: skipped")
}

const (
	// raceSeedEnvVar and raceCasesEnvVar set the seed and the number of cases of
	// TestOurOwnWorkersNeverTakeAChildAnotherOwnerControls; case i has seed TENON_RACE_SEED+i.
	raceSeedEnvVar  = "TENON_RACE_SEED"
	raceCasesEnvVar = "TENON_RACE_CASES"
)

// raceChild is a kind of child the race test applies: its desired object for a worker, and
// whether it is tracked (in another namespace than its owner, or cluster-scoped).
type raceChild struct {
	name    string
	tracked bool
	desired func(ns, name, worker string) *unstructured.Unstructured
}

func raceChildren(kinds []*realKind, remote string) []raceChild {
	configMap := func(ns string) func(string, string, string) *unstructured.Unstructured {
		return func(_, name, worker string) *unstructured.Unstructured {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"worker": worker}}}
			return u
		}
	}
	out := []raceChild{
		{name: "ConfigMap", desired: func(ns, name, worker string) *unstructured.Unstructured { return configMap(ns)(ns, name, worker) }},
		{name: "ConfigMap in another namespace", tracked: true, desired: configMap(remote)},
	}
	for _, k := range kinds {
		if k.GVK.Kind != "Deployment" && k.GVK.Kind != "Certificate" && k.GVK.Kind != "GatewayClass" {
			continue
		}
		out = append(out, raceChild{name: k.GVK.Kind, tracked: !k.Namespaced, desired: func(ns, name, worker string) *unstructured.Unstructured {
			if !k.Namespaced {
				name = ns + "-" + name
			}
			u := realkinds.Object(k.Kind, ns, name)
			delete(u.Object, "status")
			u.SetAnnotations(map[string]string{"example.com/worker": worker})
			return u
		}})
	}
	return out
}

// TestOurOwnWorkersNeverTakeAChildAnotherOwnerControls draws races of two workers of one
// controller (one Applier, one field manager), each applying one child with OwnedBy for an owner
// of its own or the same one, from readers that are fresh, lag, or hold nothing, with and
// without an API reader and ForceConflicts, on a child that is absent, unowned, the first owner's,
// or a rival controller's. Both read before either applies. The promises: a child another owner
// controls is never taken; a lost race is an AdoptionError or a conflict, never another error
// (a 422) and never a silent overwrite; the child ends with one controller, whose worker's data
// it has.
func TestOurOwnWorkersNeverTakeAChildAnotherOwnerControls(t *testing.T) {
	seed := int64(envInt(t, raceSeedEnvVar, rand.Int64N(1_000_000_000)))
	n := envInt(t, raceCasesEnvVar, 150)
	t.Logf("%s=%d %s=%d", raceSeedEnvVar, seed, raceCasesEnvVar, n)
	ns, remote := env.Namespace(t), env.Namespace(t)
	owners := []client.Object{newOwner(t, ns, "first"), newOwner(t, ns, "second")}
	rival := newOwner(t, ns, "rival")
	children := raceChildren(loadRealKinds(t), remote)
	var failures []string
	outcomes := map[string]int{}
	for i := range n {
		out, err := runRace(t.Context(), seed+int64(i), i, ns, owners, rival, children)
		outcomes[out]++
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s=%d %s=1: %v", raceSeedEnvVar, seed+int64(i), raceCasesEnvVar, err))
		}
	}
	t.Logf("outcomes: %v", outcomes)
	for _, f := range failures[:min(len(failures), 10)] {
		t.Error(f)
	}
}

// runRace runs one race and returns a short name of its outcome, and what broke a promise.
func runRace(ctx context.Context, seed int64, i int, ns string, owners []client.Object, rival client.Object, children []raceChild) (string, error) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x72616365))
	child := children[r.IntN(len(children))]
	name := fmt.Sprintf("race-%d", i)
	target := child.desired(ns, name, "")
	key := client.ObjectKeyFromObject(target)
	gvk := target.GroupVersionKind()
	live := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client().Get(ctx, key, u); err != nil {
			return nil
		}
		return u
	}
	defer func() { _ = env.Client().Delete(context.Background(), child.desired(ns, name, "")) }()

	// The child before the race.
	pre := []string{"absent", "unowned", "the first owner's", "a rival's"}[r.IntN(4)]
	var preOwner client.Object
	switch pre {
	case "unowned":
		if err := env.Client().Create(ctx, child.desired(ns, name, "someone"), client.FieldOwner("someone")); err != nil {
			return "setup", fmt.Errorf("failed to create the unowned child: %w", err)
		}
	case "the first owner's":
		preOwner = owners[0]
		if _, err := patch.NewApplier(env.Client(), "controller", patch.ApplierOptions{}).Apply(ctx, child.desired(ns, name, "before"), patch.OwnedBy(owners[0])); err != nil {
			return "setup", fmt.Errorf("failed to apply the first owner's child: %w", err)
		}
	case "a rival's":
		preOwner = rival
		if _, err := patch.NewApplier(env.Client(), "rival-controller", patch.ApplierOptions{}).Apply(ctx, child.desired(ns, name, "rival"), patch.OwnedBy(rival)); err != nil {
			return "setup", fmt.Errorf("failed to apply the rival's child: %w", err)
		}
	}
	before := live()

	// The workers: one Applier, as one controller has.
	type worker struct {
		owner  client.Object
		force  bool
		reader string
		err    error
	}
	workers := []*worker{{owner: owners[0]}, {owner: owners[r.IntN(2)]}}
	frozen := &frozenReader{Reader: env.Client()}
	if before != nil {
		frozen.hold(before)
	}
	var read sync.WaitGroup
	read.Add(2)
	var once [2]sync.Once
	apiReader := r.IntN(10) < 7
	opts := patch.ApplierOptions{}
	if apiReader {
		opts.APIReader = env.Client()
	}
	readers := make([]client.Reader, 2)
	for w := range workers {
		workers[w].force = r.IntN(2) == 0
		var base client.Reader
		switch x := r.IntN(3); {
		case x == 0:
			workers[w].reader, base = "fresh", env.Client()
		case x == 1 || before == nil:
			workers[w].reader, base = "lagging", frozen
		default:
			workers[w].reader, base = "empty", laggingReader{}
		}
		readers[w] = &hookedReader{Reader: base, around: func(_ int, get func() error) error {
			err := get()
			once[w].Do(func() { read.Done(); read.Wait() }) // both read before either applies
			return err
		}}
	}
	// One Applier, whose reader gives each worker its own view of the cache.
	opts.Reader = perWorkerReader(readers)
	a := patch.NewApplier(env.Client(), "controller", opts)
	var wg sync.WaitGroup
	for w, wk := range workers {
		wg.Go(func() {
			wctx := context.WithValue(ctx, workerKey{}, w)
			_, wk.err = a.Apply(wctx, child.desired(ns, name, strconv.Itoa(w)), patch.OwnedBy(wk.owner), patch.ForceConflicts(wk.force))
		})
	}
	wg.Wait()

	after := live()
	desc := fmt.Sprintf("%s child %s, API reader %t, workers: %s (owner %s, force %t, %s reader) → %v; %s (owner %s, force %t, %s reader) → %v",
		pre, child.name, apiReader,
		"0", workers[0].owner.GetName(), workers[0].force, workers[0].reader, workers[0].err,
		"1", workers[1].owner.GetName(), workers[1].force, workers[1].reader, workers[1].err)
	if after == nil {
		if workers[0].err == nil || workers[1].err == nil {
			return "broken", fmt.Errorf("a worker succeeded and there is no child: %s", desc)
		}
		return "none", nil
	}
	controller, controlled := ownership.OwnerOf(after)
	var refs int
	for _, ref := range after.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			refs++
		}
	}
	if refs > 1 {
		return "broken", fmt.Errorf("the child has %d controllers: %s", refs, desc)
	}
	for w, wk := range workers {
		var refused *ownership.AdoptionError
		switch {
		case wk.err == nil && (!controlled || controller.UID != wk.owner.GetUID()):
			return "broken", fmt.Errorf("worker %d succeeded, but the child is controlled by %v: %s", w, controller, desc)
		case wk.err != nil && !errors.As(wk.err, &refused) && !apierrors.IsConflict(wk.err):
			return "broken", fmt.Errorf("worker %d lost with an error that is neither an AdoptionError nor a conflict: %s", w, desc)
		}
	}
	if preOwner != nil && (!controlled || controller.UID != preOwner.GetUID()) {
		return "broken", fmt.Errorf("the child was %s and is now controlled by %v: %s", pre, controller, desc)
	}
	winner := -1
	for w, wk := range workers {
		if wk.err == nil {
			winner = w
		}
	}
	if winner >= 0 {
		if got := markerOf(after); got != strconv.Itoa(winner) && (workers[0].err != nil || workers[1].err != nil || workers[0].owner != workers[1].owner) {
			return "broken", fmt.Errorf("the child has worker %q's data, not the winner's (%d): %s", got, winner, desc)
		}
		return "taken", nil
	}
	if before != nil && after.GetResourceVersion() != before.GetResourceVersion() && preOwner != nil {
		return "broken", fmt.Errorf("both workers lost, and the child changed: %s", desc)
	}
	return "refused", nil
}

// workerKey is the context key of the worker a read is for.
type workerKey struct{}

// perWorkerReader reads with the reader of the worker the context names: the views of one cache
// that two workers of a controller have at different moments.
type perWorkerReader []client.Reader

func (p perWorkerReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return p[ctx.Value(workerKey{}).(int)].Get(ctx, key, obj, opts...)
}

func (p perWorkerReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return p[ctx.Value(workerKey{}).(int)].List(ctx, list, opts...)
}

// markerOf returns which worker's desired object the child holds: its data or annotation.
func markerOf(u *unstructured.Unstructured) string {
	if v, ok, _ := unstructured.NestedString(u.Object, "data", "worker"); ok {
		return v
	}
	return u.GetAnnotations()["example.com/worker"]
}

// TestAnEmptyMapTheServerPrunedIsAppliedAgain applies a Node's status.features with a field,
// then empty: the API server removes the field the manager no longer declares and prunes the map
// it emptied, so the object lacks status.features although the apply set it. Applying the same
// empty map again sets it (a pointer to an empty struct is stored as such), so that apply is not
// skipped; the one after it is.
func TestAnEmptyMapTheServerPrunedIsAppliedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := newCountingClient(t)
	a := patch.NewApplier(c, "node-status", patch.ApplierOptions{})
	name := env.Namespace(t) + "-node"
	t.Cleanup(func() {
		_ = env.Client().Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	g.Expect(env.Client().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	status := func(features map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name},
			"status": map[string]any{"features": features}}}
	}
	features := func() any {
		node := &unstructured.Unstructured{}
		node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		f, found, _ := unstructured.NestedFieldNoCopy(node.Object, "status", "features")
		if !found {
			return "absent"
		}
		return f
	}

	_, err := a.ApplyStatus(ctx, status(map[string]any{"supplementalGroupsPolicy": true}))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = a.ApplyStatus(ctx, status(map[string]any{}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(features()).To(Equal("absent"), "the server pruned the map the apply emptied")
	c.take()

	changed, err := a.ApplyStatus(ctx, status(map[string]any{}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(c.take()["status apply"]).To(Equal(1), "the apply that sets it is sent")
	g.Expect(features()).To(Equal(map[string]any{}))

	_, err = a.ApplyStatus(ctx, status(map[string]any{}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.take()["status apply"]).To(BeZero(), "now unchanged: skipped")
}

// TestAnEmptyMapTheStoredFormOmitsIsNotAppliedAgain applies empty maps an object lacks after
// the apply: a custom resource's empty labels, which its stored form omits (metadata is stored as
// ObjectMeta), and an empty spec.atomic, which a mutating admission policy removes on every
// write of the objects it selects. Nothing in the answer tells either from a map the server
// pruned (see TestAnEmptyMapTheServerPrunedIsAppliedAgain). ObjectMeta's Go type tells the first,
// so the apply after the creation is skipped, and after another writer's change too. The second
// is no property of the kind (the policy selects objects by label, and may change), so it costs
// one apply more after each change of the object, which writes nothing and proves the fixed point
// for that version of the object.
func TestAnEmptyMapTheStoredFormOmitsIsNotAppliedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	const policy = "stripempty"
	desired := func(name string) *unstructured.Unstructured {
		u := asUnstructured(t, newShapeIn(ns, testtypes.ShapeSpec{Text: "x"}))
		u.SetName(name)
		g.Expect(unstructured.SetNestedField(u.Object, map[string]any{}, "metadata", "labels")).To(Succeed())
		return u
	}
	stripped := func(name string) *unstructured.Unstructured {
		u := desired(name)
		u.SetLabels(map[string]string{"tenon-test-policy": policy})
		g.Expect(unstructured.SetNestedField(u.Object, map[string]any{}, "spec", "atomic")).To(Succeed())
		return u
	}
	mutateIn(t, ns, policy, testtypes.GroupVersion.Group, "shapes",
		[]admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		`has(object.spec.atomic) && size(object.spec.atomic) == 0 ? [JSONPatch{op: "remove", path: "/spec/atomic"}] : []`,
		stripped("probe"), func(o client.Object) bool {
			_, found, _ := unstructured.NestedFieldNoCopy(o.(*unstructured.Unstructured).Object, "spec", "atomic")
			return !found
		})
	c := newCountingClient(t)
	a := patch.NewApplier(c, "shaper", patch.ApplierOptions{})
	apply := func(obj *unstructured.Unstructured) counts {
		_, err := a.Apply(ctx, obj)
		g.Expect(err).NotTo(HaveOccurred())
		return c.take()
	}
	change := func(name string) {
		other := newShapeIn(ns, testtypes.ShapeSpec{})
		other.Name = name
		g.Expect(env.Client().Patch(ctx, other, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"other":"`+strconv.Itoa(rand.IntN(1e9))+`"}}}`)))).To(Succeed())
	}

	g.Expect(apply(desired("labels"))["apply"]).To(Equal(1), "created")
	g.Expect(apply(desired("labels"))["apply"]).To(BeZero(), "ObjectMeta omits empty labels")
	change("labels")
	g.Expect(apply(desired("labels"))["apply"]).To(BeZero(), "after another writer's change")
	g.Expect(dryRunDiff(t, desired("labels"), "shaper")).To(BeEmpty())

	g.Expect(apply(stripped("first"))["apply"]).To(Equal(1), "created")
	g.Expect(apply(stripped("first"))["apply"]).To(Equal(1), "sent once more: it writes nothing")
	g.Expect(apply(stripped("first"))["apply"]).To(BeZero())
	change("first")
	g.Expect(apply(stripped("first"))["apply"]).To(Equal(1), "after another writer's change, once more")
	g.Expect(apply(stripped("first"))["apply"]).To(BeZero())
	g.Expect(dryRunDiff(t, stripped("first"), "shaper")).To(BeEmpty())
}
