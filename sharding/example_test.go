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

package sharding_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/sharding"
)

func ExampleNew() {
	// The ring is the ControllerRing's name; the shard's name is usually the pod's.
	shard, err := sharding.New("cluster-operator", "cluster-operator-5d8c7-x2k9q")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(shard.Selector())

	_, err = sharding.New("cluster-operator", "Cluster_Operator")
	fmt.Println(err != nil)
	// Output:
	// shard.alpha.sharding.timebertt.dev/cluster-operator=cluster-operator-5d8c7-x2k9q
	// true
}

func ExampleShard_SelectCache() {
	shard, _ := sharding.New("cluster-operator", "shard-0")
	opts := ctrl.Options{Cache: cache.Options{}}
	// The main kind and the kinds of the children it controls; not the kinds of tracked
	// children, which the sharder never assigns.
	if err := shard.SelectCache(&opts.Cache, &appsv1.Deployment{}, &appsv1.ReplicaSet{}); err != nil {
		fmt.Println(err)
		return
	}
	for obj, entry := range opts.Cache.ByObject {
		if _, ok := obj.(*appsv1.Deployment); ok {
			fmt.Println(entry.Label)
		}
	}
	// Output:
	// shard.alpha.sharding.timebertt.dev/cluster-operator=shard-0
}

func ExampleShard_Reconciler() {
	ctx := context.Background()
	shard, _ := sharding.New("cluster-operator", "shard-0")
	// The sharder asked shard-0 to let the Deployment go.
	c := fake.NewClientBuilder().WithObjects(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "web", UID: "5b6f",
		Labels: map[string]string{
			shard.ShardLabel(): "shard-0",
			shard.DrainLabel(): "true",
			"app":              "web",
		},
	}}).Build()

	business := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		fmt.Println("reconciled")
		return reconcile.Result{}, nil
	})
	r, err := shard.Reconciler(c, &appsv1.Deployment{}, business)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: "web"}}); err != nil {
		fmt.Println(err)
		return
	}
	live := &appsv1.Deployment{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, live)
	fmt.Println(live.Labels)
	// Output:
	// map[app:web]
}

// A ring the API server shards: the uid hash space cut into 4 slices. A shard that holds no
// slice yet selects one hash value of 2^64; the slice of an object is read from its uid, as the
// API server computes it.
func ExampleNewRanges() {
	shard, err := sharding.New("cluster-operator", "shard-a")
	if err != nil {
		fmt.Println(err)
		return
	}
	ranges, err := sharding.NewRanges(shard, sharding.RangeOptions{Namespace: "cluster-operator-system", Slices: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ranges.Selector())
	fmt.Println(ranges.SliceOf("7d3c9a52-5c1e-4b8e-9a57-3f2a1b0c9d8e"), ranges.Held())

	_, err = sharding.NewRanges(shard, sharding.RangeOptions{Slices: 3})
	fmt.Println(err)

	// Output:
	// shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')
	// 3 []
	// failed to build the ranges of shard cluster-operator/shard-a: the Leases' namespace is empty
	// the number of slices 3 is not a power of two from 1 to 1024
}
