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

package ownership

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/finalizer"
)

// CleanupStep returns a step for a finalizer.Lifecycle that deletes the children its object
// tracks, of the kinds in lists (see [DeleteTracked]), and reports it in progress until none is
// left, checking again every two seconds:
//
//	lifecycle := &finalizer.Lifecycle[*v1alpha1.Cluster]{
//		Finalizer: "apps.example.com/cleanup",
//		Client:    mgr.GetClient(),
//		Steps: []finalizer.Step[*v1alpha1.Cluster]{
//			ownership.CleanupStep[*v1alpha1.Cluster](mgr.GetClient(), []client.ObjectList{&corev1.ConfigMapList{}}),
//		},
//	}
//
// The step is named "tracked-children". A failed deletion is returned as the step's error, so the
// finalizer retries it with backoff and records it in its Deleting condition.
func CleanupStep[T client.Object](c client.Client, lists []client.ObjectList, opts ...ChildrenOption) finalizer.Step[T] {
	return finalizer.Step[T]{
		Name: "tracked-children",
		Run: func(ctx context.Context, owner T) (finalizer.Progress, error) {
			remaining, err := DeleteTracked(ctx, c, owner, lists, opts...)
			if err != nil {
				return finalizer.Progress{}, err
			}
			if remaining > 0 {
				return finalizer.InProgress(2*time.Second, fmt.Sprintf("waiting for %d tracked children to be deleted", remaining)), nil
			}
			return finalizer.Done(), nil
		},
	}
}
