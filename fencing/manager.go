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

package fencing

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crrecorder "sigs.k8s.io/controller-runtime/pkg/recorder"
)

// defaultRenewDeadline is controller-runtime's default manager.Options.RenewDeadline, which
// sets the timeout of the lock's client as it does for its own lock.
const defaultRenewDeadline = 10 * time.Second

// ForManager fences the manager that is about to be built from cfg and opts: it builds the
// Lease lock the manager would build for itself, wraps it in a [Lock], and changes its two
// arguments in place:
//
//   - cfg is fenced with cfg.Wrap([Lock.WrapTransport]): every client built from it afterwards
//     — the manager's client and cache, its Event broadcaster, clientsets built from
//     mgr.GetConfig() — is fenced. Clients built from cfg before the call are not;
//   - opts.LeaderElectionResourceLockInterface is set to the Lock, so the manager's leader
//     election renews through it.
//
// Build the manager from both right after:
//
//	opts := ctrl.Options{LeaderElection: true, LeaderElectionID: "cluster-operator.apps.tenon.dev"}
//	fence, err := fencing.ForManager(cfg, &opts)
//	if err != nil {
//		return err
//	}
//	mgr, err := ctrl.NewManager(cfg, opts)
//
// The lock is controller-runtime's own (leaderelection.NewResourceLock) with the manager's
// LeaderElectionID, LeaderElectionNamespace (by default the namespace of the pod's service
// account, read from its mounted token), LeaderElectionLabels and RenewDeadline (its client's
// timeout is half of it), on opts.LeaderElectionConfig when set and on cfg otherwise, taken
// before cfg is fenced; its identity is the hostname and a random UUID. Unlike the manager's
// own lock, it records no Events of its own ("became leader"): the manager's log says when it
// is elected. Keep the returned Lock to call [Lock.Check] before writes to systems outside
// Kubernetes.
//
// ForManager returns an error, and changes nothing, when cfg or opts is nil, leader election is
// off (the fence would never open), opts already has a LeaderElectionResourceLockInterface (wrap
// that one with [NewLock]), opts.LeaderElectionResourceLock names a lock other than a Lease, or
// the lock cannot be built (no LeaderElectionID; no LeaderElectionNamespace outside a cluster).
// lockOpts are [NewLock]'s.
func ForManager(cfg *rest.Config, opts *manager.Options, lockOpts ...Option) (*Lock, error) {
	switch {
	case cfg == nil:
		return nil, errors.New("failed to fence the manager: the rest.Config is nil")
	case opts == nil:
		return nil, errors.New("failed to fence the manager: the manager.Options is nil")
	case !opts.LeaderElection:
		return nil, errors.New("failed to fence the manager: leader election is off (Options.LeaderElection), so the fence would never open")
	case opts.LeaderElectionResourceLockInterface != nil:
		return nil, errors.New("failed to fence the manager: Options.LeaderElectionResourceLockInterface is set already; wrap that lock with fencing.NewLock")
	case opts.LeaderElectionResourceLock != "" && opts.LeaderElectionResourceLock != resourcelock.LeasesResourceLock:
		return nil, fmt.Errorf("failed to fence the manager: Options.LeaderElectionResourceLock is %q; the fence needs a %q lock",
			opts.LeaderElectionResourceLock, resourcelock.LeasesResourceLock)
	}
	leaderCfg := cfg
	if opts.LeaderElectionConfig != nil {
		leaderCfg = opts.LeaderElectionConfig
	}
	renewDeadline := defaultRenewDeadline
	if opts.RenewDeadline != nil {
		renewDeadline = *opts.RenewDeadline
	}
	inner, err := leaderelection.NewResourceLock(rest.CopyConfig(leaderCfg), noEvents{}, leaderelection.Options{
		LeaderElection:             true,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaderElectionNamespace:    opts.LeaderElectionNamespace,
		LeaderElectionID:           opts.LeaderElectionID,
		RenewDeadline:              renewDeadline,
		LeaderLabels:               opts.LeaderElectionLabels,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to fence the manager: failed to build its leader election lock: %w", err)
	}
	lock, err := NewLock(inner, lockOpts...)
	if err != nil {
		return nil, err
	}
	cfg.Wrap(lock.WrapTransport)
	opts.LeaderElectionResourceLockInterface = lock
	return lock, nil
}

// noEvents is a controller-runtime recorder.Provider whose recorders are nil: client-go's Lease
// lock then records no Events.
type noEvents struct{}

var _ crrecorder.Provider = noEvents{}

// GetEventRecorderFor implements controller-runtime's recorder.Provider.
func (noEvents) GetEventRecorderFor(string) record.EventRecorder { return nil }

// GetEventRecorder implements controller-runtime's recorder.Provider.
func (noEvents) GetEventRecorder(string) crrecorder.EventRecorder { return nil }
