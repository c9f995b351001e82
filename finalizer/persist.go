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
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// Ensure adds the finalizer name to obj and writes it, and reports whether it was added.
//
//   - Nothing is sent when obj already has the finalizer: a reconcile in steady state writes
//     nothing.
//   - Nothing is added to an object that is being deleted, whether obj says so or the API
//     server does when the write is attempted: Ensure returns false and no error, and obj then
//     has the deletionTimestamp. Check it before creating anything the finalizer must clean up.
//   - The write cannot drop or duplicate another writer's finalizer, even when obj is stale: it
//     is a patch of the finalizer list that the API server rejects if the list changed, after
//     which Ensure reads the latest object and tries again a bounded number of times. When the
//     retries run out it returns a conflict, which the requeue package treats as a quiet requeue.
//   - obj is updated with the object as written; on an error it is left as it was.
func Ensure(ctx context.Context, c client.Client, obj client.Object, name string) (added bool, err error) {
	if err := Validate(name); err != nil {
		return false, err
	}
	if Has(obj, name) || obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	h, err := patch.NewHelper(obj, c)
	if err != nil {
		return false, err
	}
	before := slices.Clone(obj.GetFinalizers())
	_, _ = Add(obj, name) // cannot fail: the name is valid and obj is not being deleted
	if err := h.Patch(ctx, obj); err != nil {
		obj.SetFinalizers(before) // as it was: a caller that retries must see the finalizer missing
		if deleting, getErr := isBeingDeleted(ctx, c, obj); getErr == nil && deleting {
			return false, nil
		}
		return false, fmt.Errorf("failed to add finalizer %s: %w", name, err)
	}
	return Has(obj, name), nil
}

// Remove removes the finalizer name from obj and writes it, and reports whether it was removed.
//
//   - Nothing is sent when obj does not have the finalizer.
//   - Any name the API server accepts can be removed, also one without a domain prefix, which
//     [Ensure] refuses: a controller can drop its legacy finalizer.
//   - Other finalizers are never dropped, even when obj is stale (see [Ensure]).
//   - When this was the object's last finalizer and it is being deleted, the object disappears:
//     that is success, not an error. An object that is already gone has nothing to remove.
//   - obj is updated with the object as written; on an error it is left as it was.
func Remove(ctx context.Context, c client.Client, obj client.Object, name string) (removed bool, err error) {
	if err := validateForRemoval(name); err != nil {
		return false, err
	}
	if !Has(obj, name) {
		return false, nil
	}
	h, err := patch.NewHelper(obj, c)
	if err != nil {
		return false, err
	}
	before := slices.Clone(obj.GetFinalizers())
	Delete(obj, name)
	if err := h.Patch(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		obj.SetFinalizers(before) // as it was: a caller that retries must see the finalizer present
		return false, fmt.Errorf("failed to remove finalizer %s: %w", name, err)
	}
	return true, nil
}

// isBeingDeleted reads obj's latest version into obj and reports whether it has a
// deletionTimestamp.
func isBeingDeleted(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
	return obj.GetDeletionTimestamp() != nil, nil
}
