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
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
)

// start is where the tests' fake clocks start.
var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// shardLease returns the Lease of shard name of ring in namespace ns, as a shard writes it:
// held by itself, renewed at renewed, for 10 seconds.
func shardLease(ns, ring, name string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{sharding.RingLabel: ring}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(name),
			LeaseDurationSeconds: ptr.To[int32](10),
			AcquireTime:          ptr.To(metav1.NewMicroTime(renewed)),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// configMap returns a ConfigMap in ns with labels.
func configMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

// secretOf returns a Secret in owner's namespace that owner controls.
func secretOf(owner *corev1.ConfigMap, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: name,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}}}
}

// configMapsWithSecrets are the kinds of the tests' rings: ConfigMaps that control Secrets.
var configMapsWithSecrets = []sharder.Resource{{Object: &corev1.ConfigMap{}, Controlled: []client.Object{&corev1.Secret{}}}}

// newFakeSharder returns a sharder of ring "configs" in namespace "default" on c, with a fake
// clock at start.
func newFakeSharder(t *testing.T, c client.Client, opts ...func(*sharder.Options)) (*sharder.Sharder, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(start)
	o := sharder.Options{Ring: "configs", LeaseNamespace: "default", Resources: configMapsWithSecrets, Clock: clk}
	for _, opt := range opts {
		opt(&o)
	}
	s, err := sharder.New(c, o)
	if err != nil {
		t.Fatalf("failed to create the sharder: %v", err)
	}
	return s, clk
}

// labelsOf returns the labels of the object of obj's kind and key.
func labelsOf(ctx context.Context, c client.Client, obj client.Object) map[string]string {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return map[string]string{"error": err.Error()}
	}
	return obj.GetLabels()
}

func TestNewNamesWhatIsWrong(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	valid := func() sharder.Options {
		return sharder.Options{Ring: "configs", Resources: configMapsWithSecrets}
	}
	for _, tc := range []struct {
		name   string
		change func(*sharder.Options)
		want   []string
	}{
		{name: "no ring", change: func(o *sharder.Options) { o.Ring = "" }, want: []string{"Ring is empty"}},
		{name: "a ring name too long for a label key", change: func(o *sharder.Options) { o.Ring = "r" + string(make([]byte, 63)) },
			want: []string{"longer than 63 characters"}},
		{name: "a ring name that is not a DNS subdomain", change: func(o *sharder.Options) { o.Ring = "Configs_1" },
			want: []string{`Ring "Configs_1" is not a lower-case DNS subdomain`}},
		{name: "an invalid lease namespace", change: func(o *sharder.Options) { o.LeaseNamespace = "kube.system" },
			want: []string{`LeaseNamespace "kube.system" is not a lower-case DNS label`}},
		{name: "an invalid namespace", change: func(o *sharder.Options) { o.Namespaces = []string{"a", "B"} },
			want: []string{`Namespaces[1] "B" is not a lower-case DNS label`}},
		{name: "no resources", change: func(o *sharder.Options) { o.Resources = nil }, want: []string{"Resources is empty"}},
		{name: "nil objects", change: func(o *sharder.Options) {
			o.Resources = []sharder.Resource{{}, {Object: &corev1.Pod{}, Controlled: []client.Object{nil}}}
		}, want: []string{"Resources[0].Object is nil", "Resources[1].Controlled[0] is nil"}},
		{name: "a negative sync period", change: func(o *sharder.Options) { o.SyncPeriod = -time.Second },
			want: []string{"SyncPeriod -1s is negative"}},
		{name: "every problem at once", change: func(o *sharder.Options) { o.Ring, o.Resources = "", nil },
			want: []string{"Ring is empty", "Resources is empty"}},
		{name: "a kind twice", change: func(o *sharder.Options) {
			o.Resources = []sharder.Resource{{Object: &corev1.ConfigMap{}}, {Object: &corev1.Pod{}, Controlled: []client.Object{&corev1.ConfigMap{}}}}
		}, want: []string{"kind ConfigMap appears twice"}},
		{name: "a kind the scheme does not know", change: func(o *sharder.Options) {
			o.Resources = []sharder.Resource{{Object: &metav1.PartialObjectMetadata{}}}
		}, want: []string{"failed to find the kind of *v1.PartialObjectMetadata"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := valid()
			tc.change(&o)
			s, err := sharder.New(c, o)
			g.Expect(s).To(BeNil())
			g.Expect(err).To(HaveOccurred())
			for _, want := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
		})
	}

	t.Run("no client", func(t *testing.T) {
		_, err := sharder.New(nil, valid())
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("client is nil")))
	})
	t.Run("the valid options", func(t *testing.T) {
		_, err := sharder.New(c, valid())
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
	})
}

