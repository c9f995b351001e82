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

// Package sharding runs an operator as several shards that share the objects of its kinds,
// each writing only the objects assigned to it: the shard side of the protocol of the sharder
// of github.com/timebertt/kubernetes-controller-sharding (a ControllerRing, one Lease per shard,
// a shard label that assigns each object, and a drain label that moves it off its shard). The
// sharder itself, a separate component with a webhook, assigns and moves objects; this package
// is what runs in the operator, without importing the sharder's module. Where the API server
// has the ShardedListAndWatch feature gate on, [Ranges] runs a ring without a sharder: see "A
// ring sharded by the API server" below.
//
// Use it when one replica no longer holds or reconciles all objects: memory, CPU or the time a
// full resync takes grow with the number of objects, and leader election leaves every other
// replica idle. Do not use it to gain availability (leader election already gives that), nor
// for an operator with a few hundred objects: each shard still holds every unsharded kind and
// its own informers, and a move costs a handover.
//
// # Opting in
//
// The operator's main kind and the kinds of the children it controls (owner reference with
// controller=true, in the owner's namespace) are the ring's resources and controlledResources.
// Four changes, all in the operator's main and SetupWithManager:
//
//	shard, err := sharding.New("cluster-operator", os.Getenv("POD_NAME")+"-"+rand.String(5))
//	// The shard's Lease is the leader election lock, fenced; the manager releases it on exit.
//	fence, err := sharding.ForManager(cfg, &opts, shard)
//	// The cache holds the shard's objects only, of the ring's kinds.
//	err = shard.SelectCache(&opts.Cache, &appsv1alpha1.Cluster{}, &appsv1.StatefulSet{}, &corev1.Service{})
//	mgr, err := ctrl.NewManager(cfg, opts)
//	// The main kind's events include the drain; the reconciler hands drained objects over.
//	r, err := shard.Reconciler(mgr.GetClient(), &appsv1alpha1.Cluster{}, reconciler)
//	ctrl.NewControllerManagedBy(mgr).
//		For(&appsv1alpha1.Cluster{}, builder.WithPredicates(shard.Predicate(predicate.GenerationChangedPredicate{}))).
//		Owns(&appsv1.StatefulSet{}).
//		Complete(r)
//
// # The handover
//
// An object is written by one shard at a time, the one that holds it. Its epoch at a shard
// begins when the shard label names the shard and ends when
//
//   - the shard acknowledges a drain: [Shard.Reconciler] removes the shard and drain labels
//     after the key's reconcile in flight returned, and never calls the reconciler for the
//     object again. The sharder drains an object when a shard joins or the ring rebalances;
//   - the shard releases its Lease when it stops ([ForManager] sets
//     LeaderElectionReleaseOnCancel): the fence closes before the release is sent, and the
//     sharder then moves the shard's objects without a drain;
//   - the shard loses its Lease: it did not renew it (paused, partitioned, overloaded), the
//     sharder took the Lease over and moves its objects without a drain. The fence of
//     [ForManager] closed before that, on the shard's own clock, as the next section shows.
//
// A shard name is one incarnation of a shard: give each start of the process a name of its own
// (the pod's name and a random suffix). A process that comes back under the name whose Lease it
// released, or whose Lease the sharder took over, acquires that Lease again at once and
// reconciles the objects still labelled with the name, while the sharder, which saw the name
// leave the ring, is moving them off it without a drain. The sharder deletes the Leases of
// names that stay dead for a minute.
//
// Children are written in the reconcile of their owner, so they follow it: a shard that does
// not hold the owner does not call the reconciler for it, whichever shard the sharder assigned
// the child to at that moment.
//
// # The fence against the sharder's clock
//
// The sharder reads the renewTime a shard writes into its Lease, from the shard's wall clock,
// and takes the Lease over once its own wall clock passes renewTime + 2 × leaseDuration. The
// fence closes leaseDuration − margin after the start of the last renewal, on the shard's
// monotonic clock (see package fencing; the margin defaults to a fifth of the lease duration).
// client-go reads the renewTime from the clock just before the lock sends the renewal, whose
// start opens the fence: ε, microseconds, earlier. With the sharder's clock ahead of the
// shard's by s, the takeover comes 2 × leaseDuration − s − ε after the fence opened, and the
// fence is closed by then when
//
//	s < leaseDuration + margin − ε
//
// which is 18 seconds for controller-runtime's default lease duration of 15 seconds. The bound
// is on the offset of the two wall clocks, not their rates: NTP keeps it to milliseconds, and a
// machine whose clock is off by 18 seconds has larger problems. A sharder whose clock is
// behind only takes over later. The fence's own assumptions (rates, pauses of the whole
// machine, writes in flight when it closes) are in package fencing.
//
// # What sharding changes in tenon's other packages
//
//   - Tracked children (another namespace, cluster-scoped, no controller reference) are never
//     assigned by the sharder: do not pass their kinds to [Shard.SelectCache], and pass
//     ownership.APIReader to ownership.DeleteTracked (finalizer.TrackedChildren), which then
//     deletes and counts from the API server what a selected cache cannot hold. For an owner
//     that carries the shard label, DeleteTracked requires it: without it, it returns an error
//     rather than report no child left, so the finalizer stays.
//   - patch.Applier never applies the shard and drain labels, so a desired child that copies
//     its owner's labels does not take the sharder's label over; the sharder's label on a child
//     belongs to another field manager and does not defeat the Applier's no-op proof.
//   - predicate.GenerationChangedPredicate drops label changes, the drain among them:
//     [Shard.Predicate] lets them through.
//   - Events and external calls happen in the reconcile of the shard that holds the object, so
//     once per transition, as without sharding: a shard that acknowledged a drain or was fenced
//     neither records nor calls. An external create interrupted by a takeover is resumed by the
//     next shard as after a crash (see package external).
//   - Memory a reconciler keeps per object (conditions/observe's metrics, patch.History) is
//     per shard: [Shard.Reconciler] calls the reconciler for an object that left the shard's
//     cache, which sees it gone and forgets it, as after a delete.
//
// # A ring sharded by the API server (KEP-5866)
//
// Kubernetes 1.36 added a shard selector to list and watch (the ShardedListAndWatch feature
// gate, alpha): the API server sends only the objects whose uid hashes (64-bit FNV-1a) into the
// ranges asked for. [Ranges] builds a ring on it with no sharder and no labels on the objects:
// the hash space is cut into slices, each guarded by a slice Lease whose holder works on the
// slice's objects; the shards agree on who should hold which slice from their own Leases
// (rendezvous hashing, each shard at most its fair share), give a slice up only after their
// reconciles of its objects returned, and take a slice only when it has no holder or its
// holder's Lease was released or went unrenewed for twice its duration, the sharder's takeover
// rule, with the same clock-skew bound. Every change of a slice Lease is a compare-and-swap,
// written through the fenced client.
//
//	shard, err := sharding.New("cluster-operator", os.Getenv("POD_NAME")+"-"+rand.String(5))
//	fence, err := sharding.ForManager(cfg, &opts, shard)
//	ranges, err := sharding.NewRanges(shard, sharding.RangeOptions{Namespace: opts.LeaderElectionNamespace})
//	// The cache lists and watches the main kind's objects of the held slices only.
//	err = ranges.SelectCache(&opts.Cache, &appsv1alpha1.Cluster{})
//	mgr, err := ctrl.NewManager(cfg, opts)
//	err = ranges.SetupWithManager(mgr) // moves slices while the shard holds its Lease
//	r, err := ranges.Reconciler(mgr.GetClient(), &appsv1alpha1.Cluster{}, reconciler)
//
// What differs from the sharder's ring:
//
//   - The API server hashes each object's own uid, so a child lands in another slice than its
//     owner: select the main kind only, and cache children whole (or by a label of your own).
//     The handover still covers them, since they are written by their owner's reconcile.
//   - The shards need the API server's feature gate. Without it the API server ignores the
//     selector silently: every shard caches every object, and the reconciler's own check of
//     each object's slice keeps the guarantee, without the savings.
//   - Slices move whole: more slices spread objects more evenly over more shards, and cost
//     one Lease each. A shard's cache takes a changed selector by listing again, seconds after
//     the slice moved (client-go's reflector backs off between lists).
//   - Objects enter and leave a shard only at handovers, not when their labels change, and no
//     webhook is involved.
//   - Each shard also lists the slices it works on in its own Lease ([SlicesAnnotation]), and
//     no shard takes a slice another shard's current Lease lists: a slice Lease deleted or
//     cleared by someone else is written back by its holder, not taken. Still, treat the
//     ring's Leases as the handover's record, as the sharder's labels are: give the shards'
//     service account alone the right to write them.
//
// # What this package does not do
//
//   - Assign or move objects: that is the sharder's. tenon's testing/sharder is a reference
//     sharder for tests on envtest, not for production.
//   - Cover work that a reconciler hands to goroutines outliving its Reconcile, or requests in
//     flight when the fence closes (package fencing says how late they can arrive).
//   - A manager runs all its controllers under one lock: sharded and unsharded controllers need
//     separate managers (processes).
package sharding
