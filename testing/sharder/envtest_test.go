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

package sharder_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	env = testenv.New(testenv.Options{})
	os.Exit(env.Run(m))
}

// objectsPerTest is the number of ConfigMaps, each with a Secret, of a test. Where an object goes
// depends on its namespace, which is random: with 40, the chance that one of three shards gets
// none is below one in a million.
const objectsPerTest = 40

// settle bounds the waits for the sharder, whose passes share the CPU with other tests.
const settle = 20 * time.Second

// testRing is a test's ring on envtest: its Leases and objects live in the test's namespace, whose
// name is also the ring's, and a sharder with a fake clock runs for the test.
type testRing struct {
	t       *testing.T
	ns      string
	clock   *clocktesting.FakeClock
	sharder *sharder.Sharder
}

// startRing starts the sharder of a new ring of ConfigMaps that control Secrets, with the Leases
// of shards written before: were it to start with a part of them, it would assign objects to those
// only, and then drain them for the others.
func startRing(t *testing.T, shards []string, opts ...func(*sharder.Options)) *testRing {
	t.Helper()
	return startRingWith(t, env.Client(), shards, opts...)
}

// startRingWith starts the ring as startRing does, with a sharder that reads and writes through c.
func startRingWith(t *testing.T, c client.Client, shards []string, opts ...func(*sharder.Options)) *testRing {
	t.Helper()
	ns := env.Namespace(t)
	r := &testRing{t: t, ns: ns, clock: clocktesting.NewFakeClock(start)}
	r.addShards(shards...)
	o := sharder.Options{Ring: ns, LeaseNamespace: ns, Namespaces: []string{ns}, Resources: configMapsWithSecrets,
		Clock: r.clock, SyncPeriod: 20 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	var err error
	if r.sharder, err = sharder.New(c, o); err != nil {
		t.Fatalf("failed to create the sharder: %v", err)
	}
	ctx, cancel := context.WithCancel(log.IntoContext(context.Background(), testr.New(t)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.sharder.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

// addShards writes the Leases of new shards, renewed now by the sharder's clock.
func (r *testRing) addShards(names ...string) {
	r.t.Helper()
	for _, name := range names {
		if err := env.Client().Create(r.t.Context(), shardLease(r.ns, r.ns, name, r.clock.Now())); err != nil {
			r.t.Fatalf("failed to create the Lease of shard %s: %v", name, err)
		}
	}
}

// renew renews the Leases of shards now, by the sharder's clock, as the shards do.
func (r *testRing) renew(names ...string) {
	r.t.Helper()
	for _, name := range names {
		lease := &coordinationv1.Lease{}
		if err := env.Client().Get(r.t.Context(), client.ObjectKey{Namespace: r.ns, Name: name}, lease); err != nil {
			r.t.Fatalf("failed to read the Lease of shard %s: %v", name, err)
		}
		lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(r.clock.Now()))
		if err := env.Client().Update(r.t.Context(), lease); err != nil {
			r.t.Fatalf("failed to renew the Lease of shard %s: %v", name, err)
		}
	}
}

// createObjects creates n ConfigMaps, each controlling a Secret, and a Secret without a
// controller, which is never assigned.
func (r *testRing) createObjects(n int) (owners []*corev1.ConfigMap, children []*corev1.Secret, orphan *corev1.Secret) {
	r.t.Helper()
	ctx := r.t.Context()
	owners, children = r.createPairs("config", n)
	orphan = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "orphan"}}
	if err := env.Client().Create(ctx, orphan); err != nil {
		r.t.Fatalf("failed to create Secret %s: %v", orphan.Name, err)
	}
	return owners, children, orphan
}

// createPairs creates n ConfigMaps named prefix-00, prefix-01 and so on, each controlling a Secret.
func (r *testRing) createPairs(prefix string, n int) (owners []*corev1.ConfigMap, children []*corev1.Secret) {
	r.t.Helper()
	for i := range n {
		owner := configMap(r.ns, fmt.Sprintf("%s-%02d", prefix, i), nil)
		if err := env.Client().Create(r.t.Context(), owner); err != nil {
			r.t.Fatalf("failed to create ConfigMap %s: %v", owner.Name, err)
		}
		child := secretOf(owner, owner.Name+"-secret")
		if err := env.Client().Create(r.t.Context(), child); err != nil {
			r.t.Fatalf("failed to create Secret %s: %v", child.Name, err)
		}
		owners, children = append(owners, owner), append(children, child)
	}
	return owners, children
}

// placement is where objects are: the values of their shard and drain labels, by name.
type placement struct {
	shard, drain map[string]string
}

// placementOf reads the shard and drain labels of objs.
func (r *testRing) placementOf(g Gomega, objs ...client.Object) placement {
	p := placement{shard: map[string]string{}, drain: map[string]string{}}
	for _, obj := range objs {
		g.Expect(env.Client().Get(r.t.Context(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		p.shard[obj.GetName()] = obj.GetLabels()[sharding.ShardLabelPrefix+r.ns]
		if v, ok := obj.GetLabels()[sharding.DrainLabelPrefix+r.ns]; ok {
			p.drain[obj.GetName()] = v
		}
	}
	return p
}

// acknowledgeDrain does what a shard does with a drained object: it removes both labels.
func (r *testRing) acknowledgeDrain(obj client.Object) {
	r.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null,%q:null}}}`, sharding.ShardLabelPrefix+r.ns, sharding.DrainLabelPrefix+r.ns)
	if err := env.Client().Patch(r.t.Context(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		r.t.Fatalf("failed to acknowledge the drain of %s: %v", obj.GetName(), err)
	}
}

// unsafeMoves returns the moves that broke the protocol's invariant: a main object left a shard
// that was still available without being drained first.
func unsafeMoves(moves []sharder.Move) []sharder.Move {
	var unsafe []sharder.Move
	for _, m := range moves {
		if !m.Controlled && m.From != "" && m.FromState.Available() && !m.Drain {
			unsafe = append(unsafe, m)
		}
	}
	return unsafe
}

func objects[T client.Object](objs ...[]T) []client.Object {
	var out []client.Object
	for _, list := range objs {
		for _, obj := range list {
			out = append(out, obj)
		}
	}
	return out
}

// assignedAndFollowing waits until every owner is on one of shards and every child on its
// owner's shard, and returns where they are.
func (r *testRing) assignedAndFollowing(owners []*corev1.ConfigMap, children []*corev1.Secret, shards ...string) placement {
	r.t.Helper()
	var p placement
	NewWithT(r.t).Eventually(func(g Gomega) {
		p = r.placementOf(g, append(objects(owners), objects(children)...)...)
		for i, owner := range owners {
			g.Expect(p.shard[owner.Name]).To(BeElementOf(shards), "ConfigMap %s", owner.Name)
			g.Expect(p.shard[children[i].Name]).To(Equal(p.shard[owner.Name]), "Secret %s follows its owner", children[i].Name)
		}
		g.Expect(p.drain).To(BeEmpty())
	}).WithTimeout(settle).Should(Succeed())
	return p
}

func TestObjectsAreAssignedAndControlledObjectsFollowTheirController(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r := startRing(t, []string{"shard-a", "shard-b", "shard-c"})

	owners, children, orphan := r.createObjects(objectsPerTest)

	p := r.assignedAndFollowing(owners, children, "shard-a", "shard-b", "shard-c")
	used := map[string]bool{}
	for _, owner := range owners {
		used[p.shard[owner.Name]] = true
	}
	g.Expect(used).To(HaveLen(3), "the objects spread over all three shards: %v", p.shard)
	g.Expect(r.placementOf(g, orphan).shard).To(HaveKeyWithValue("orphan", ""), "a Secret without a controller is not assigned")
	for _, m := range r.sharder.Moves() {
		g.Expect(m.From).To(BeEmpty(), "%s", m)
		g.Expect(m.Drain).To(BeFalse(), "%s", m)
	}
	g.Expect(r.sharder.Moves()).To(HaveLen(2 * objectsPerTest))
}

func TestAWatchingSharderAssignsObjectsAsTheyAppearWithoutWaitingForAPass(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	wc, err := client.NewWithWatch(env.Config(), client.Options{Scheme: env.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	// No pass runs after the first one within the test: whatever is assigned later, the watches
	// assigned.
	r := startRingWith(t, wc, []string{"shard-a", "shard-b"}, func(o *sharder.Options) { o.SyncPeriod = time.Hour })
	first, firstChildren, _ := r.createObjects(1)
	r.assignedAndFollowing(first, firstChildren, "shard-a", "shard-b")

	// The first pass listed its ConfigMaps before it assigned the first one: only the watches can
	// assign the ConfigMaps created now.
	owners, children := r.createPairs("more", objectsPerTest)
	before := r.assignedAndFollowing(owners, children, "shard-a", "shard-b")

	// A ConfigMap its shard let go of (as after a drain) goes back on the ring at once.
	r.acknowledgeDrain(owners[0])
	after := r.assignedAndFollowing(owners, children, "shard-a", "shard-b")
	g.Expect(after).To(Equal(before), "the ring has not changed, so neither has any shard")

	// The sharder records a move once the API server has answered, which may be after the test
	// read the label.
	g.Eventually(r.sharder.Moves).WithTimeout(settle).Should(HaveLen(2*(1+objectsPerTest)+1),
		"each object assigned once, the let-go ConfigMap twice")
	moves := r.sharder.Moves()
	for _, m := range moves {
		g.Expect(m.From).To(BeEmpty(), "%s", m)
	}
	g.Expect(unsafeMoves(moves)).To(BeEmpty())
}

func TestAddingAShardDrainsTheMainObjectsItTakesOver(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	r := startRing(t, []string{"shard-a", "shard-b"})
	owners, children, _ := r.createObjects(objectsPerTest)
	before := r.assignedAndFollowing(owners, children, "shard-a", "shard-b")

	r.addShards("shard-c")

	// The ConfigMaps that shard-c takes over are drained, not moved; their Secrets move at once.
	var drained []*corev1.ConfigMap
	g.Eventually(func(g Gomega) {
		drained = nil
		p := r.placementOf(g, append(objects(owners), objects(children)...)...)
		for i, owner := range owners {
			g.Expect(p.shard[owner.Name]).To(Equal(before.shard[owner.Name]), "ConfigMap %s stays until its shard lets go", owner.Name)
			if _, draining := p.drain[owner.Name]; draining {
				drained = append(drained, owner)
				g.Expect(p.shard[children[i].Name]).To(Equal("shard-c"), "Secret of drained ConfigMap %s", owner.Name)
			} else {
				g.Expect(p.shard[children[i].Name]).To(Equal(before.shard[owner.Name]), "Secret of ConfigMap %s", owner.Name)
			}
		}
		g.Expect(drained).NotTo(BeEmpty())
	}).WithTimeout(settle).Should(Succeed())
	// Later passes do not drain again.
	g.Expect(r.sharder.Sync(ctx)).To(Succeed())
	g.Expect(r.sharder.Sync(ctx)).To(Succeed())
	drains := 0
	for _, m := range r.sharder.Moves() {
		if m.Drain {
			drains++
			g.Expect(m.FromState).To(Equal(sharder.Ready), "%s", m)
			g.Expect(m.To).To(Equal("shard-c"), "%s", m)
		}
	}
	g.Expect(drains).To(Equal(len(drained)), "one drain per ConfigMap")

	for _, owner := range drained {
		r.acknowledgeDrain(owner)
	}

	g.Eventually(func(g Gomega) {
		p := r.placementOf(g, objects(owners)...)
		for _, owner := range owners {
			want := before.shard[owner.Name]
			if slices.Contains(drained, owner) {
				want = "shard-c"
			}
			g.Expect(p.shard[owner.Name]).To(Equal(want), "ConfigMap %s", owner.Name)
		}
		g.Expect(p.drain).To(BeEmpty())
	}).WithTimeout(settle).Should(Succeed())
	g.Expect(unsafeMoves(r.sharder.Moves())).To(BeEmpty())
}

func TestAShardThatStopsRenewingIsAcquiredAndItsObjectsMoveWithoutDrain(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	r := startRing(t, []string{"shard-a", "shard-b", "shard-c"})
	owners, children, _ := r.createObjects(objectsPerTest)
	all := append(objects(owners), objects(children)...)
	before := r.assignedAndFollowing(owners, children, "shard-a", "shard-b", "shard-c")
	g.Expect(before.shard).To(ContainElement("shard-a"))

	// shard-a's Lease expires; an expired shard keeps its objects.
	r.clock.Step(15 * time.Second)
	r.renew("shard-b", "shard-c")
	g.Expect(r.sharder.Sync(ctx)).To(Succeed())
	g.Expect(r.sharder.Shards(ctx)).To(Equal([]sharder.Shard{
		{Name: "shard-a", State: sharder.Expired}, {Name: "shard-b", State: sharder.Ready}, {Name: "shard-c", State: sharder.Ready},
	}))
	g.Expect(r.placementOf(g, all...)).To(Equal(before))

	// Twice its duration after its last renewal, the sharder acquires it and moves its objects.
	r.clock.Step(5 * time.Second)
	r.renew("shard-b", "shard-c")
	g.Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "shard-a"}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("shardlease-controller")))
		p := r.placementOf(g, all...)
		for _, obj := range all {
			if from := before.shard[obj.GetName()]; from == "shard-a" {
				g.Expect(p.shard[obj.GetName()]).To(BeElementOf("shard-b", "shard-c"), "%s moved off the dead shard", obj.GetName())
			} else {
				g.Expect(p.shard[obj.GetName()]).To(Equal(from), "%s stays", obj.GetName())
			}
		}
		g.Expect(p.drain).To(BeEmpty(), "nothing is drained from a dead shard")
	}).WithTimeout(settle).Should(Succeed())
	for _, m := range r.sharder.Moves() {
		if m.From != "" {
			g.Expect(m).To(And(
				HaveField("From", "shard-a"), HaveField("FromState", sharder.Dead), HaveField("Drain", false)), "%s", m)
		}
	}
	g.Expect(unsafeMoves(r.sharder.Moves())).To(BeEmpty())
}

func TestMoveWithoutDrainMovesMainObjectsOffAvailableShards(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r := startRing(t, []string{"shard-a", "shard-b"}, func(o *sharder.Options) { o.MoveWithoutDrain = true })
	owners, children, _ := r.createObjects(objectsPerTest)
	before := r.assignedAndFollowing(owners, children, "shard-a", "shard-b")

	r.addShards("shard-c")

	g.Eventually(func(g Gomega) {
		p := r.placementOf(g, objects(owners)...)
		g.Expect(p.shard).To(ContainElement("shard-c"))
		g.Expect(p.drain).To(BeEmpty())
		for _, owner := range owners {
			g.Expect(p.shard[owner.Name]).To(BeElementOf(before.shard[owner.Name], "shard-c"))
		}
	}).WithTimeout(settle).Should(Succeed())
	unsafe := unsafeMoves(r.sharder.Moves())
	g.Expect(unsafe).NotTo(BeEmpty(), "the invariant check catches the negative control")
	for _, m := range unsafe {
		g.Expect(m.FromState).To(Equal(sharder.Ready))
		g.Expect(m.To).To(Equal("shard-c"))
	}
}
