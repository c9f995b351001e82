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
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AdoptionError is returned by [Set] when it refuses to take a child, for one of two reasons:
//
//   - Another owner controls the child, through an owner reference or tracking labels: Owner
//     names it. No adoption policy takes such a child: two controllers fighting over one object
//     would each undo the other's changes. A previous incarnation of the owner passed to Set
//     counts as another owner (PreviousIncarnation), except under [AdoptAlways].
//   - Nobody controls the child, it exists, and the adoption policy does not allow taking it:
//     any existing child under [AdoptNever], a child with other owners' (non-controller)
//     references under [AdoptIfUnowned]. Owner is nil.
//
// Branch on it with errors.As. Retrying at once does not help: nothing changes until the other
// owner lets go or a person deletes or releases the child, and no event reaches this owner when
// that happens, since the child's events go to its controller. Either report it as a failure a
// person must act on (requeue.Terminal makes the owner Stalled; whoever frees the child then
// touches the owner, an annotation will do, to have it reconciled) or keep coming back: return
// the error and let the controller's backoff retry it, ever more slowly.
type AdoptionError struct {
	// Owner is the owner that controls the child, or nil when nobody does. For an owner
	// reference, Owner.Namespace is the child's namespace (see [OwnerOf]).
	Owner *Owner

	// PreviousIncarnation reports that Owner has the kind, namespace and name of the owner
	// passed to Set but another UID: that owner was deleted and recreated, and its child was
	// left behind. [AdoptAlways] takes such children over; the other policies do not, so that a
	// recreated owner does not inherit what its predecessor left. A child the predecessor
	// referenced (Owner.Mechanism is [ControllerReference]) is deleted by the garbage collector
	// soon, after which the owner can create its own.
	PreviousIncarnation bool

	// Policy is the adoption policy Set applied.
	Policy AdoptionPolicy

	// OwnerReferences are the owner references, without the controller flag, that made
	// [AdoptIfUnowned] refuse a child nobody controls; empty otherwise.
	OwnerReferences []metav1.OwnerReference

	// child is the child Set was asked to take.
	child reference
}

// Error implements error.
func (e *AdoptionError) Error() string {
	if e.Owner != nil {
		how := "an owner reference"
		if e.Owner.Mechanism == TrackingLabels {
			how = "tracking labels"
		}
		msg := fmt.Sprintf("%s is already controlled by %s (uid %s, through %s)", e.child, e.Owner, e.Owner.UID, how)
		if e.PreviousIncarnation {
			msg += ", a deleted object of the same name that left it behind: delete it, or adopt it with the adoption policy Always"
		}
		return msg
	}
	if len(e.OwnerReferences) == 0 {
		return fmt.Sprintf("refusing to adopt existing %s: the adoption policy is %s", e.child, e.Policy)
	}
	refs := make([]string, len(e.OwnerReferences))
	for i, r := range e.OwnerReferences {
		gv, _ := schema.ParseGroupVersion(r.APIVersion)
		refs[i] = reference{Group: gv.Group, Kind: r.Kind, Name: r.Name}.String()
	}
	return fmt.Sprintf("refusing to adopt existing %s: it has owner references to %s, and the adoption policy is %s",
		e.child, strings.Join(refs, ", "), e.Policy)
}

// ScopeError reports that Kubernetes does not allow an owner reference from a child to its
// owner: the child is in another namespace than its namespaced owner, or the child is
// cluster-scoped and the owner is not. [Set] returns it only when [RequireMechanism] asks for
// [ControllerReference]; otherwise it tracks such children instead.
type ScopeError struct {
	// owner and child are the two objects; their kinds are empty when unknown.
	owner, child reference
}

// Error implements error.
func (e *ScopeError) Error() string {
	if e.child.Namespace == "" {
		return fmt.Sprintf("cannot make %s the owner of %s through an owner reference: a cluster-scoped object cannot have a namespaced owner",
			e.owner, e.child)
	}
	return fmt.Sprintf("cannot make %s the owner of %s through an owner reference: owner references cannot cross namespaces",
		e.owner, e.child)
}
