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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

// widgetReconciler keeps one Writer, with one History, for all its reconciles, as a
// controller's reconciler does.
type widgetReconciler struct {
	writer *patch.Writer
}

// reconcile marks w ready and patches it, as a Reconcile does with the object it read.
func (r *widgetReconciler) reconcile(ctx context.Context, w *testtypes.Widget) error {
	h, err := r.writer.NewHelper(w)
	if err != nil {
		return err
	}
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "all replicas ready")
	w.Status.ObservedGeneration = w.Generation
	return h.Patch(ctx, w, patch.OwnedConditions{conditions.Ready})
}

// A manager's cache may not have delivered a reconcile's own status write when the next
// reconcile of the object runs: that one reads the object as it was before, without the status.
// With the History, its Patch merges onto the object its own last write returned, finds the
// status already written and sends nothing; without it, it would send the status again, guarded
// against the stale copy, be refused, read the object again and only then find nothing to send.
func ExampleHistory() {
	scheme := runtime.NewScheme()
	utilruntime.Must(testtypes.AddToScheme(scheme))
	stored := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default", UID: "6c0e0f4e", Generation: 1}}
	c := printRequests(fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&testtypes.Widget{}).WithObjects(stored).Build())
	ctx := context.Background()
	r := &widgetReconciler{writer: patch.NewWriter(c, patch.WriterOptions{History: &patch.History{}})}

	cached := &testtypes.Widget{} // what the cache shows, before and after the first reconcile
	_ = c.Get(ctx, client.ObjectKeyFromObject(stored), cached)

	fmt.Println("first reconcile:")
	if err := r.reconcile(ctx, cached.DeepCopy()); err != nil {
		fmt.Println(err)
	}
	fmt.Println("second reconcile, from the stale copy:")
	w := cached.DeepCopy()
	if err := r.reconcile(ctx, w); err != nil {
		fmt.Println(err)
	}
	fmt.Println("ready:", conditions.IsTrue(w, conditions.Ready), "resourceVersion is the first write's:", w.ResourceVersion != cached.ResourceVersion)
	// Output:
	// first reconcile:
	// PATCH status: test /metadata/uid, replace /metadata/resourceVersion, add /status
	// second reconcile, from the stale copy:
	// ready: true resourceVersion is the first write's: true
}
