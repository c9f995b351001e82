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

package finalizer_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func ExampleEnsure() {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Finalizers: []string{"other.example.com/keep"}}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()

	added, err := finalizer.Ensure(ctx, c, cm, "apps.example.com/cleanup")
	fmt.Println(added, err, cm.Finalizers)

	// Already there: nothing is sent.
	added, err = finalizer.Ensure(ctx, c, cm, "apps.example.com/cleanup")
	fmt.Println(added, err)

	removed, err := finalizer.Remove(ctx, c, cm, "apps.example.com/cleanup")
	fmt.Println(removed, err, cm.Finalizers)

	// A name that could collide with another controller's is refused.
	_, err = finalizer.Ensure(ctx, c, cm, "cleanup")
	fmt.Println(err)

	// Output:
	// true <nil> [other.example.com/keep apps.example.com/cleanup]
	// false <nil>
	// true <nil> [other.example.com/keep]
	// invalid finalizer name "cleanup": use a domain-qualified name such as "example.com/cleanup" so that it cannot collide with another controller's finalizer
}

func ExampleLifecycle() {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()

	recordDeleted := false
	lifecycle := &finalizer.Lifecycle[*corev1.ConfigMap]{
		Finalizer: "apps.example.com/cleanup",
		Client:    c,
		Steps: []finalizer.Step[*corev1.ConfigMap]{
			{Name: "dns-record", Run: func(ctx context.Context, cm *corev1.ConfigMap) (finalizer.Progress, error) {
				if !recordDeleted {
					recordDeleted = true // ask the DNS provider to delete the record
					return finalizer.Waiting(5*time.Second, "waiting for the record deletion to propagate"), nil
				}
				return finalizer.Finished(), nil
			}},
		},
	}

	// While the object lives, Reconcile adds the finalizer and lets the caller go on.
	proceed, res, err := lifecycle.Reconcile(ctx, cm)
	fmt.Println("proceed:", proceed, res.RequeueAfter, err, cm.Finalizers)

	// Once it is deleted, the steps run; the first one needs time.
	_ = c.Delete(ctx, cm)
	_ = c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	proceed, res, err = lifecycle.Reconcile(ctx, cm)
	fmt.Println("proceed:", proceed, res.RequeueAfter, err)

	// Later, every step is done: the finalizer goes, and with it the object.
	proceed, res, err = lifecycle.Reconcile(ctx, cm)
	fmt.Println("proceed:", proceed, res.RequeueAfter, err)
	fmt.Println("gone:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})))

	// Output:
	// proceed: true 0s <nil> [apps.example.com/cleanup]
	// proceed: false 5s <nil>
	// proceed: false 0s <nil>
	// gone: true
}

// deletedWidget returns a client holding a Widget (a custom resource with conditions) that was
// deleted 20 minutes ago and is held by the finalizer apps.example.com/cleanup.
func deletedWidget() (client.Client, *testtypes.Widget) {
	scheme := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(scheme))
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{
		Name: "demo", Namespace: "default", Generation: 2,
		DeletionTimestamp: &metav1.Time{Time: time.Now().Add(-20 * time.Minute)},
		Finalizers:        []string{"apps.example.com/cleanup"},
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(w).WithObjects(w).WithReturnManagedFields().Build()
	return c, w
}

// A cleanup step that cannot finish, because the external system it cleans up is down. Within
// the Timeout the error is retried with backoff; after it, the object is marked Stalled and
// retried rarely, without an error, instead of failing noisily forever.
func ExampleLifecycle_timeout() {
	ctx := context.Background()
	c, w := deletedWidget()
	recorder := events.NewFakeRecorder(10)
	lifecycle := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: "apps.example.com/cleanup",
		Client:    c,
		Recorder:  recorder,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, errors.New("dns api: 503 service unavailable")
		}}},
		Timeout: 15 * time.Minute,
	}

	proceed, res, err := lifecycle.Reconcile(ctx, w)
	fmt.Println("proceed:", proceed, "requeue after:", res.RequeueAfter, "error:", err)
	for _, t := range []conditions.Type{conditions.Deleting, conditions.Stalled} {
		c := conditions.Get(w, t)
		fmt.Printf("%s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for range len(recorder.Events) {
		fmt.Println("event:", <-recorder.Events)
	}

	// Output:
	// proceed: false requeue after: 10m0s error: <nil>
	// Deleting=True CleanupFailed: step dns-record failed: dns api: 503 service unavailable
	// Stalled=True CleanupTimedOut: cleanup did not finish within 15m0s of deletion: step dns-record failed: dns api: 503 service unavailable
	// event: Warning CleanupFailed step dns-record failed: dns api: 503 service unavailable
	// event: Warning CleanupTimedOut cleanup did not finish within 15m0s of deletion; retrying every 10m0s: step dns-record failed: dns api: 503 service unavailable
}

// The escape hatch: the external system is gone for good, so the step will never be done. A
// person sets finalizer.tenon.dev/release to the finalizer's name; a Lifecycle with
// AllowRelease removes its finalizer and says on record what may have been left behind.
func ExampleLifecycle_release() {
	ctx := context.Background()
	c, w := deletedWidget()
	recorder := events.NewFakeRecorder(10)
	lifecycle := &finalizer.Lifecycle[*testtypes.Widget]{
		Finalizer: "apps.example.com/cleanup",
		Client:    c,
		Recorder:  recorder,
		Steps: []finalizer.Step[*testtypes.Widget]{{Name: "dns-record", Run: func(context.Context, *testtypes.Widget) (finalizer.Progress, error) {
			return finalizer.Progress{}, errors.New("dns api: account closed")
		}}},
		AllowRelease: true,
	}
	_, _, err := lifecycle.Reconcile(ctx, w)
	fmt.Println("error:", err)
	<-recorder.Events

	// kubectl annotate widgets/demo finalizer.tenon.dev/release=apps.example.com/cleanup
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, finalizer.ReleaseAnnotation, "apps.example.com/cleanup")
	_ = c.Update(ctx, w, client.FieldOwner("kubectl-annotate"))

	_, _, err = lifecycle.Reconcile(ctx, w)
	fmt.Println("error:", err)
	fmt.Println("event:", <-recorder.Events)
	fmt.Println("gone:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(w), &testtypes.Widget{})))

	// Output:
	// error: dns api: account closed
	// error: <nil>
	// event: Warning FinalizerReleased finalizer released by the finalizer.tenon.dev/release annotation (set by kubectl-annotate) before cleanup completed; steps dns-record may have left resources behind (last progress: step dns-record failed: dns api: account closed)
	// gone: true
}
