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

// Package sharder is a test tool, not a product: a small reference implementation of the sharder
// side of the controller-sharding protocol of github.com/timebertt/kubernetes-controller-sharding,
// so that tests can run sharded operators on envtest, which has no sharder. Production clusters
// run that project's sharder; do not deploy this one. It imports nothing of that project and needs
// none of its CRDs or webhooks.
//
// A sharded operator runs several instances, the shards of a ring. Each shard announces itself
// with a Lease and reconciles only the objects labelled with its name; the sharder decides which
// shard gets which object, and moves objects between shards without two of them reconciling one
// object at the same time. With this package, a test plays the sharder's part with a [Sharder], and
// the operator under test (or the test itself) plays the shards'.
//
// # The protocol
//
// A shard of ring R keeps a coordination.k8s.io/v1 Lease named after itself, labelled
// sharding.RingLabel: R, whose holderIdentity is its own name and whose renewTime and
// leaseDurationSeconds it renews. The sharder judges each Lease by its own clock
// ([Options.Clock]) and gives the shard a [ShardState]; it acquires the Lease of a shard that has
// not renewed it for twice its duration, which makes the shard Dead until it takes its Lease
// back, and deletes the Lease of a Dead shard a minute after it expired.
//
// Each object of a main kind of the ring ([Resource.Object]) is placed on a consistent hash ring
// of the available shards by its group, kind, namespace and name; each object of a controlled kind
// ([Resource.Controlled]) by those of its controller, so that it lands on its controller's shard. The
// ring is the reference sharder's (xxhash64, 100 virtual nodes per shard), so an object lands on
// the same shard in both; [ShardFor] names that shard, so that a test can choose names that reach
// every shard of a ring (a few objects can all hash to the same shards, and a shard that joins
// then takes nothing). An object's shard is the value of its shard label. When it is not the
// shard the ring wants, [Sharder.Sync] writes:
//
//	object                                     its current shard     write
//	main                                       available             drain: add the drain label (once), keep the shard label
//	main                                       none, or unavailable  move: set the shard label, remove the drain label
//	controlled, with a controller reference    any                   move: set the shard label, remove the drain label
//	controlled, without a controller reference -                     none: it is never assigned
//
// A shard acknowledges a drain by removing both labels from the object in one write, once it has
// stopped reconciling it; the next pass assigns the object to its new shard. While no shard is
// available, objects keep their labels. Every write is a merge patch that carries the
// resourceVersion the sharder read; an object that changed since is left for the next pass.
//
// # Using it in a test
//
// Give the sharder a client that reads from the API server, the ring, and its kinds, and run it
// for the test:
//
//	s, err := sharder.New(env.Client(), sharder.Options{
//		Ring:           "widgets",
//		LeaseNamespace: ns,
//		Namespaces:     []string{ns},
//		Resources:      []sharder.Resource{{Object: &v1.Widget{}, Controlled: []client.Object{&corev1.ConfigMap{}}}},
//		Clock:          fakeClock,
//	})
//	// ...
//	go func() { _ = s.Start(t.Context()) }()
//
// The shards are the operator's instances, each maintaining its Lease (controller-runtime's leader
// election on a Lease of its own, labelled with the ring: sharding.ForManager), watching objects
// with a label selector on the shard label (sharding.Shard.SelectCache), and acknowledging drains
// (sharding.Shard.Reconciler); or the test writes Leases and removes labels itself.
// [Sharder.Shards] reports the shards' states, and [Sharder.Moves] every change the sharder made,
// for checking the invariants of a run. Step the fake clock past a Lease's renewTime plus twice its
// duration to kill a shard without waiting. [Options.MoveWithoutDrain] breaks the protocol on
// purpose, so that a test can prove its invariant checker notices.
//
// # How it differs from the reference sharder
//
//   - No webhook: a new object, and a drained one its shard has let go of, is assigned just
//     after it is written, not at admission. With a client that can watch (client.NewWithWatch),
//     [Sharder.Start] watches the objects without a shard label and assigns each one as it
//     appears; with one that cannot, the next pass does, up to [Options.SyncPeriod] later. The
//     reference sharder's webhook assigns the same shard. A shard sees no difference but the
//     delay, during which a new child is missing from its shard's cache: an operator that writes
//     it again meanwhile (an apply it cannot prove a no-op) sends writes the reference sharder
//     would have spared it, so a test that counts writes should give the sharder a watching
//     client.
//   - No controller that watches Leases: the sharder acts on a change of a shard's state (a new
//     Lease, a step of the fake clock) in its next pass, which also runs on real time.
//   - No ControllerRing: [Options] holds the ring's name, kinds and namespaces (a list, not a
//     label selector), and nothing reports the ring's status.
//   - It does not maintain the state label of Leases, exports no metrics, and does its writes one
//     after the other.
//   - It lists from etcd (a quorum read), not from the API server's watch cache, so that it
//     conflicts less; and it judges a Lease without an acquireTime by its renewTime.
//   - It is not built for scale: each pass lists every object of every kind of the ring.
//   - It does not check the shards as it runs: whether a shard reconciles only its objects, and
//     stops before it acknowledges a drain, is for the test to assert afterwards, with
//     [Sharder.Moves] and the objects.
//
// # Checking the shards
//
// The invariant of a sharded operator is that every write to an object, or to an object that
// belongs to it, comes from the shard that held the object at that moment. [Epochs] cuts each
// object's epochs from [Sharder.Moves] and from when a witness that sees every request received
// the sharder's writes; [Covered] tells whether a shard's write falls inside one of them. On
// envtest, tenon's testing/testenv records the API server's audit log: give the sharder and each
// shard a user agent or a user of their own, read the requests between two marks, and check
// each shard's successful writes:
//
//	epochs, err := sharder.Epochs(s.Moves(), schema.GroupKind{Kind: "ConfigMap"}, sharderWrites)
//	// ...
//	for _, e := range events { // the shards' successful writes
//		if !sharder.Covered(epochs[ownerOf(e)], shardOf(e), e.Received) {
//			t.Errorf("%s %s/%s by %s outside its epochs", e.Verb, e.Namespace, e.Name, shardOf(e))
//		}
//	}
package sharder
