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
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetOption configures [Set]: an [AdoptionPolicy], [RequireMechanism], [BlockOwnerDeletion] or
// [Existing]. Without options Set picks the mechanism, adopts only unowned children and blocks
// the owner's deletion.
type SetOption interface {
	applyToSet(opts *setOptions)
}

// setOptions is what the [SetOption] values of one call of [Set] ask for.
type setOptions struct {
	adoption           AdoptionPolicy
	mechanism          Mechanism
	blockOwnerDeletion bool
	existing           client.Object
}

// newSetOptions applies opts to the defaults.
func newSetOptions(opts []SetOption) setOptions {
	o := setOptions{adoption: AdoptIfUnowned, blockOwnerDeletion: true}
	for _, opt := range opts {
		if opt != nil {
			opt.applyToSet(&o)
		}
	}
	return o
}

// AdoptionPolicy decides whether [Set] takes over an existing child that the owner does not
// control yet. An existing child is one with a UID: read from the API server rather than built
// to be created. No policy ever takes a child that another owner controls, by either mechanism:
// Set returns an [*AdoptionError] naming that owner instead.
//
// A child "built to be created" has no UID, so no policy applies to it: to protect an object
// that server-side apply would take over, pass the live object with [Existing] (tenon's
// patch.OwnedBy does).
type AdoptionPolicy string

const (
	// AdoptIfUnowned takes an existing child that nobody owns: no owner references (other than
	// the owner's own) and no tracking labels. This is the default, and the safe choice for
	// children whose names could clash with objects that someone else made.
	AdoptIfUnowned AdoptionPolicy = "IfUnowned"

	// AdoptNever takes no existing child: the owner controls only objects it created. Set
	// returns an [*AdoptionError] for an existing child that it does not control already.
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

func (p AdoptionPolicy) applyToSet(opts *setOptions) {
	opts.adoption = p
}

// RequireMechanism makes [Set] use only the given mechanism. [ControllerReference] makes Set
// return a [*ScopeError] instead of falling back to tracking, for callers that rely on the
// garbage collector; [TrackingLabels] tracks even where an owner reference would be allowed.
// Without it Set uses an owner reference where Kubernetes allows one, tracking otherwise.
type RequireMechanism Mechanism

func (m RequireMechanism) applyToSet(opts *setOptions) {
	opts.mechanism = Mechanism(m)
}

// BlockOwnerDeletion is the BlockOwnerDeletion field of the owner reference [Set] writes: with
// foreground deletion, the owner stays until the child is gone. It defaults to true, which
// needs permission to update the owner's finalizers subresource (kubebuilder's RBAC markers
// grant it), as with controller-runtime's SetControllerReference; pass BlockOwnerDeletion(false)
// for a controller without that permission. Tracking labels have no such field.
type BlockOwnerDeletion bool

func (b BlockOwnerDeletion) applyToSet(opts *setOptions) {
	opts.blockOwnerDeletion = bool(b)
}

// Existing is the child as the API server has it, for a child built from scratch, as for
// server-side apply: [Set] applies the adoption policy and the no-stealing rule to it as well as
// to the child it modifies. A nil Object, or one without a UID (as left by a Get that returned
// NotFound), means the child does not exist yet. tenon's patch.OwnedBy reads the live child and
// passes it for the caller.
type Existing struct {
	// Object is the live child, or nil when it does not exist.
	Object client.Object
}

func (e Existing) applyToSet(opts *setOptions) {
	opts.existing = e.Object
}

// ChildrenOption configures [ListChildren], [Prune] and [DeleteTracked]: [UseIndex],
// [ChildLabels], [Propagation] or [APIReader]. Without options they list without an index,
// every child of the kind, and delete in the background.
type ChildrenOption interface {
	applyToChildren(opts *childrenOptions)
}

// childrenOptions is what the [ChildrenOption] values of one call ask for.
type childrenOptions struct {
	useIndex       bool
	matchingLabels map[string]string
	propagation    metav1.DeletionPropagation
	apiReader      client.Reader
}

// newChildrenOptions applies opts to the defaults.
func newChildrenOptions(opts []ChildrenOption) childrenOptions {
	o := childrenOptions{propagation: metav1.DeletePropagationBackground}
	for _, opt := range opts {
		if opt != nil {
			opt.applyToChildren(&o)
		}
	}
	return o
}

// UseIndex set to true lists children with one query on the field index [IndexField], which must
// be registered for the kind on the reader's cache (see [Index]). The API server has no such
// field: use it only with a cache-backed reader. Without it a label selector finds tracked
// children, and a listing of the owner's namespace (all namespaces for a cluster-scoped owner)
// filtered in memory finds the referenced ones.
type UseIndex bool

func (u UseIndex) applyToChildren(opts *childrenOptions) {
	opts.useIndex = bool(u)
}

// ChildLabels narrows the children to those with these labels, for an owner that prunes
// several groups of children of one kind separately. Several are combined. Without it every
// child of the kind counts.
type ChildLabels map[string]string

func (m ChildLabels) applyToChildren(opts *childrenOptions) {
	if opts.matchingLabels == nil {
		opts.matchingLabels = make(map[string]string, len(m))
	}
	maps.Copy(opts.matchingLabels, m)
}

// Propagation is the propagation policy of deletions: what happens to the child's own
// dependents. It defaults to background (the child goes at once, its dependents soon after);
// foreground keeps the child, and [DeleteTracked]'s count of remaining children, until its
// dependents are gone.
type Propagation metav1.DeletionPropagation

func (p Propagation) applyToChildren(opts *childrenOptions) {
	if p != "" {
		opts.propagation = metav1.DeletionPropagation(p)
	}
}

// APIReader returns an option with which [DeleteTracked] confirms that no tracked child is left
// by listing them from reader, which reads from the API server (a manager's GetAPIReader()),
// before it reports 0: a cleanup that trusted a cache that has not seen a child yet would remove
// its finalizer and leak the child. It costs one list request per kind, with the tracking
// label, when the cache says none is left. [ListChildren] and [Prune] do not use it.
//
// DeleteTracked requires it for an owner assigned to a shard (see package sharding): the
// sharder never assigns tracked children, so a shard's cache may not hold them. Give it a
// reader of the API server, never the manager's cached client, which would confirm nothing.
func APIReader(reader client.Reader) ChildrenOption {
	return apiReaderOption{reader: reader}
}

type apiReaderOption struct{ reader client.Reader }

func (a apiReaderOption) applyToChildren(opts *childrenOptions) {
	if a.reader != nil {
		opts.apiReader = a.reader
	}
}

var (
	_ SetOption      = AdoptIfUnowned
	_ SetOption      = RequireMechanism(TrackingLabels)
	_ SetOption      = BlockOwnerDeletion(true)
	_ SetOption      = Existing{}
	_ ChildrenOption = UseIndex(true)
	_ ChildrenOption = ChildLabels{}
	_ ChildrenOption = Propagation(metav1.DeletePropagationBackground)
)
