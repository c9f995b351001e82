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

// ApplyCallOption configures one call of an [Applier]: [ForceConflicts], [OwnedConditions] or
// [OwnedBy].
type ApplyCallOption interface {
	applyToApply(o *applyOptions)
}

// applyOptions is what the [ApplyCallOption] values of one call of an [Applier] ask for.
type applyOptions struct {
	force           bool
	ownedConditions []conditions.Type
	// owned is set by OwnedBy, even with a nil owner, which is then an error.
	owned     bool
	owner     client.Object
	ownerOpts []ownership.SetOption
}

// newApplyOptions applies opts to the defaults.
func newApplyOptions(opts []ApplyCallOption) applyOptions {
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
	_ Option          = OwnedConditions(nil)
	_ ApplyCallOption = OwnedConditions(nil)
)

func (c OwnedConditions) applyToHelper(o *helperOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

func (c OwnedConditions) applyToApply(o *applyOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

// ForceConflicts set to true takes over the fields in the request that another field manager
// owns, instead of failing with a 409 Conflict. A controller that is the authority over the
// objects it applies usually sets it. It is the apply request's force parameter, as kubectl's
// --force-conflicts sets it (controller-runtime's client.ForceOwnership is the same for its own
// client's Apply). Default: false.
type ForceConflicts bool

var _ ApplyCallOption = ForceConflicts(false)

func (f ForceConflicts) applyToApply(o *applyOptions) {
	o.force = bool(f)
}

// OwnedBy makes owner the controlling owner of the object [Applier.Apply] or
// [Applier.ApplyConfiguration] applies, as ownership.Set does, checked against the live object the
// Applier reads anyway, so that one call applies an owned child:
//
//	_, err := r.Applier.Apply(ctx, configMap, patch.OwnedBy(cluster), patch.ForceConflicts(true))
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
//   - The apply is conditional on what was checked, so that two workers of one controller with a
//     cache that lags cannot both take one child. A lost race is an [*ownership.AdoptionError]
//     naming the winner (with [ApplierOptions.APIReader]) or a conflict (apierrors.IsConflict),
//     never an invalid spec and never an overwrite; "Applying an owned child" in the package
//     documentation says how.
//   - opts are ownership.Set's options ([ownership.RequireMechanism],
//     [ownership.BlockOwnerDeletion]); an [ownership.Existing] among them is replaced by the live
//     object.
//
// owner must have been read from the API server (its UID is what the mark records), and its kind
// must be known to the client's scheme. [Applier.ApplyStatus] refuses OwnedBy: ownership is
// metadata, which the status subresource does not write.
func OwnedBy(owner client.Object, opts ...ownership.SetOption) ApplyCallOption {
	return ownedBy{owner: owner, opts: opts}
}

// ownedBy is the [ApplyCallOption] OwnedBy returns.
type ownedBy struct {
	owner client.Object
	opts  []ownership.SetOption
}

var _ ApplyCallOption = ownedBy{}

func (b ownedBy) applyToApply(o *applyOptions) {
	o.owned, o.owner, o.ownerOpts = true, b.owner, b.opts
}
