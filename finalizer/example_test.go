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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/finalizer"
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
					return finalizer.InProgress(5*time.Second, "waiting for the record deletion to propagate"), nil
				}
				return finalizer.Done(), nil
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
