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

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"
)

// clusterReconciler is a reconciler with one Writer for all its reconciles.
type clusterReconciler struct {
	client.Client
	Writer *patch.Writer
	// provisioned stands for the state of the world: whether the cluster's machines are up.
	provisioned bool
}

// Reconcile ends every reconcile, however it returns, with Finish.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	cluster := &Cluster{}
	if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	h, err := r.Writer.NewHelper(cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { res, err = h.Finish(ctx, cluster, res, err) }()

	if !r.provisioned {
		conditions.MarkFalse(cluster, conditions.Ready, "Provisioning", "waiting for the machines")
		return ctrl.Result{}, errors.New("the machine API is unavailable")
	}
	conditions.MarkTrue(cluster, conditions.Ready, conditions.ReasonSucceeded, "all machines up")
	return ctrl.Result{}, nil
}

// Finish ends a reconcile: the error goes into Reconciling, the status is patched, and Ready's
// transition becomes an Event, only once it was written.
func ExampleHelper_Finish() {
	scheme := runtime.NewScheme()
	utilruntime.Must(AddToScheme(scheme))
	stored := &Cluster{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default", Generation: 1}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&Cluster{}).WithObjects(stored).Build()
	recorder := events.NewFakeRecorder(10)
	r := &clusterReconciler{Client: c, Writer: patch.NewWriter(c, patch.WriterOptions{Recorder: recorder})}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stored)}
	show := func() {
		cluster := &Cluster{}
		_ = c.Get(context.Background(), req.NamespacedName, cluster)
		for _, cond := range cluster.Status.Conditions {
			fmt.Printf("  %s=%s %s\n", cond.Type, cond.Status, cond.Reason)
		}
		fmt.Println("  observedGeneration:", cluster.Status.ObservedGeneration)
		for len(recorder.Events) > 0 {
			fmt.Println("  event:", <-recorder.Events)
		}
	}

	fmt.Println("the machine API is down:")
	_, err := r.Reconcile(context.Background(), req)
	fmt.Println("  error:", err)
	show()

	fmt.Println("the machines are up:")
	r.provisioned = true
	_, err = r.Reconcile(context.Background(), req)
	fmt.Println("  error:", err)
	show()
	// Output:
	// the machine API is down:
	//   error: the machine API is unavailable
	//   Ready=False Provisioning
	//   Reconciling=True RetryingAfterError
	//   observedGeneration: 0
	// the machines are up:
	//   error: <nil>
	//   Ready=True Succeeded
	//   observedGeneration: 1
	//   event: Normal Succeeded Ready changed from False to True: all machines up
}
