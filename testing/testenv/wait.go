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

package testenv

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/objects"
)

// pollInterval is how often the wait helpers look at a cache. Informer caches on envtest see a
// write within milliseconds, so a short interval keeps tests fast without measurable load.
const pollInterval = 10 * time.Millisecond

// CreateAndWait creates obj through the environment's (uncached) client and waits until reader,
// typically a manager's cache or cached client, returns it at the created resourceVersion or a
// later one. Use it before reconciling or asserting through a cache, where a plain Create races
// with the informer and makes tests flaky.
//
// obj is updated with the created object, as by client.Create. The wait is bounded by ctx and by
// Options.WaitTimeout.
func (e *Environment) CreateAndWait(ctx context.Context, obj client.Object, reader client.Reader, opts ...client.CreateOption) error {
	if err := e.client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	return e.WaitUntilSeen(ctx, reader, obj)
}

// WaitUntilSeen waits until reader returns obj at obj's resourceVersion or a later one. Call it
// after a write made through another client, before reading through a cache.
func (e *Environment) WaitUntilSeen(ctx context.Context, reader client.Reader, obj client.Object) error {
	key := client.ObjectKeyFromObject(obj)
	want := obj.GetResourceVersion()
	latest, err := objects.Empty(obj)
	if err != nil {
		return err
	}
	var last string
	err = e.poll(ctx, func(ctx context.Context) (bool, error) {
		if err := reader.Get(ctx, key, latest); err != nil {
			if apierrors.IsNotFound(err) {
				last = "not found"
				return false, nil
			}
			return false, err
		}
		last = "resourceVersion " + latest.GetResourceVersion()
		return atLeast(latest.GetResourceVersion(), want), nil
	})
	if err != nil {
		return fmt.Errorf("failed to see %s %s at resourceVersion %s through the reader (last seen: %s): %w",
			kindOf(e, obj), key, want, last, err)
	}
	return nil
}

// DeleteAndWait deletes obj through the environment's client and waits until reader either
// reports it gone, or returns it with a deletionTimestamp while finalizers still hold it, at the
// resourceVersion the API server has after the delete or a later one: the state in which a
// controller's finalizer logic runs. An object that is already gone is not an error. Which of the
// two to wait for is read from the API server after the delete: once the object is gone there,
// only its absence from the reader counts, so a cache that still holds a version from before (the
// one before the test removed the last finalizer, say) is waited out.
//
// When the object is still present, obj is updated with the state the reader returned, so the
// caller can inspect its finalizers and conditions.
func (e *Environment) DeleteAndWait(ctx context.Context, obj client.Object, reader client.Reader, opts ...client.DeleteOption) error {
	if err := client.IgnoreNotFound(e.client.Delete(ctx, obj, opts...)); err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(obj)
	latest, err := objects.Empty(obj)
	if err != nil {
		return err
	}
	// What the API server holds now: the object held by its finalizers, at its resourceVersion,
	// or nothing (want stays empty, and only "gone" counts).
	var want string
	switch err := e.client.Get(ctx, key, latest); {
	case err == nil:
		want = latest.GetResourceVersion()
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("failed to read %s %s after deleting it: %w", kindOf(e, obj), key, err)
	}
	var last string
	err = e.poll(ctx, func(ctx context.Context) (bool, error) {
		if err := reader.Get(ctx, key, latest); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
		last = fmt.Sprintf("present with finalizers %v at resourceVersion %s", latest.GetFinalizers(), latest.GetResourceVersion())
		if want != "" && latest.GetDeletionTimestamp() != nil && len(latest.GetFinalizers()) > 0 &&
			atLeast(latest.GetResourceVersion(), want) {
			return true, objects.CopyInto(obj, latest)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("failed to see %s %s deleted through the reader (last seen: %s): %w", kindOf(e, obj), key, last, err)
	}
	return nil
}

// poll runs condition until it reports done, bounded by ctx and the environment's wait timeout.
func (e *Environment) poll(ctx context.Context, condition wait.ConditionWithContextFunc) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.WaitTimeout)
		defer cancel()
	}
	return wait.PollUntilContextCancel(ctx, pollInterval, true, condition)
}

// atLeast reports whether resourceVersion got is the same as or newer than want. Resource versions
// are opaque to clients in general, but every API server backed by etcd uses etcd's increasing
// revision; anything else is compared for equality.
func atLeast(got, want string) bool {
	g, errG := strconv.ParseUint(got, 10, 64)
	w, errW := strconv.ParseUint(want, 10, 64)
	if errG != nil || errW != nil {
		return got == want
	}
	return g >= w
}
