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

package finalizer

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/ownership"
)

// trackedChildrenInterval is how often [TrackedChildren] checks again for children that are
// still being deleted.
const trackedChildrenInterval = 2 * time.Second

// TrackedChildren returns a step, named "tracked-children", that deletes the children its object
// tracks with ownership's tracking labels, of the kinds in lists (see ownership.DeleteTracked),
// and reports it in progress, checking again every two seconds, until none is left:
//
//	lifecycle := &finalizer.Lifecycle[*v1alpha1.Cluster]{
//		Finalizer: "apps.example.com/cleanup",
//		Client:    mgr.GetClient(),
//		Steps: []finalizer.Step[*v1alpha1.Cluster]{
//			finalizer.TrackedChildren[*v1alpha1.Cluster](mgr.GetClient(), []client.ObjectList{&corev1.ConfigMapList{}},
//				ownership.APIReader(mgr.GetAPIReader())),
//		},
//	}
//
// The garbage collector deletes the children that carry an owner reference; the tracked ones
// (in another namespace than their namespaced owner, or cluster-scoped) are this step's to
// delete, which is why the owner needs a finalizer at all.
//
//   - Each element of lists is an empty list of one kind of child, such as
//     &corev1.ConfigMapList{}; pass every kind the owner may track. opts are passed to
//     ownership.DeleteTracked: [ownership.UseIndex] with a cache that has the index registered,
//     [ownership.Propagation] for the deletions.
//   - The step is done only when a listing finds no tracked child left, including children
//     already being deleted (waiting for finalizers of their own). With a cached client, pass
//     [ownership.APIReader] as above: a cache that has not seen a child yet (one created moments
//     ago, or while its watch was broken) would otherwise let the step finish and the child leak.
//     For an owner assigned to a shard (it carries the sharder's label,
//     shard.alpha.sharding.timebertt.dev/<ring>), ownership.APIReader is required: without it
//     the step fails every time, naming the option, and the finalizer stays.
//   - A failed deletion is returned as the step's error, so the Lifecycle retries it with backoff
//     and records it in its Deleting condition.
func TrackedChildren[T client.Object](c client.Client, lists []client.ObjectList, opts ...ownership.ChildrenOption) Step[T] {
	return Step[T]{
		Name: "tracked-children",
		Run: func(ctx context.Context, owner T) (Progress, error) {
			remaining, err := ownership.DeleteTracked(ctx, c, owner, lists, opts...)
			if err != nil {
				return Progress{}, err
			}
			if remaining > 0 {
				return Waiting(trackedChildrenInterval, fmt.Sprintf("waiting for %d tracked children to be deleted", remaining)), nil
			}
			return Finished(), nil
		},
	}
}
