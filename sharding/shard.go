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
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The labels of the sharder's protocol (github.com/timebertt/kubernetes-controller-sharding,
// API group sharding.timebertt.dev, version v1alpha1). Their spelling is the protocol: the
// sharder, its webhook and every shard of a ring must agree on them.
const (
	// RingLabel is the label on a shard's Lease that names the ring (the ControllerRing) the
	// shard belongs to. The sharder builds the ring from the Leases that carry it.
	RingLabel = "alpha.sharding.timebertt.dev/controllerring"

	// ShardLabelPrefix followed by the ring's name is the key of the label on sharded objects
	// whose value is the name of the shard the object is assigned to: see [Shard.ShardLabel].
	ShardLabelPrefix = "shard.alpha.sharding.timebertt.dev/"

	// DrainLabelPrefix followed by the ring's name is the key of the label the sharder adds to
	// an object to move it off its shard: see [Shard.DrainLabel]. Its value means nothing.
	DrainLabelPrefix = "drain.alpha.sharding.timebertt.dev/"
)

// Shard is one member of a ring of controllers that share the objects of the ring's kinds: the
// ring's name (the name of its ControllerRing) and the shard's own name, which is also the name
// of its Lease and the identity that holds it. Build it with [New], which checks both.
//
// The methods of a Shard read labels only; none of them sends a request. Copies of a Shard
// that [New] returned share what its reconcilers know of the objects in flight (see
// [Shard.Reconciler]); a Shard written as a literal does not, and each reconciler built from it
// knows only its own controller's.
type Shard struct {
	// Ring is the name of the ring (the ControllerRing).
	Ring string
	// Name is the shard's name: the name of its Lease, the holder identity it writes into the
	// Lease, and the value of the shard label on the objects assigned to it. It must be unique
	// among the ring's shards at any time; a pod's name is the usual choice.
	Name string

	// flights is shared by the reconcilers of the copies of the Shard New returned.
	flights *flights
}

// maxRingName is the longest ring name: the ring's name is the name part of two label keys,
// which Kubernetes limits to 63 characters.
const maxRingName = validation.LabelValueMaxLength

// New returns the shard named name of the ring named ring. It returns an error naming what is
// wrong when ring cannot be a ControllerRing's name that is also the name part of a label key
// (a DNS-1123 subdomain of at most 63 characters) or name cannot be both a label value and a
// Lease's name.
func New(ring, name string) (Shard, error) {
	var errs []error
	if ring == "" {
		errs = append(errs, errors.New("the ring's name is empty"))
	} else if problems := validation.IsDNS1123Subdomain(ring); len(problems) > 0 || len(ring) > maxRingName {
		if len(ring) > maxRingName {
			problems = append(problems, fmt.Sprintf("must be no more than %d characters", maxRingName))
		}
		errs = append(errs, fmt.Errorf("the ring's name %q cannot be a ControllerRing's name and part of a label key: %s", ring, strings.Join(problems, "; ")))
	}
	if name == "" {
		errs = append(errs, errors.New("the shard's name is empty"))
	} else {
		problems := validation.IsValidLabelValue(name)
		problems = append(problems, validation.IsDNS1123Subdomain(name)...)
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("the shard's name %q cannot be a label value and a Lease's name: %s", name, strings.Join(problems, "; ")))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Shard{}, fmt.Errorf("failed to build shard %q of ring %q: %w", name, ring, err)
	}
	return Shard{Ring: ring, Name: name, flights: newFlights()}, nil
}

// ShardLabel returns the key of the label whose value names the shard an object of the ring is
// assigned to: "shard.alpha.sharding.timebertt.dev/" and the ring's name.
func (s Shard) ShardLabel() string { return ShardLabelPrefix + s.Ring }

// DrainLabel returns the key of the label the sharder adds to an object of the ring to move it
// off its shard: "drain.alpha.sharding.timebertt.dev/" and the ring's name.
func (s Shard) DrainLabel() string { return DrainLabelPrefix + s.Ring }

// Selector returns the label selector that matches the objects assigned to this shard: the
// shard label equal to its name.
func (s Shard) Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{s.ShardLabel(): s.Name})
}

// Holds reports whether obj is assigned to this shard and not being drained from it: its
// shard label names this shard and it has no drain label. A nil obj is not held.
func (s Shard) Holds(obj client.Object) bool {
	return s.assigned(obj) && !s.Draining(obj)
}

// Draining reports whether the sharder asked for obj to be moved off its shard: obj carries the
// ring's drain label, whatever its value. A nil obj is not draining.
func (s Shard) Draining(obj client.Object) bool {
	if obj == nil {
		return false
	}
	_, ok := obj.GetLabels()[s.DrainLabel()]
	return ok
}

// assigned reports whether obj's shard label names this shard.
func (s Shard) assigned(obj client.Object) bool {
	return obj != nil && obj.GetLabels()[s.ShardLabel()] == s.Name
}

// String returns "ring/name".
func (s Shard) String() string { return s.Ring + "/" + s.Name }