func TestALeaseGoesThroughItsStatesOnTheSharderClock(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start)).Build()
	s, clk := newFakeSharder(t, c)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shard-a"}}
	shards := func() []sharder.Shard {
		shards, err := s.Shards(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		return shards
	}

	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Ready}}))
	clk.Step(10 * time.Second)
	g.Expect(s.Sync(ctx)).To(Succeed())
	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Expired}}))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("shard-a")), "an expired shard keeps its Lease")

	clk.Step(10 * time.Second)
	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Uncertain}}), "Shards only reads")
	g.Expect(s.Sync(ctx)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("shardlease-controller")))
	g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(20)))
	g.Expect(lease.Spec.RenewTime.Time).To(BeTemporally("==", clk.Now()))
	g.Expect(lease.Spec.AcquireTime.Time).To(BeTemporally("==", clk.Now()))
	g.Expect(lease.Spec.LeaseTransitions).To(HaveValue(BeEquivalentTo(1)))
	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Dead}}))

	// The acquired Lease expires after its doubled duration and is deleted a minute later.
	clk.Step(20*time.Second + time.Minute - time.Second)
	g.Expect(s.Sync(ctx)).To(Succeed())
	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Dead}}))
	clk.Step(time.Second)
	g.Expect(shards()).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Orphaned}}))
	g.Expect(s.Sync(ctx)).To(Succeed())
	g.Expect(shards()).To(BeEmpty())
}

func TestAShardThatRenewsFirstKeepsItsLease(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	var clk clock.PassiveClock
	renewals := 0
	// The shard renews its Lease between the sharder's read and its write.
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start)).
		WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if lease, ok := obj.(*coordinationv1.Lease); ok && renewals == 0 {
				renewals++
				renewed := shardLease(lease.Namespace, "configs", lease.Name, clk.Now())
				renewed.ResourceVersion = lease.ResourceVersion
				if err := c.Update(ctx, renewed); err != nil {
					return err
				}
			}
			return c.Update(ctx, obj, opts...)
		}}).Build()
	s, fc := newFakeSharder(t, c)
	clk = fc
	fc.Step(20 * time.Second)

	g.Expect(s.Sync(ctx)).To(Succeed(), "a conflict is not an error")

	g.Expect(renewals).To(Equal(1))
	g.Expect(s.Shards(ctx)).To(Equal([]sharder.Shard{{Name: "shard-a", State: sharder.Ready}}))
}

func TestObjectsKeepTheirLabelsWhileNoShardIsAvailable(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	released := shardLease("default", "configs", "shard-a", start)
	released.Spec.HolderIdentity = ptr.To("")
	draining := configMap("default", "draining", map[string]string{sharding.ShardLabelPrefix + ("configs"): "shard-a", sharding.DrainLabelPrefix + ("configs"): "true"})
	unassigned := configMap("default", "unassigned", nil)
	c := fake.NewClientBuilder().WithObjects(released, draining, unassigned).Build()
	s, _ := newFakeSharder(t, c)

	g.Expect(s.Sync(ctx)).To(Succeed())

	g.Expect(labelsOf(ctx, c, draining)).To(Equal(map[string]string{sharding.ShardLabelPrefix + ("configs"): "shard-a", sharding.DrainLabelPrefix + ("configs"): "true"}))
	g.Expect(labelsOf(ctx, c, unassigned)).To(BeEmpty())
	g.Expect(s.Moves()).To(BeEmpty())
}

