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

// AlreadyOwnedError is returned by [Set] when the child is controlled by another owner, through
// an owner reference or tracking labels. Set never takes such a child, whatever the adoption
// policy: two controllers fighting over one object would each undo the other's changes.
//
// Retrying at once does not help: nothing changes until the other owner lets go or a human
// deletes the child. Report it in a condition and come back after a long delay; no event
// reaches this owner when the child is freed, since the child's events go to its owner.
type AlreadyOwnedError struct {
	// Child is the child Set was asked to take.
	Child Reference

	// Owner is the owner that controls the child. For an owner reference, Owner.Namespace is
	// the child's namespace (see [OwnerOf]).
	Owner Owner

	// PreviousIncarnation reports that Owner has the kind, namespace and name of the owner
	// passed to Set but another UID: that owner was deleted and recreated, and its child was
	// left behind. [AdoptAlways] takes such children over; the other policies do not, so that a
	// recreated owner does not inherit what its predecessor left. A child the predecessor
	// referenced (Owner.Mechanism is [ControllerReference]) is deleted by the garbage collector
	// soon, after which the owner can create its own.
	PreviousIncarnation bool
}

// Error implements error.
func (e *AlreadyOwnedError) Error() string {
	how := "an owner reference"
	if e.Owner.Mechanism == TrackingLabels {
		how = "tracking labels"
	}
	msg := fmt.Sprintf("%s is already controlled by %s (uid %s, through %s)", e.Child, e.Owner.Reference, e.Owner.UID, how)
	if e.PreviousIncarnation {
		msg += ", a deleted object of the same name that left it behind: delete it, or adopt it with the adoption policy Always"
	}
	return msg
}

// NotAdoptedError is returned by [Set] when the child exists, nobody controls it, and the
// adoption policy does not allow taking it: any existing child under [AdoptNever], a child
// with other owners' (non-controller) references under [AdoptIfUnowned].
type NotAdoptedError struct {
	// Child is the child Set was asked to take.
	Child Reference

	// Policy is the adoption policy that refused it.
	Policy AdoptionPolicy

	// OwnerReferences are the child's owner references that made [AdoptIfUnowned] refuse; empty
	// for [AdoptNever].
	OwnerReferences []metav1.OwnerReference
}

// Error implements error.
func (e *NotAdoptedError) Error() string {
	if len(e.OwnerReferences) == 0 {
		return fmt.Sprintf("refusing to adopt existing %s: the adoption policy is %s", e.Child, e.Policy)
	}
	refs := make([]string, len(e.OwnerReferences))
	for i, r := range e.OwnerReferences {
		gv, _ := schema.ParseGroupVersion(r.APIVersion)
		refs[i] = Reference{Group: gv.Group, Kind: r.Kind, Name: r.Name}.String()
	}
	return fmt.Sprintf("refusing to adopt existing %s: it has owner references to %s, and the adoption policy is %s",
		e.Child, strings.Join(refs, ", "), e.Policy)
}

// ScopeError reports that an owner reference from Child to Owner is not allowed: the child is
// in another namespace than its namespaced owner, or the child is cluster-scoped and the owner
// is not. [Set] returns it only when [RequireMechanism] asks for [ControllerReference];
// otherwise it tracks such children instead. See [ValidateOwnerReference].
type ScopeError struct {
	// Owner and Child are the two objects; their kinds are empty when unknown.
	Owner, Child Reference
}

// Error implements error.
func (e *ScopeError) Error() string {
	if e.Child.Namespace == "" {
		return fmt.Sprintf("cannot make %s the owner of %s through an owner reference: a cluster-scoped object cannot have a namespaced owner",
			e.Owner, e.Child)
	}
	return fmt.Sprintf("cannot make %s the owner of %s through an owner reference: owner references cannot cross namespaces",
		e.Owner, e.Child)
}
