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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/patch"
)

// Ensure adds the finalizer name to obj and writes it, and reports whether it was added. Call it
// right after reading obj, before changing it: on success obj is the object as the server
// returned it.
//
//   - Nothing is sent when obj already has the finalizer: a reconcile in steady state writes
//     nothing.
//   - Nothing is added to an object that is being deleted, whether obj says so or the API
//     server does when the write is attempted: Ensure returns false and no error, and obj then
//     has the deletionTimestamp (nothing else of obj changes). Check it before creating
//     anything the finalizer must clean up.
//   - An object that no longer exists is an error for which apierrors.IsNotFound reports true:
//     there is nothing to add a finalizer to, and nothing may be created for it.
//   - The write cannot drop or duplicate another writer's finalizer, even when obj is stale: it
//     is a patch of the finalizer list that the API server rejects if the list changed, after
//     which Ensure reads the latest object and tries again a bounded number of times. When the
//     retries run out it returns a conflict, which the requeue package treats as a quiet requeue.
//   - On any error obj is left exactly as it was.
func Ensure(ctx context.Context, c client.Client, obj client.Object, name string) (added bool, err error) {
	if err := validate(name); err != nil {
		return false, err
	}
	if has(obj, name) || obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	work, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("failed to add finalizer %s: %T does not copy into a client.Object", name, obj)
	}
	h, err := patch.NewHelper(work, c)
	if err != nil {
		return false, err
	}
	controllerutil.AddFinalizer(work, name)
	if err := h.Patch(ctx, work); err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("failed to add finalizer %s: %w", name, err)
		}
		// Refused, perhaps because the object is being deleted: the server refuses new
		// finalizers then. Only a fresh read can tell.
		latest, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return false, fmt.Errorf("failed to add finalizer %s: %w", name, err)
		}
		if getErr := c.Get(ctx, client.ObjectKeyFromObject(obj), latest); getErr == nil && latest.GetDeletionTimestamp() != nil {
			obj.SetDeletionTimestamp(latest.GetDeletionTimestamp())
			obj.SetDeletionGracePeriodSeconds(latest.GetDeletionGracePeriodSeconds())
			return false, nil
		} else if apierrors.IsNotFound(getErr) {
			return false, fmt.Errorf("failed to add finalizer %s: %w", name, getErr)
		}
		return false, fmt.Errorf("failed to add finalizer %s: %w", name, err)
	}
	_ = objects.CopyInto(obj, work) // work is obj's own deep copy: the same type
	return true, nil
}

// Remove removes the finalizer name from obj and writes it, and reports whether it was removed.
//
//   - Nothing is sent when obj does not have the finalizer.
//   - Any name the API server accepts can be removed, also one without a domain prefix, which
//     [Ensure] refuses: a controller can drop its legacy finalizer. An invalid name is an error
//     wrapping [ErrInvalidName].
//   - Other finalizers are never dropped, even when obj is stale (see [Ensure]).
//   - When this was the object's last finalizer and it is being deleted, the object disappears:
//     that is success, not an error. An object that is already gone has nothing to remove.
//   - obj is updated with the object as written; on an error it is left as it was.
func Remove(ctx context.Context, c client.Client, obj client.Object, name string) (removed bool, err error) {
	if err := validateForRemoval(name); err != nil {
		return false, err
	}
	if !has(obj, name) {
		return false, nil
	}
	work, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("failed to remove finalizer %s: %T does not copy into a client.Object", name, obj)
	}
	h, err := patch.NewHelper(work, c)
	if err != nil {
		return false, err
	}
	controllerutil.RemoveFinalizer(work, name)
	if err := h.Patch(ctx, work); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("failed to remove finalizer %s: %w", name, err)
	}
	_ = objects.CopyInto(obj, work) // work is obj's own deep copy: the same type
	return true, nil
}
