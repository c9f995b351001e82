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
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/internal/shardlabels"
)

// DeleteTracked deletes the children that owner tracks (see [TrackingLabels]) of the kinds in
// lists, and returns how many remain: the garbage collector never deletes them, so call it from
// the owner's finalizer and remove the finalizer only once it returns 0 and no error.
//
// Each element of lists is an empty list of one kind of child, such as &corev1.ConfigMapList{};
// pass every kind the owner may track. Children recorded by an owner reference are left to the
// garbage collector, which deletes them once the owner is gone.
//
//   - remaining counts the tracked children found, including those this call asked to delete
//     and those already being deleted (waiting for their own finalizers). A deleted child may
//     still be listed by a cache for a moment, so a finalizer usually comes back once more and
//     sees 0. It never returns 0 while a child it found may still exist.
//   - Deletions carry a UID precondition; a child replaced by another object of the same name
//     since it was listed does not count. A previous incarnation's children are not tracked by
//     this owner and are neither deleted nor counted.
//   - A failed deletion does not stop the others; the errors are joined, and the child counts
//     as remaining.
//   - Children are found with the tracking label (or [UseIndex]). A cache may not hold a child
//     yet: one created moments ago, or while the cache's watch was broken (after an API server
//     restart, informers can take a minute to catch up). Through a cached client, pass
//     [APIReader] (the manager's GetAPIReader()): before it returns 0, DeleteTracked then lists
//     the tracked children from the API server, with the tracking label, and deletes any the
//     cache missed. Without it, 0 means none in c. Stop creating children once the owner is
//     being deleted either way.
//   - The owner's deletion propagation policy is not consulted: tracked children are deleted
//     even when the owner is deleted with --cascade=orphan. [Release] a child to keep it.
//   - An owner assigned to a shard (it carries a label of the sharder's protocol,
//     shard.alpha.sharding.timebertt.dev/<ring>; see package sharding) requires [APIReader]:
//     the sharder never assigns tracked children, so a cache selected for the shard holds none
//     of them. Without it, DeleteTracked deletes what c lists but never reports 0: it returns
//     an error naming the option, and the finalizer stays. Pass a reader of the API server (a
//     manager's GetAPIReader()): a cached client given as the reader confirms nothing.
//
// tenon's finalizer package has this cleanup as a step: finalizer.TrackedChildren.
func DeleteTracked(ctx context.Context, c client.Client, owner client.Object, lists []client.ObjectList, opts ...ChildrenOption) (remaining int, err error) {
	o := newChildrenOptions(opts)
	remaining, errs := deleteTrackedFrom(ctx, c, c, owner, lists, &o)
	if remaining > 0 || len(errs) > 0 || len(lists) == 0 {
		return remaining, errors.Join(errs...)
	}
	// Nothing left, says c. A cache may not have seen a child yet (one created moments ago, or
	// while its watch was broken), and a shard's cache never holds one: ask the API server
	// before reporting none.
	if o.apiReader == nil {
		if label, sharded := shardLabel(owner); sharded {
			return 0, fmt.Errorf("failed to confirm that %s has no tracked children left: it is assigned to a shard (label %s), and the sharder never assigns tracked children, so a cache selected for the shard may not hold them; pass ownership.APIReader(mgr.GetAPIReader())",
				describe(owner, c.Scheme()), label)
		}
		return 0, nil
	}
	live := o
	live.useIndex = false
	remaining, errs = deleteTrackedFrom(ctx, o.apiReader, c, owner, lists, &live)
	return remaining, errors.Join(errs...)
}

// shardLabel returns the key of the sharder's label that assigns owner to a shard, if it has one.
func shardLabel(owner client.Object) (string, bool) {
	for key := range owner.GetLabels() {
		if strings.HasPrefix(key, shardlabels.ShardPrefix) {
			return key, true
		}
	}
	return "", false
}

// deleteTrackedFrom deletes, through c, the tracked children of owner that reader lists, and
// counts those that remain.
func deleteTrackedFrom(ctx context.Context, reader client.Reader, c client.Client, owner client.Object, lists []client.ObjectList, o *childrenOptions) (remaining int, errs []error) {
	for _, list := range lists {
		children, err := listChildren(ctx, reader, owner, list, o, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to delete tracked children: %w", err))
			continue
		}
		for _, child := range children {
			if child.GetDeletionTimestamp() != nil {
				remaining++
				continue
			}
			gone, err := deleteChild(ctx, c, child, o)
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to delete tracked children: %w", err))
			}
			if !gone {
				remaining++
			}
			if err == nil && !gone {
				log.FromContext(ctx).V(1).Info("Deleted a tracked child", "child", describe(child, c.Scheme()).String())
			}
		}
	}
	return remaining, errs
}