func TestAControlledObjectFollowsItsControllerAndOneWithoutIsNotAssigned(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	owner := configMap("default", "web", nil)
	owner.UID = "uid-web"
	child := secretOf(owner, "web-tls")
	orphan := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan"}}
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start),
		shardLease("default", "configs", "shard-b", start), shardLease("default", "configs", "shard-c", start), owner, child, orphan).Build()
	s, _ := newFakeSharder(t, c)

	g.Expect(s.Sync(ctx)).To(Succeed())

	shard := labelsOf(ctx, c, owner)[sharding.ShardLabelPrefix+"configs"]
	g.Expect(shard).To(BeElementOf("shard-a", "shard-b", "shard-c"))
	g.Expect(labelsOf(ctx, c, child)).To(HaveKeyWithValue(sharding.ShardLabelPrefix+"configs", shard))
	g.Expect(labelsOf(ctx, c, orphan)).To(BeEmpty())
	g.Expect(s.Moves()).To(ConsistOf(
		sharder.Move{Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Object: client.ObjectKeyFromObject(owner), To: shard},
		sharder.Move{Kind: corev1.SchemeGroupVersion.WithKind("Secret"), Object: client.ObjectKeyFromObject(child), Controlled: true, To: shard},
	))
}

// ShardFor names the shard a pass assigns each object to, and the one a drain moves it to when
// a shard joins.
func TestShardForIsWhereTheSharderPlacesAnObject(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	shards := []string{"shard-a", "shard-b", "shard-c"}
	objs := []client.Object{shardLease("default", "configs", "shard-a", start), shardLease("default", "configs", "shard-b", start)}
	var owners []*corev1.ConfigMap
	for i := range 40 {
		owner := configMap("default", fmt.Sprintf("web-%d", i), nil)
		owner.UID = types.UID(fmt.Sprintf("uid-web-%d", i))
		owners = append(owners, owner)
		objs = append(objs, owner, secretOf(owner, owner.Name+"-tls"))
	}
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	s, _ := newFakeSharder(t, c)
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind()

	g.Expect(s.Sync(ctx)).To(Succeed())
	want, got := map[string]string{}, map[string]string{}
	for _, o := range owners {
		shard := sharder.ShardFor(shards[:2], configMaps, client.ObjectKeyFromObject(o))
		want[o.Name], want[o.Name+"-tls"] = shard, shard
		got[o.Name] = labelsOf(ctx, c, o)[sharding.ShardLabelPrefix+"configs"]
		got[o.Name+"-tls"] = labelsOf(ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: o.Name + "-tls"}})[sharding.ShardLabelPrefix+"configs"]
	}
	g.Expect(got).To(Equal(want))

	g.Expect(c.Create(ctx, shardLease("default", "configs", "shard-c", start))).To(Succeed())
	seen := len(s.Moves())
	g.Expect(s.Sync(ctx)).To(Succeed())
	drained := map[string]string{}
	for _, m := range s.Moves()[seen:] {
		if m.Drain {
			drained[m.Object.Name] = m.To
		}
	}
	wantDrained := map[string]string{}
	for _, o := range owners {
		if to := sharder.ShardFor(shards, configMaps, client.ObjectKeyFromObject(o)); to == "shard-c" {
			wantDrained[o.Name] = to
		}
	}
	g.Expect(wantDrained).NotTo(BeEmpty(), "40 ConfigMaps and not one on the third shard")
	g.Expect(drained).To(Equal(wantDrained))
	g.Expect(sharder.ShardFor(nil, configMaps, client.ObjectKey{Namespace: "default", Name: "web"})).To(BeEmpty())
}

func TestAnObjectThatChangedSinceItWasListedIsLeftForTheNextPass(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	web := configMap("default", "web", nil)
	changed := false
	// Someone else writes the object between the sharder's list and its patch.
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start), web).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if !changed {
				changed = true
				other := configMap("default", "web", map[string]string{"team": "a"})
				if err := c.Get(ctx, client.ObjectKeyFromObject(other), &corev1.ConfigMap{}); err != nil {
					return err
				}
				if err := c.Patch(ctx, other, client.MergeFrom(configMap("default", "web", nil))); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	s, _ := newFakeSharder(t, c)

	g.Expect(s.Sync(ctx)).To(Succeed(), "a conflict is not an error")
	g.Expect(labelsOf(ctx, c, web)).To(Equal(map[string]string{"team": "a"}))
	g.Expect(s.Moves()).To(BeEmpty())

	g.Expect(s.Sync(ctx)).To(Succeed())
	g.Expect(labelsOf(ctx, c, web)).To(Equal(map[string]string{"team": "a", sharding.ShardLabelPrefix + ("configs"): "shard-a"}))
	g.Expect(s.Moves()).To(HaveLen(1))
}

