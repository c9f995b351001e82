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

package sharding

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tenon-dev/tenon/fencing"
)

// defaultRenewDeadline is controller-runtime's default manager.Options.RenewDeadline.
const defaultRenewDeadline = 10 * time.Second

// serviceAccountNamespace is where a pod finds its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ForManager makes the manager that is about to be built from cfg and opts a fenced member of
// the shard's ring: its leader election holds the shard's own Lease instead of the one Lease
// every replica competes for, so that every replica runs its controllers at once, each on the
// objects assigned to it. It changes its two arguments in place:
//
//   - opts.LeaderElection and opts.LeaderElectionReleaseOnCancel are set: the manager runs its
//     controllers only while it holds its Lease, and releases it when it stops, which tells the
//     sharder at once to move the shard's objects to the others;
//   - opts.LeaderElectionResourceLockInterface is set to a [fencing.Lock] around a Lease lock
//     whose Lease is named after the shard, labelled with [RingLabel], and held with the shard's
//     name as the identity — what the sharder requires to count the shard as a member;
//   - cfg is fenced with cfg.Wrap([fencing.Lock.WrapTransport]): every client built from it
//     afterwards refuses writes once the shard may have lost its Lease (see the package
//     documentation for the timing against the sharder);
//   - opts.LeaderElectionResourceLock is set to "leases", opts.LeaderElectionNamespace to the
//     Lease's namespace and opts.LeaderElectionID to the shard's name, replacing what they
//     held: they describe the shard's Lease, which the manager no longer builds itself.
//
// The Lease is in opts.LeaderElectionNamespace, by default the namespace of the pod's service
// account. opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod and opts.LeaderElectionConfig
// apply as they do to the manager's own lock. Build the manager from both right after, and keep
// the returned Lock to check before writes to systems outside Kubernetes:
//
//	opts := ctrl.Options{Cache: cache.Options{}}
//	fence, err := sharding.ForManager(cfg, &opts, shard)
//
// ForManager returns an error, and changes nothing, when cfg or opts is nil, opts already has a
// LeaderElectionResourceLockInterface, opts.LeaderElectionResourceLock names a lock other than
// a Lease, or the Lease's namespace is unknown. lockOpts are [fencing.NewLock]'s.
func ForManager(cfg *rest.Config, opts *manager.Options, shard Shard, lockOpts ...fencing.Option) (*fencing.Lock, error) {
	switch {
	case cfg == nil:
		return nil, errors.New("failed to make the manager a shard: the rest.Config is nil")
	case opts == nil:
		return nil, errors.New("failed to make the manager a shard: the manager.Options is nil")
	case opts.LeaderElectionResourceLockInterface != nil:
		return nil, errors.New("failed to make the manager a shard: Options.LeaderElectionResourceLockInterface is set already; the shard's Lease must be the lock")
	case opts.LeaderElectionResourceLock != "" && opts.LeaderElectionResourceLock != resourcelock.LeasesResourceLock:
		return nil, fmt.Errorf("failed to make the manager a shard: Options.LeaderElectionResourceLock is %q; a shard holds a %q lock",
			opts.LeaderElectionResourceLock, resourcelock.LeasesResourceLock)
	}
	if _, err := New(shard.Ring, shard.Name); err != nil {
		return nil, fmt.Errorf("failed to make the manager a shard: %w", err)
	}
	namespace := opts.LeaderElectionNamespace
	if namespace == "" {
		raw, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return nil, fmt.Errorf("failed to make the manager a shard: Options.LeaderElectionNamespace is empty and the pod's namespace is unknown: %w", err)
		}
		namespace = strings.TrimSpace(string(raw))
	}
	leaderCfg := cfg
	if opts.LeaderElectionConfig != nil {
		leaderCfg = opts.LeaderElectionConfig
	}
	leaderCfg = rest.AddUserAgent(rest.CopyConfig(leaderCfg), "shard-lease")
	renewDeadline := defaultRenewDeadline
	if opts.RenewDeadline != nil {
		renewDeadline = *opts.RenewDeadline
	}
	// As controller-runtime does for its own lock: one hung request must not cost the lease.
	leaderCfg.Timeout = max(renewDeadline/2, time.Second)
	leases, err := coordinationv1client.NewForConfig(leaderCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to make the manager a shard: failed to build the client of its Lease: %w", err)
	}
	inner := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: shard.Name},
		Client:     leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: shard.Name},
		Labels:     map[string]string{RingLabel: shard.Ring},
	}
	lock, err := fencing.NewLock(inner, lockOpts...)
	if err != nil {
		return nil, fmt.Errorf("failed to make the manager a shard: %w", err)
	}
	cfg.Wrap(lock.WrapTransport)
	opts.LeaderElection = true
	opts.LeaderElectionReleaseOnCancel = true
	opts.LeaderElectionResourceLock = resourcelock.LeasesResourceLock
	opts.LeaderElectionNamespace = namespace
	opts.LeaderElectionID = shard.Name
	opts.LeaderElectionResourceLockInterface = lock
	return lock, nil
}
