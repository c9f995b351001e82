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
	"reflect"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
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
		{name: "with ForceOwnership and an API reader", force: true, apiReader: true},
		{name: "without ForceOwnership, with an API reader", apiReader: true},
		{name: "with ForceOwnership, without an API reader", force: true},
		{name: "a tracked child in another namespace, with ForceOwnership and an API reader", force: true, apiReader: true, tracked: true},
		{name: "a tracked child in another namespace, without ForceOwnership or an API reader", tracked: true},
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
			applyOpts := func(owner client.Object) []patch.ApplyOption {
				return []patch.ApplyOption{patch.OwnedBy(owner), patch.ForceOwnership(tc.force)}
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
				_, errs[i] = a.Apply(ctx, ownedConfigMap(ns, name, fmt.Sprint(i)), patch.OwnedBy(owners[i]), patch.ForceOwnership(true))
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
			_, err := a.Apply(ctx, ownedConfigMap(ns, "child", "ours"), patch.OwnedBy(owner), patch.ForceOwnership(true))

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
