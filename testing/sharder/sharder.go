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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Sharder assigns the objects of one ring to its shards, as the reference sharder does. Create
// it with [New]; run it with [Sharder.Start], or pass by pass with [Sharder.Sync]. Its methods
// are safe for concurrent use; passes never overlap, and writes to one object never do.
type Sharder struct {
	client client.Client

	ring             string
	leaseNamespace   string
	namespaces       []string
	kinds            []kind
	clock            clock.PassiveClock
	syncPeriod       time.Duration
	identity         string
	moveWithoutDrain bool
	shardLabel       string
	drainLabel       string

	// watcher watches the ring's kinds, so that new objects are assigned as they appear; nil
	// when the client cannot watch.
	watcher client.WithWatch
	// unassigned selects the objects without a shard label.
	unassigned labels.Selector

	// syncMu serializes passes.
	syncMu sync.Mutex

	// objectMu serializes the writes to one object and their records, by a hash of the object,
	// so that Moves holds them in the order the API server accepted them, whether a pass or a
	// watch sent them.
	objectMu [64]sync.Mutex

	// placementMu guards placement.
	placementMu sync.Mutex
	placement   placement
	// placed is closed once a pass has found an available shard.
	placed     chan struct{}
	placedOnce sync.Once

	// writing is held for reading by every write from before it is sent until it is recorded,
	// and for writing by Moves, so that Moves holds every write the API server accepted before
	// it was called.
	writing sync.RWMutex

	// movesMu guards moves.
	movesMu sync.Mutex
	moves   []Move
}

var _ manager.Runnable = (*Sharder)(nil)

// New returns a sharder of the ring opts names that reads and writes through c.
//
// c must read from the API server, as testenv's Environment.Client and a client from client.New
// do, not from a cache, as a manager's client does: the sharder's writes carry the
// resourceVersion it read, and a stale read only produces conflicts. Its scheme must know coordination.k8s.io/v1
// and, unless they are given as objects with their kind set, the kinds of opts.Resources.
//
// When c can also watch (client.NewWithWatch returns such a client), [Sharder.Start] assigns an
// object that appears without a shard label as soon as its watch delivers it, as the reference
// sharder's webhook does at admission; otherwise the next pass does, up to a sync period later.
//
// New returns an error that names every invalid option, and the kinds it cannot resolve.
func New(c client.Client, opts Options) (*Sharder, error) {
	if c == nil {
		return nil, errors.New("invalid sharder: the client is nil")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	kinds, err := resolveKinds(c, opts.Resources)
	if err != nil {
		return nil, err
	}
	watcher, _ := c.(client.WithWatch)
	unassigned, err := labels.NewRequirement(shardLabel(opts.Ring), selection.DoesNotExist, nil)
	if err != nil {
		return nil, fmt.Errorf("invalid sharder: ring %q makes no shard label to select by: %w", opts.Ring, err)
	}
	return &Sharder{
		client:           c,
		watcher:          watcher,
		unassigned:       labels.NewSelector().Add(*unassigned),
		placed:           make(chan struct{}),
		ring:             opts.Ring,
		leaseNamespace:   opts.LeaseNamespace,
		namespaces:       slices.Clone(opts.Namespaces),
		kinds:            kinds,
		clock:            opts.Clock,
		syncPeriod:       opts.SyncPeriod,
		identity:         opts.Identity,
		moveWithoutDrain: opts.MoveWithoutDrain,
		shardLabel:       shardLabel(opts.Ring),
		drainLabel:       drainLabel(opts.Ring),
	}, nil
}

// Start runs [Sharder.Sync] at once and then every sync period until ctx is done, and returns
// nil then. A pass that fails is logged (with the logger of ctx) and the next one tries again, so
// that a test's API server restart does not end the sharder. Start implements manager.Runnable:
// a manager of its own, or a goroutine, can run it.
//
// With a client that can watch (see [New]), Start also watches the objects of the ring's kinds
// that have no shard label, and assigns each one as it appears (a new object, or a main object
// its shard let go of after a drain) by the shards' states and the hash ring of the last pass,
// from the first pass on: a first pass over many objects takes long, and objects created
// meanwhile are assigned as they appear, not after it. A watch and a pass may try to assign one
// object at once; the one that comes second conflicts and changes nothing. Those writes follow
// the protocol as the passes' do; Start returns once the watches have stopped too.
func (s *Sharder) Start(ctx context.Context) error {
	ticker := time.NewTicker(s.syncPeriod)
	defer ticker.Stop()
	var watches sync.WaitGroup
	defer watches.Wait()
	if s.watcher != nil {
		watches.Go(func() { s.watchAll(ctx) })
	}
	for {
		if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Sharder pass failed, the next one tries again", "ring", s.ring)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Sync makes one pass over the ring:
//
//  1. It lists the shards' Leases and finds each shard's [ShardState] at the sharder's clock;
//     it acquires the Leases of Uncertain shards, which makes them Dead, and deletes those of
//     Orphaned ones.
//  2. It builds the hash ring of the available shards. With none, it changes no object.
//  3. It lists the objects of every kind of the ring (only their metadata), finds each one's
//     shard on the ring, and changes the labels of those whose shard label differs, as the
//     table of the package documentation says: drain, assign or move.
//
// Every write carries the resourceVersion that was read: an object or Lease that changed since is
// left alone until the next pass, as is one that was deleted; neither is an error. Other errors
// do not stop the pass; Sync returns them all, joined.
func (s *Sharder) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("ring", s.ring))

	leases, err := s.listLeases(ctx)
	if err != nil {
		// The shards' states are unknown: the watches stop assigning until a pass knows them.
		s.setPlacement(nil, nil)
		return err
	}
	states, err := s.syncLeases(ctx, leases)
	errs := []error{err}
	var available []string
	for name, state := range states {
		if state.Available() {
			available = append(available, name)
		}
	}
	if len(available) == 0 {
		s.setPlacement(states, nil)
		return errors.Join(errs...)
	}
	r := newRing(available)
	s.setPlacement(states, r)
	for _, k := range s.kinds {
		errs = append(errs, s.assignKind(ctx, k, states, r))
	}
	return errors.Join(errs...)
}
