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
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/sharding"
	"github.com/tenon-dev/tenon/testing/sharder"
)

// exampleLease is the Lease of shard name of ring "configs", renewed at renewed for 10 seconds,
// as the shard writes it.
func exampleLease(name string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{sharding.RingLabel: "configs"}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(name),
			LeaseDurationSeconds: ptr.To[int32](10),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// A ring of ConfigMaps, each controlling Secrets, grows from two shards to three. The ConfigMap
// that the new shard takes over is drained first, and assigned to it once its old shard has let
// go; its Secret moves at once, as a controlled object.
func Example() {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	queue := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "queue", UID: "uid-queue"}}
	credentials := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "queue-credentials",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "queue", UID: "uid-queue", Controller: ptr.To(true)}}}}
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	c := fake.NewClientBuilder().
		WithObjects(exampleLease("shard-a", now), exampleLease("shard-b", now), queue, credentials, web).
		Build()

	s, err := sharder.New(c, sharder.Options{
		Ring:           "configs",
		LeaseNamespace: "default",
		Resources:      []sharder.Resource{{Object: &corev1.ConfigMap{}, Controlled: []client.Object{&corev1.Secret{}}}},
		Clock:          clocktesting.NewFakeClock(now),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	seen := 0
	sync := func(title string) {
		if err := s.Sync(ctx); err != nil {
			fmt.Println(err)
		}
		fmt.Println(title)
		for _, m := range s.Moves()[seen:] {
			fmt.Println(" ", m)
		}
		seen = len(s.Moves())
	}

	sync("two shards:")
	_ = c.Create(ctx, exampleLease("shard-c", now))
	sync("shard-c joins:")
	// shard-b acknowledges the drain: it stops reconciling queue and removes both labels.
	_ = c.Get(ctx, client.ObjectKeyFromObject(queue), queue)
	delete(queue.Labels, sharding.ShardLabelPrefix+"configs")
	delete(queue.Labels, sharding.DrainLabelPrefix+"configs")
	_ = c.Update(ctx, queue)
	sync("shard-b let go of queue:")

	// Output:
	// two shards:
	//   assign ConfigMap default/queue: unassigned -> shard-b
	//   assign ConfigMap default/web: unassigned -> shard-a
	//   assign Secret default/queue-credentials: unassigned -> shard-b
	// shard-c joins:
	//   drain ConfigMap default/queue: shard-b (ready) -> shard-c
	//   move Secret default/queue-credentials: shard-b (ready) -> shard-c
	// shard-b let go of queue:
	//   assign ConfigMap default/queue: unassigned -> shard-c
}

// A shard that stops renewing its Lease is expired, then uncertain; the next pass acquires its
// Lease, and the shard is dead.
func ExampleSharder_Shards() {
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	c := fake.NewClientBuilder().WithObjects(exampleLease("shard-a", clock.Now())).Build()
	s, err := sharder.New(c, sharder.Options{
		Ring:      "configs",
		Resources: []sharder.Resource{{Object: &corev1.ConfigMap{}}},
		Clock:     clock,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(when string) {
		shards, err := s.Shards(ctx)
		if err != nil {
			fmt.Println(err)
		}
		fmt.Println(when, shards)
	}

	show("renewed:")
	clock.Step(10 * time.Second)
	show("10s later:")
	clock.Step(10 * time.Second)
	show("20s later:")
	if err := s.Sync(ctx); err != nil {
		fmt.Println(err)
	}
	show("after a pass:")
	lease := &coordinationv1.Lease{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "shard-a"}, lease)
	fmt.Println("holder:", *lease.Spec.HolderIdentity)

	// Output:
	// renewed: [{shard-a ready}]
	// 10s later: [{shard-a expired}]
	// 20s later: [{shard-a uncertain}]
	// after a pass: [{shard-a dead}]
	// holder: shardlease-controller
}

// New names every option that is wrong.
func ExampleNew() {
	_, err := sharder.New(fake.NewClientBuilder().Build(), sharder.Options{
		Ring:       "Configs",
		Namespaces: []string{"team_a"},
	})
	fmt.Println(err)

	// Output:
	// invalid sharder options: Ring "Configs" is not a lower-case DNS subdomain; Namespaces[0] "team_a" is not a lower-case DNS label; Resources is empty
}

// The invariant of a sharded operator, checked against a witness of its requests: every write
// to an object comes from the shard that held it. The times are the witness's; in a test on
// envtest they come from the API server's audit log (testenv.AuditEvent.Received), the
// sharder's writes told apart from the shards' by their user or user agent.
func ExampleEpochs() {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	web := client.ObjectKey{Namespace: "default", Name: "web"}
	kind := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	moves := []sharder.Move{ // s.Moves() after the run
		{Kind: kind, Object: web, To: "shard-a"},
		{Kind: kind, Object: web, From: "shard-a", To: "shard-b", Drain: true},
		{Kind: kind, Object: web, To: "shard-b"},
	}
	sharderWrites := map[client.ObjectKey][]time.Time{web: {at(1), at(5), at(6)}}
	epochs, err := sharder.Epochs(moves, kind.GroupKind(), sharderWrites)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(epochs[web])

	writes := []struct {
		shard string
		at    time.Time
	}{{"shard-a", at(2)}, {"shard-a", at(5)}, {"shard-a", at(7)}, {"shard-b", at(7)}}
	for _, w := range writes {
		fmt.Printf("%s at %ds: covered %t\n", w.shard, w.at.Second(), sharder.Covered(epochs[web], w.shard, w.at))
	}

	// Output:
	// [shard-a 12:00:01.000–12:00:06.000 shard-b 12:00:06.000–…]
	// shard-a at 2s: covered true
	// shard-a at 5s: covered true
	// shard-a at 7s: covered false
	// shard-b at 7s: covered true
}

// ShardFor tells where the sharder places an object: here, the ConfigMap of the package example
// before and after shard-c joins the ring.
func ExampleShardFor() {
	configMaps := schema.GroupKind{Kind: "ConfigMap"}
	queue := client.ObjectKey{Namespace: "default", Name: "queue"}
	fmt.Println(sharder.ShardFor([]string{"shard-a", "shard-b"}, configMaps, queue))
	fmt.Println(sharder.ShardFor([]string{"shard-a", "shard-b", "shard-c"}, configMaps, queue))
	// Output:
	// shard-b
	// shard-c
}
