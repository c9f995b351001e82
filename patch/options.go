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

package patch

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/ownership"
)

// ApplyOption configures one call of an [Applier]: [ForceOwnership], [OwnedConditions] or
// [OwnedBy].
type ApplyOption interface {
	applyToApply(o *applyOptions)
}

// applyOptions is what the [ApplyOption] values of one call of an [Applier] ask for.
type applyOptions struct {
	force           bool
	ownedConditions []conditions.Type
	// owned is set by OwnedBy, even with a nil owner, which is then an error.
	owned     bool
	owner     client.Object
	ownerOpts []ownership.SetOption
}

// newApplyOptions applies opts to the defaults.
func newApplyOptions(opts []ApplyOption) applyOptions {
	var o applyOptions
	for _, opt := range opts {
		if opt != nil {
			opt.applyToApply(&o)
		}
	}
	return o
}

// OwnedConditions lists the condition types this controller owns. For [Helper.Patch]: when
// another writer changed one of them since the snapshot, this reconcile's value wins; a change to
// a condition that is not owned, made while another writer changed it too, is a
// [*ConflictError] instead. For [Applier.ApplyStatus] and
// [Applier.ApplyStatusConfiguration] it restricts the conditions applied to these types: the
// conditions this field manager owns. Set it whenever several controllers write conditions of one
// object; each then applies only its own, and server-side apply keeps the others. Default: all
// conditions of the object. Several OwnedConditions options add up.
type OwnedConditions []conditions.Type

var (
	_ Option      = OwnedConditions(nil)
	_ ApplyOption = OwnedConditions(nil)
)

func (c OwnedConditions) applyToHelper(o *helperOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

func (c OwnedConditions) applyToApply(o *applyOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

// ForceOwnership set to true takes over the fields in the request that another field manager
// owns, instead of failing with a 409 Conflict. A controller that is the authority over the
// objects it applies usually sets it. Default: false.
type ForceOwnership bool

var _ ApplyOption = ForceOwnership(false)

func (f ForceOwnership) applyToApply(o *applyOptions) {
	o.force = bool(f)
}

// OwnedBy makes owner the controlling owner of the object [Applier.Apply] or
// [Applier.ApplyConfiguration] applies, as ownership.Set does, checked against the live object the
// Applier reads anyway, so that one call applies an owned child:
//
//	_, err := r.Applier.Apply(ctx, configMap, patch.OwnedBy(cluster), patch.ForceOwnership(true))
//	var refused *ownership.AdoptionError
//	if errors.As(err, &refused) {
//		// Another owner controls it, or the adoption policy refused it: nothing was sent.
//	}
//
// What it does:
//
//   - The request declares owner's mark: a controller owner reference where Kubernetes allows
//     one (owner cluster-scoped, or in the child's namespace), tracking labels and annotations
//     otherwise (see ownership.Set). Its other owner references, labels and annotations are
//     those of the desired object; server-side apply keeps other managers' entries.
//   - Adoption and no stealing: the live object is checked as ownership.Set checks
//     [ownership.Existing], under opts' [ownership.AdoptionPolicy] (default
//     [ownership.AdoptIfUnowned]). A child another owner controls, or one the policy does not
//     adopt, fails the call with an [*ownership.AdoptionError] (branch on it with errors.As) and
//     nothing is sent.
//   - One read: the live object is the one the Applier reads for its no-op proof. When its
//     reader does not find it and [ApplierOptions.APIReader] is set, a cache holding only
//     labelled objects cannot hide an object of that name from the check: the apply is sent as
//     a creation only, which the API server refuses, writing nothing, when an object of that
//     name exists; the API reader then reads it, and it is checked as above. A child the
//     Applier applied before and its reader does not hold is read with the API reader first.
//     The apply after such a read is conditional on it (a creation only when it found nothing,
//     the resourceVersion it read otherwise): an object that another writer creates or changes
//     in between is refused by the API server and read and checked again, up to three applies
//     in all, after which the call returns that 409 (apierrors.IsConflict).
//   - No other object than the one checked: the apply names the uid of the object checked, so
//     that the API server refuses it for any other. A cache that lags may still hold a child
//     deleted since, or replaced by another writer's object of the same name; the apply then
//     writes nothing, and the call returns a conflict (apierrors.IsConflict, a quiet requeue,
//     by which time the cache has caught up), or, with [ApplierOptions.APIReader], reads the
//     object and checks it as above. A reader that holds the child without a uid (a
//     hand-built one) has the apply conditional on the resourceVersion it holds instead, which
//     any change of the object fails as well; one that holds neither cannot be checked.
//   - opts are ownership.Set's options ([ownership.RequireMechanism],
//     [ownership.BlockOwnerDeletion]); an [ownership.Existing] among them is replaced by the live
//     object.
//
// owner must have been read from the API server (its UID is what the mark records), and its kind
// must be known to the client's scheme. [Applier.ApplyStatus] refuses OwnedBy: ownership is
// metadata, which the status subresource does not write.
func OwnedBy(owner client.Object, opts ...ownership.SetOption) ApplyOption {
	return ownedBy{owner: owner, opts: opts}
}

// ownedBy is the [ApplyOption] OwnedBy returns.
type ownedBy struct {
	owner client.Object
	opts  []ownership.SetOption
}

var _ ApplyOption = ownedBy{}

func (b ownedBy) applyToApply(o *applyOptions) {
	o.owned, o.owner, o.ownerOpts = true, b.owner, b.opts
}
