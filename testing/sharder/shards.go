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

package sharder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/sharding"
)

// ShardState is what the sharder makes of a shard's Lease at a moment of its clock.
type ShardState string

// The states of a shard, from its Lease's spec and the sharder's clock (now):
//
//   - Ready: holderIdentity is the Lease's name and now < renewTime + leaseDuration.
//   - Expired: held by the shard, renewTime + leaseDuration <= now < renewTime + 2×leaseDuration.
//   - Uncertain: held by the shard, now >= renewTime + 2×leaseDuration. [Sharder.Sync] acquires
//     the Lease, after which the shard is Dead.
//   - Dead: holderIdentity is empty (the shard released the Lease) or another identity (the
//     sharder acquired it).
//   - Orphaned: Dead, and now >= renewTime + leaseDuration + 1 minute. [Sharder.Sync] deletes
//     the Lease.
//   - Unknown: no Lease of the ring has the shard's name; only a shard label can name such a
//     shard.
//
// A Lease held by its shard without renewTime or leaseDurationSeconds is Expired for good, and a
// released one without them is Dead and never Orphaned, as in the reference sharder.
const (
	Ready     ShardState = "ready"
	Expired   ShardState = "expired"
	Uncertain ShardState = "uncertain"
	Dead      ShardState = "dead"
	Orphaned  ShardState = "orphaned"
	Unknown   ShardState = "unknown"
)

// Available reports whether objects may be assigned to a shard in state s, and whether a main
// object must be drained from it rather than moved: Ready, Expired and Uncertain.
func (s ShardState) Available() bool {
	return s == Ready || s == Expired || s == Uncertain
}

// Shard is a member of the ring: a Lease with the ring's label (sharding.RingLabel).
type Shard struct {
	// Name is the Lease's name, which the shard's objects carry in their shard label.
	Name string
	// State is the shard's state at the sharder's clock.
	State ShardState
}

// orphanAfter is how long a dead shard's Lease is kept, after it expired, before it is deleted.
const orphanAfter = time.Minute

// unknownLeaseDuration stands in for a Lease's duration when it has none.
const unknownLeaseDuration = 15 * time.Second

// stateOf returns the state of the shard of lease at now.
func stateOf(lease *coordinationv1.Lease, now time.Time) ShardState {
	expiry, duration := expiryOf(lease, now)
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != lease.Name {
		if !now.Before(expiry.Add(orphanAfter)) {
			return Orphaned
		}
		return Dead
	}
	switch {
	case !now.Before(expiry.Add(duration)):
		return Uncertain
	case !now.Before(expiry):
		return Expired
	}
	return Ready
}

// expiryOf returns when lease expires and its duration. A Lease without renewTime or
// leaseDurationSeconds expires now.
func expiryOf(lease *coordinationv1.Lease, now time.Time) (time.Time, time.Duration) {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return now, unknownLeaseDuration
	}
	duration := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	return lease.Spec.RenewTime.Add(duration), duration
}

// Shards returns the ring's shards and their states at the sharder's clock, sorted by name. It
// only reads: an Uncertain shard stays Uncertain, and an Orphaned one stays, until [Sharder.Sync]
// acquires or deletes its Lease.
func (s *Sharder) Shards(ctx context.Context) ([]Shard, error) {
	leases, err := s.listLeases(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	shards := make([]Shard, 0, len(leases))
	for i := range leases {
		shards = append(shards, Shard{Name: leases[i].Name, State: stateOf(&leases[i], now)})
	}
	slices.SortFunc(shards, func(a, b Shard) int { return strings.Compare(a.Name, b.Name) })
	return shards, nil
}

// listLeases returns the Leases of the ring's shards.
func (s *Sharder) listLeases(ctx context.Context) ([]coordinationv1.Lease, error) {
	var leases coordinationv1.LeaseList
	if err := s.client.List(ctx, &leases, client.InNamespace(s.leaseNamespace),
		client.MatchingLabels{sharding.RingLabel: s.ring}); err != nil {
		return nil, fmt.Errorf("failed to list the Leases of ring %s: %w", s.ring, err)
	}
	return leases.Items, nil
}

// syncLeases returns the state of each shard of leases by name, after it acquired the Leases of
// Uncertain shards (which are then Dead) and deleted those of Orphaned ones (which are then gone).
// A Lease that changed since it was listed is left for the next sync. The states are complete
// even when an acquisition or deletion failed, which the error reports.
func (s *Sharder) syncLeases(ctx context.Context, leases []coordinationv1.Lease) (map[string]ShardState, error) {
	now := s.clock.Now()
	states := make(map[string]ShardState, len(leases))
	var errs []error
	for i := range leases {
		lease := &leases[i]
		state := stateOf(lease, now)
		switch state {
		case Uncertain:
			acquired, err := s.acquire(ctx, lease, now)
			if err != nil {
				errs = append(errs, err)
			}
			if acquired {
				state = Dead
			}
		case Orphaned:
			if err := s.deleteLease(ctx, lease); err != nil {
				errs = append(errs, err)
			}
		}
		states[lease.Name] = state
	}
	return states, errors.Join(errs...)
}

// acquire takes over the Lease of an Uncertain shard, as the reference sharder does: the sharder
// becomes its holder for twice its duration. It reports whether it did; a Lease that changed since
// it was read (the shard renewed it) is not acquired.
func (s *Sharder) acquire(ctx context.Context, lease *coordinationv1.Lease, now time.Time) (bool, error) {
	_, duration := expiryOf(lease, now)
	at := metav1.NewMicroTime(now)
	lease.Spec.HolderIdentity = ptr.To(s.identity)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(2 * duration / time.Second))
	lease.Spec.AcquireTime = &at
	lease.Spec.RenewTime = &at
	lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
	// Update sends the resourceVersion that was read: a shard that renewed since wins.
	err := s.client.Update(ctx, lease)
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		log.FromContext(ctx).V(1).Info("Lease of an uncertain shard changed, not acquired", "shard", lease.Name, "error", err.Error())
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to acquire the Lease of uncertain shard %s: %w", lease.Name, err)
	}
	log.FromContext(ctx).Info("Acquired the Lease of an uncertain shard", "shard", lease.Name)
	return true, nil
}

// deleteLease deletes the Lease of an Orphaned shard, unless it changed since it was read.
func (s *Sharder) deleteLease(ctx context.Context, lease *coordinationv1.Lease) error {
	err := s.client.Delete(ctx, lease, client.Preconditions{ResourceVersion: ptr.To(lease.ResourceVersion)})
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("failed to delete the Lease of orphaned shard %s: %w", lease.Name, err)
	}
	log.FromContext(ctx).Info("Deleted the Lease of an orphaned shard", "shard", lease.Name)
	return nil
}
