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

package kubelet_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"
)

// The simulator makes one replica ready every ReplicaDelay and asks to come back when the next
// one is due; with a fake clock the rollout can be stepped through.
func ExampleSimulator() {
	ctx := context.Background()
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 1},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
	}
	c := fake.NewClientBuilder().WithObjects(sts).WithStatusSubresource(sts).Build()
	clock := clocktesting.NewFakePassiveClock(time.Unix(1700000000, 0))
	sim := &kubelet.Simulator{Client: c, ReplicaDelay: time.Second, Clock: clock}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "demo"}}

	for range 4 {
		res, err := sim.Reconcile(ctx, req)
		if err != nil {
			panic(err)
		}
		_ = c.Get(ctx, client.ObjectKeyFromObject(sts), sts)
		fmt.Printf("ready %d of 3, next in %s\n", sts.Status.ReadyReplicas, res.RequeueAfter)
		clock.SetTime(clock.Now().Add(time.Second))
	}
	// Output:
	// ready 0 of 3, next in 1s
	// ready 1 of 3, next in 1s
	// ready 2 of 3, next in 1s
	// ready 3 of 3, next in 0s
}
