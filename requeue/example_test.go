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

package requeue_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/requeue"
)

// WithBackoff decides what each error a reconciler returns means.
func ExampleWithBackoff_errors() {
	gr := schema.GroupResource{Group: "apps.example.com", Resource: "clusters"}
	var next error
	r := requeue.WithBackoff(reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		return ctrl.Result{}, next
	}), requeue.BackoffOptions{Name: "errors-example"})
	reconcileWith := func(err error) (ctrl.Result, error) {
		next = err
		return r.Reconcile(context.Background(), reconcile.Request{})
	}

	// A conflict is not a failure: requeue soon, return no error.
	res, err := reconcileWith(apierrors.NewConflict(gr, "demo", errors.New("the object has been modified")))
	fmt.Println("conflict:", res.RequeueAfter > 0, err)

	// The API server asks to slow down: wait as long as it says.
	res, err = reconcileWith(apierrors.NewTooManyRequests("slow down", 3))
	fmt.Println("throttled:", res.RequeueAfter, err)

	// An invalid request fails the same way every time: stop retrying.
	_, err = reconcileWith(apierrors.NewBadRequest("spec.replicas: must be odd"))
	fmt.Println("invalid: terminal =", errors.Is(err, reconcile.TerminalError(nil)))

	// Anything else is returned for controller-runtime to retry with backoff.
	_, err = reconcileWith(errors.New("dial tcp 10.0.0.7:443: connection refused"))
	fmt.Println("other:", err)

	// Output:
	// conflict: true <nil>
	// throttled: 3s <nil>
	// invalid: terminal = true
	// other: dial tcp 10.0.0.7:443: connection refused
}

func ExampleResults() {
	// The steps of a reconcile each return a result.
	reconcileConfig := requeue.Done
	reconcileDNS := func() (ctrl.Result, error) { return requeue.After(30 * time.Second) }
	reconcileCertificate := func() (ctrl.Result, error) { return requeue.After(10 * time.Minute) }

	var results requeue.Results
	results.Add(reconcileConfig())
	results.Add(reconcileDNS())
	results.Add(reconcileCertificate())
	res, err := results.Merge()
	fmt.Println(res.RequeueAfter, err)

	// One step fails: the error wins, and it is retried.
	results.Add(ctrl.Result{}, errors.New("dns api: 503"))
	res, err = results.Merge()
	fmt.Println(res.RequeueAfter, err, errors.Is(err, reconcile.TerminalError(nil)))

	// Output:
	// 30s <nil>
	// 0s dns api: 503 false
}

func ExampleWithBackoff() {
	notReady := 0
	r := reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		if notReady < 3 {
			notReady++
			return requeue.Retry("waiting for the database") // a dependency is not ready yet
		}
		return requeue.Done()
	})
	wrapped := requeue.WithBackoff(r, requeue.BackoffOptions{Name: "example"})

	req := reconcile.Request{}
	for range 4 {
		res, _ := wrapped.Reconcile(context.Background(), req)
		fmt.Println(res.RequeueAfter)
	}

	// Output:
	// 1s
	// 2s
	// 4s
	// 0s
}

func ExamplePoll() {
	res, _ := requeue.Poll(time.Minute)
	fmt.Println(res.RequeueAfter >= time.Minute, res.RequeueAfter < 66*time.Second)

	// Output:
	// true true
}

// Report writes what a reconcile returned into the object's conditions, so that `kubectl get`,
// kstatus-based tools and alerts see what the logs say.
func ExampleReport() {
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 4}}
	show := func(outcome string) {
		kstatus, _, _ := conditions.Compute(w)
		fmt.Printf("%-10s kstatus=%-10s observedGeneration=%d", outcome, kstatus, w.Status.ObservedGeneration)
		for _, c := range w.Status.Conditions {
			fmt.Printf(" %s=%s(%s)", c.Type, c.Status, c.Reason)
		}
		fmt.Println()
	}

	// A transient failure: retried, and Reconciling says why; Ready is left alone.
	_ = requeue.Report(w, errors.New("dial tcp 10.0.0.7:443: connection refused"))
	show("transient")

	// A failure only a change of the spec can fix: Stalled, and Ready False.
	_, err := requeue.Terminal("InvalidStorageClass", errors.New("storage class fast does not exist"))
	_ = requeue.Report(w, err)
	show("terminal")

	// The user fixes the spec; the next reconcile gets going, the replicas are not up yet.
	w.Generation = 5
	_, _ = conditions.MarkFalse(w, conditions.Ready, "RollingOut", "1 of 3 replicas ready")
	_ = requeue.Report(w, nil)
	show("progress")

	// The replicas are up.
	_, _ = conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
	_ = requeue.Report(w, nil)
	show("done")

	// Output:
	// transient  kstatus=InProgress observedGeneration=0 Reconciling=True(RetryingAfterError)
	// terminal   kstatus=Failed     observedGeneration=4 Ready=False(InvalidStorageClass) Stalled=True(InvalidStorageClass)
	// progress   kstatus=InProgress observedGeneration=5 Ready=False(RollingOut) Reconciling=True(RollingOut)
	// done       kstatus=Current    observedGeneration=5 Ready=True(Succeeded)
}
