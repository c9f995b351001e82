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
	"errors"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configures a [Sharder]. Ring and Resources are required; every other field has a
// default.
type Options struct {
	// Ring names the ring, as the reference sharder's ControllerRing does: the value of the
	// shards' sharding.RingLabel and the suffix of the shard and drain labels. A lower-case DNS
	// subdomain of at most 63 characters, so that the label keys are valid.
	Ring string

	// LeaseNamespace is the namespace of the shards' Leases. Empty: every namespace, as in the
	// reference sharder; a shard is then known by its Lease's name alone, so shards in two
	// namespaces must not share one.
	LeaseNamespace string

	// Resources are the ring's main kinds, each with the kinds its controller controls.
	// A kind appears at most once, as a main or as a controlled kind.
	Resources []Resource

	// Namespaces restricts the sharded objects to those in these namespaces, which the sharder
	// lists one by one. Empty: every namespace, listed at once. Objects of cluster-scoped kinds
	// are in no namespace: they are sharded only when Namespaces is empty.
	Namespaces []string

	// Clock is the sharder's wall clock, which alone decides the states of shards (see
	// [ShardState]). Tests give it a fake clock (k8s.io/utils/clock/testing) and step it to
	// expire a Lease at once, or set it apart from the shards' clocks to act out clock skew.
	// Defaults to the real clock. The sync period runs on real time whatever the Clock.
	Clock clock.PassiveClock

	// SyncPeriod is the time between two passes of [Sharder.Start]. Defaults to 250 ms.
	SyncPeriod time.Duration

	// Identity is the holderIdentity the sharder writes into the Lease of an Uncertain shard
	// when it acquires it. Defaults to "shardlease-controller", the reference sharder's.
	Identity string

	// MoveWithoutDrain breaks the protocol, for negative controls only: main objects move
	// straight off a shard that is still available, without a drain, so that the old and the
	// new shard may reconcile one object at the same time. It exists so that a test can prove
	// that its invariant checker catches exactly that; never set it elsewhere.
	MoveWithoutDrain bool
}

// Resource is a main kind of the ring and the kinds its controller controls.
type Resource struct {
	// Object is an object of the main kind, such as &corev1.ConfigMap{}. An object of a kind the
	// client's scheme does not know, such as a metav1.PartialObjectMetadata, must have its
	// apiVersion and kind set. A main object is sharded by its own group, kind, namespace and name.
	Object client.Object

	// Controlled are objects of the kinds the main kind's controller controls. Such an object
	// is sharded by its controller reference (ownerReference with controller: true), so that it
	// follows its controller; an object without one is never assigned.
	Controlled []client.Object
}

// Defaults of [Options].
const (
	defaultSyncPeriod = 250 * time.Millisecond
	defaultIdentity   = "shardlease-controller"
)

// kind is one kind of sharded objects, as [New] resolved it.
type kind struct {
	gvk        schema.GroupVersionKind
	controlled bool
}

// validate reports every field of o that is wrong, as one error.
func (o *Options) validate() error {
	problems := ringProblems(o.Ring)
	if o.LeaseNamespace != "" {
		problems = append(problems, namespaceProblems("LeaseNamespace", o.LeaseNamespace)...)
	}
	for i, ns := range o.Namespaces {
		problems = append(problems, namespaceProblems(fmt.Sprintf("Namespaces[%d]", i), ns)...)
	}
	if len(o.Resources) == 0 {
		problems = append(problems, "Resources is empty")
	}
	for i, r := range o.Resources {
		if r.Object == nil {
			problems = append(problems, fmt.Sprintf("Resources[%d].Object is nil", i))
		}
		for j, c := range r.Controlled {
			if c == nil {
				problems = append(problems, fmt.Sprintf("Resources[%d].Controlled[%d] is nil", i, j))
			}
		}
	}
	if o.SyncPeriod < 0 {
		problems = append(problems, fmt.Sprintf("SyncPeriod %s is negative", o.SyncPeriod))
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid sharder options: %s", strings.Join(problems, "; "))
	}
	return nil
}

// ringProblems returns what makes ring an invalid ring name: it must make valid label keys
// (the shard and drain labels) and a valid label value (sharding.RingLabel).
func ringProblems(ring string) []string {
	switch {
	case ring == "":
		return []string{"Ring is empty"}
	case len(ring) > 63:
		return []string{fmt.Sprintf("Ring %q is longer than 63 characters", ring)}
	case len(validation.IsDNS1123Subdomain(ring)) > 0:
		return []string{fmt.Sprintf("Ring %q is not a lower-case DNS subdomain", ring)}
	}
	return nil
}

// namespaceProblems returns what makes ns, the value of field, an invalid namespace name.
func namespaceProblems(field, ns string) []string {
	if len(validation.IsDNS1123Label(ns)) > 0 {
		return []string{fmt.Sprintf("%s %q is not a lower-case DNS label", field, ns)}
	}
	return nil
}

// setDefaults fills the fields of o that have a default and are unset.
func (o *Options) setDefaults() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.SyncPeriod == 0 {
		o.SyncPeriod = defaultSyncPeriod
	}
	if o.Identity == "" {
		o.Identity = defaultIdentity
	}
}

// resolveKinds returns the kinds of resources, from c's scheme.
func resolveKinds(c client.Client, resources []Resource) ([]kind, error) {
	if _, err := c.GroupVersionKindFor(&coordinationv1.Lease{}); err != nil {
		return nil, fmt.Errorf("failed to find the kind of shard Leases in the client's scheme (add coordination.k8s.io/v1): %w", err)
	}
	var kinds []kind
	seen := map[schema.GroupKind]bool{}
	add := func(obj client.Object, controlled bool) error {
		gvk, err := c.GroupVersionKindFor(obj)
		if err != nil {
			return fmt.Errorf("failed to find the kind of %T: %w", obj, err)
		}
		if seen[gvk.GroupKind()] {
			return fmt.Errorf("invalid sharder options: kind %s appears twice in Resources", gvk.GroupKind())
		}
		seen[gvk.GroupKind()] = true
		kinds = append(kinds, kind{gvk: gvk, controlled: controlled})
		return nil
	}
	var errs []error
	for _, r := range resources {
		errs = append(errs, add(r.Object, false))
		for _, obj := range r.Controlled {
			errs = append(errs, add(obj, true))
		}
	}
	return kinds, errors.Join(errs...)
}
