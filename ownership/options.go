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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetOptions configures [Set]. Build it with [SetOption] values; the zero value picks the
// mechanism automatically, adopts only unowned objects and blocks the owner's deletion.
type SetOptions struct {
	// Adoption decides whether Set takes an existing child that the owner does not control
	// yet. Defaults to [AdoptIfUnowned].
	Adoption AdoptionPolicy

	// Mechanism, when not empty, is the only mechanism Set may use. [ControllerReference] makes
	// Set return a [*ScopeError] instead of falling back to tracking, for callers that rely on
	// the garbage collector; [TrackingLabels] tracks even where an owner reference would be
	// allowed. Defaults to empty: an owner reference where Kubernetes allows one, tracking
	// otherwise.
	Mechanism Mechanism

	// BlockOwnerDeletion is the BlockOwnerDeletion of the owner reference Set writes: with
	// foreground deletion, the owner stays until the child is gone. Setting it to true needs
	// permission to update the owner's finalizers subresource (kubebuilder's RBAC markers grant
	// it), as with controller-runtime's SetControllerReference. Defaults to true.
	BlockOwnerDeletion *bool

	// Existing is the child as the API server has it, for a child built from scratch, as for
	// server-side apply: Set applies the adoption policy and the no-stealing rule to it as well
	// as to the child it modifies. Nil, or an object without a UID (as left by a Get that
	// returned NotFound), means the child does not exist yet.
	Existing client.Object
}

// SetOption configures [Set].
type SetOption interface {
	// ApplyToSet sets the option on opts.
	ApplyToSet(opts *SetOptions)
}

// AdoptionPolicy decides whether [Set] takes over an existing child that the owner does not
// control yet. An existing child is one with a UID: read from the API server rather than built
// to be created. No policy ever takes a child that another owner controls, by either mechanism:
// Set returns an [*AlreadyOwnedError] instead.
//
// A child "built to be created" has no UID, so no policy applies to it: to protect an object
// that server-side apply would take over, pass the live object with [Existing].
type AdoptionPolicy string

const (
	// AdoptIfUnowned takes an existing child that nobody owns: no owner references (other than
	// the owner's own) and no tracking labels. This is the default, and the safe choice for
	// children whose names could clash with objects that someone else made.
	AdoptIfUnowned AdoptionPolicy = "IfUnowned"

	// AdoptNever takes no existing child: the owner controls only objects it created. Set
	// returns a [*NotAdoptedError] for an existing child that it does not control already.
	AdoptNever AdoptionPolicy = "Never"

	// AdoptAlways also takes an existing child that has owner references without the controller
	// flag, and a child left behind by a previous incarnation of the owner (an object of the
	// same kind, namespace and name, with another UID, which was deleted without its
	// children).
	//
	// Risks: the other owners' references stay, so the garbage collector deletes the child only
	// when every owner is gone, and a child adopted from a deleted incarnation may have been
	// left on purpose, for a human to inspect. Objects whose names a user may pick deserve
	// AdoptIfUnowned. AdoptAlways still never takes a child that another live owner controls:
	// "always" is about objects nobody controls, not a licence to steal.
	AdoptAlways AdoptionPolicy = "Always"
)

// ApplyToSet implements [SetOption].
func (p AdoptionPolicy) ApplyToSet(opts *SetOptions) {
	opts.Adoption = p
}

// RequireMechanism makes [Set] use only the given mechanism; see [SetOptions.Mechanism].
type RequireMechanism Mechanism

// ApplyToSet implements [SetOption].
func (m RequireMechanism) ApplyToSet(opts *SetOptions) {
	opts.Mechanism = Mechanism(m)
}

// BlockOwnerDeletion sets the BlockOwnerDeletion of the owner reference; see
// [SetOptions.BlockOwnerDeletion].
type BlockOwnerDeletion bool

// ApplyToSet implements [SetOption].
func (b BlockOwnerDeletion) ApplyToSet(opts *SetOptions) {
	v := bool(b)
	opts.BlockOwnerDeletion = &v
}

// Existing names the child as the API server has it; see [SetOptions.Existing].
type Existing struct {
	// Object is the live child, or nil when it does not exist.
	Object client.Object
}

// ApplyToSet implements [SetOption].
func (e Existing) ApplyToSet(opts *SetOptions) {
	opts.Existing = e.Object
}

// ChildrenOptions configures [ListChildren], [Prune] and [DeleteTracked]. Build it with
// [ChildrenOption] values; the zero value lists without an index and deletes in the background.
type ChildrenOptions struct {
	// UseIndex lists children with one query on the field index [IndexField], which must be
	// registered for the kind on the reader's cache (see [Index]). The API server has no such
	// field: use it only with a cache-backed reader. Defaults to false: a label selector finds
	// tracked children, and a listing of the owner's namespace (all namespaces for a
	// cluster-scoped owner) filtered in memory finds the referenced ones.
	UseIndex bool

	// MatchingLabels narrows the children to those with these labels, for an owner that prunes
	// several groups of children of one kind separately. Defaults to none: every child of the
	// kind.
	MatchingLabels map[string]string

	// Propagation is the propagation policy of deletions: what happens to the child's own
	// dependents. Defaults to background (the child goes at once, its dependents soon after);
	// foreground keeps the child, and DeleteTracked's count of remaining children, until its
	// dependents are gone.
	Propagation metav1.DeletionPropagation
}

// ChildrenOption configures [ListChildren], [Prune] and [DeleteTracked].
type ChildrenOption interface {
	// ApplyToChildren sets the option on opts.
	ApplyToChildren(opts *ChildrenOptions)
}

// UseIndex lists children through the field index; see [ChildrenOptions.UseIndex].
type UseIndex bool

// ApplyToChildren implements [ChildrenOption].
func (u UseIndex) ApplyToChildren(opts *ChildrenOptions) {
	opts.UseIndex = bool(u)
}

// MatchingLabels narrows the children by label; see [ChildrenOptions.MatchingLabels]. Several
// are combined.
type MatchingLabels map[string]string

// ApplyToChildren implements [ChildrenOption].
func (m MatchingLabels) ApplyToChildren(opts *ChildrenOptions) {
	if opts.MatchingLabels == nil {
		opts.MatchingLabels = make(map[string]string, len(m))
	}
	for k, v := range m {
		opts.MatchingLabels[k] = v
	}
}

// Propagation sets the propagation policy of deletions; see [ChildrenOptions.Propagation].
type Propagation metav1.DeletionPropagation

// ApplyToChildren implements [ChildrenOption].
func (p Propagation) ApplyToChildren(opts *ChildrenOptions) {
	opts.Propagation = metav1.DeletionPropagation(p)
}

var (
	_ SetOption      = AdoptIfUnowned
	_ SetOption      = RequireMechanism(TrackingLabels)
	_ SetOption      = BlockOwnerDeletion(true)
	_ SetOption      = Existing{}
	_ ChildrenOption = UseIndex(true)
	_ ChildrenOption = MatchingLabels{}
	_ ChildrenOption = Propagation(metav1.DeletePropagationBackground)
)