// A test that reads a label the sharder wrote and then calls Moves finds the move in it, even
// when it reads the label before the sharder has recorded the move.
func TestMovesHoldsAWriteTheAPIServerAcceptedBeforeItWasCalled(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	var s *sharder.Sharder
	early := make(chan []sharder.Move, 1)
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start), configMap("default", "web", nil)).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			// The API server has accepted the write; the sharder has not recorded it yet.
			go func() { early <- s.Moves() }()
			g.Consistently(early, 100*time.Millisecond).ShouldNot(Receive(), "Moves returned while a write it must hold was in flight")
			return nil
		}}).Build()
	s, _ = newFakeSharder(t, c)

	g.Expect(s.Sync(ctx)).To(Succeed())

	g.Eventually(early).Should(Receive(ConsistOf(HaveField("Object", client.ObjectKey{Namespace: "default", Name: "web"}))))
}

func TestAFailedWriteIsReportedAndThePassGoesOn(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	broken, fine := configMap("default", "broken", nil), configMap("default", "fine", nil)
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start), broken, fine).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if obj.GetName() == "broken" {
				return apierrors.NewInternalError(errors.New("etcd is on fire"))
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	s, _ := newFakeSharder(t, c)

	err := s.Sync(ctx)

	g.Expect(err).To(MatchError(ContainSubstring("failed to assign ConfigMap default/broken: unassigned -> shard-a")))
	g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "the error keeps its class: %v", err)
	g.Expect(labelsOf(ctx, c, fine)).To(HaveKeyWithValue(sharding.ShardLabelPrefix+"configs", "shard-a"))
}

func TestNamespacesRestrictTheShardedObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	inside, outside := configMap("team-a", "web", nil), configMap("team-b", "web", nil)
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start), inside, outside).Build()
	s, _ := newFakeSharder(t, c, func(o *sharder.Options) { o.Namespaces = []string{"team-a"} })

	g.Expect(s.Sync(ctx)).To(Succeed())

	g.Expect(labelsOf(ctx, c, inside)).To(HaveKeyWithValue(sharding.ShardLabelPrefix+"configs", "shard-a"))
	g.Expect(labelsOf(ctx, c, outside)).To(BeEmpty())
}

// controller-runtime's fake client can watch, but delivers typed objects and ignores the label
// selector: Start assigns the unlabelled ones it delivers all the same, and leaves labelled ones
// to the passes.
func TestStartWithTheFakeClientAssignsWhatItsWatchDelivers(t *testing.T) {
	g := NewWithT(t)
	c := fake.NewClientBuilder().WithObjects(shardLease("default", "configs", "shard-a", start),
		configMap("default", "before", nil)).Build()
	s, _ := newFakeSharder(t, c, func(o *sharder.Options) { o.SyncPeriod = time.Hour })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	defer func() {
		cancel()
		g.Expect(<-done).To(Succeed())
	}()
	g.Eventually(func() map[string]string { return labelsOf(ctx, c, configMap("default", "before", nil)) }).
		Should(HaveKeyWithValue(sharding.ShardLabelPrefix+"configs", "shard-a"))

	// No pass runs within the test after the first: only the watch can assign what follows. It
	// opens alongside the first pass, and the fake client's watch does not replay what was
	// created before it opened: create ConfigMaps until one is assigned.
	var created []*corev1.ConfigMap
	g.Eventually(func() []string {
		var assigned []string
		for _, cm := range created {
			if labelsOf(ctx, c, cm)[sharding.ShardLabelPrefix+"configs"] == "shard-a" {
				assigned = append(assigned, cm.Name)
			}
		}
		if len(assigned) == 0 {
			cm := configMap("default", fmt.Sprintf("after-%d", len(created)), nil)
			g.Expect(c.Create(ctx, cm)).To(Succeed())
			created = append(created, cm)
		}
		return assigned
	}).ShouldNot(BeEmpty())
	owner := created[len(created)-1]
	child := secretOf(owner, owner.Name+"-secret")
	g.Expect(c.Create(ctx, child)).To(Succeed())
	g.Eventually(func() map[string]string { return labelsOf(ctx, c, child) }).
		Should(HaveKeyWithValue(sharding.ShardLabelPrefix+"configs", "shard-a"))
	g.Expect(s.Moves()).To(ContainElement(HaveField("Object", client.ObjectKeyFromObject(child))))
}
