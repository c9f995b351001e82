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
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/ownership"
)

// Option configures one call of [Helper.Patch].
type Option interface {
	ApplyToHelper(*HelperOptions)
}

// HelperOptions configures one call of [Helper.Patch]. Build it with [Option] values; the zero
// value is the default behaviour.
type HelperOptions struct {
	// OwnedConditions lists the condition types this controller owns: when another writer
	// changed one of them since the snapshot, this reconcile's value wins. A change to a
	// condition that is not owned, made while another writer changed it too, fails with a
	// *conditions.ConflictError instead, for the next reconcile to look again. Default: none.
	OwnedConditions []conditions.Type

	// ForceOverwriteConditions makes every condition change win, as if all types were owned.
	// Default: false.
	ForceOverwriteConditions bool

	// ObservedGeneration sets status.observedGeneration to the metadata.generation of the
	// snapshot, the generation this reconcile acted on, before computing the patch. The object
	// must have the field (see conditions.SetObservedGeneration). Default: false.
	ObservedGeneration bool

	// FieldOwner is the field manager recorded in managedFields for the requests. Default: the
	// client's, which is the program's name unless the client was wrapped with
	// client.WithFieldOwner.
	FieldOwner string

	// LatestFrom reads the latest object after a conflict. Default: the Helper's client. A
	// manager's client reads from its cache, which may not have caught up with the write that
	// caused the conflict yet, so a retry can conflict again; the retries usually outlast the
	// lag, but a reader that goes to the API server (mgr.GetAPIReader()) never lags.
	LatestFrom client.Reader

	// Backoff paces the retries after a conflict: Steps is the number of retries, Duration the
	// first delay, growing by Factor up to Cap, each delay stretched by up to Jitter times
	// itself at random. Default (zero Steps): 5 retries starting at 10ms, doubling, with
	// Jitter 1, capped at 1s: at most about 0.6s of waiting.
	Backoff wait.Backoff
}

// ApplyOptions applies opts to o and returns it.
func (o *HelperOptions) ApplyOptions(opts []Option) *HelperOptions {
	for _, opt := range opts {
		opt.ApplyToHelper(o)
	}
	return o
}

func (o *HelperOptions) backoff() wait.Backoff {
	if o.Backoff.Steps > 0 {
		return o.Backoff
	}
	return wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: time.Second}
}

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

// OwnedConditions lists the condition types this controller owns; see
// [HelperOptions.OwnedConditions]. For [Applier.ApplyStatus] and
// [Applier.ApplyStatusConfiguration] it restricts the conditions applied to these types: the
// conditions this field manager owns. Set it whenever several controllers write conditions of one
// object; each then applies only its own, and server-side apply keeps the others. Default: all
// conditions of the object. Several OwnedConditions options add up.
type OwnedConditions []conditions.Type

var (
	_ Option      = OwnedConditions(nil)
	_ ApplyOption = OwnedConditions(nil)
)

// ApplyToHelper implements [Option].
func (c OwnedConditions) ApplyToHelper(o *HelperOptions) {
	o.OwnedConditions = append(o.OwnedConditions, c...)
}

func (c OwnedConditions) applyToApply(o *applyOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

// ForceOverwriteConditions makes every condition change win; see
// [HelperOptions.ForceOverwriteConditions].
type ForceOverwriteConditions bool

var _ Option = ForceOverwriteConditions(false)

// ApplyToHelper implements [Option].
func (f ForceOverwriteConditions) ApplyToHelper(o *HelperOptions) {
	o.ForceOverwriteConditions = bool(f)
}

// WithObservedGeneration sets status.observedGeneration; see [HelperOptions.ObservedGeneration].
type WithObservedGeneration struct{}

var _ Option = WithObservedGeneration{}

// ApplyToHelper implements [Option].
func (WithObservedGeneration) ApplyToHelper(o *HelperOptions) {
	o.ObservedGeneration = true
}

// FieldOwner names the field manager of the requests; see [HelperOptions.FieldOwner].
type FieldOwner string

var _ Option = FieldOwner("")

// ApplyToHelper implements [Option].
func (f FieldOwner) ApplyToHelper(o *HelperOptions) {
	o.FieldOwner = string(f)
}

// RetryBackoff paces the retries after conflicts; see [HelperOptions.Backoff].
type RetryBackoff wait.Backoff

// ReadLatestFrom makes the Helper read the latest object from this reader after a conflict; see
// [HelperOptions.LatestFrom].
type ReadLatestFrom struct {
	client.Reader
}

var _ Option = ReadLatestFrom{}

// ApplyToHelper implements [Option].
func (r ReadLatestFrom) ApplyToHelper(o *HelperOptions) {
	o.LatestFrom = r.Reader
}

var _ Option = RetryBackoff{}

// ApplyToHelper implements [Option].
func (b RetryBackoff) ApplyToHelper(o *HelperOptions) {
	o.Backoff = wait.Backoff(b)
}

// ForceOwnership, when true, takes over the fields in the request that another field manager
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
//     reader does not find it, [ApplierOptions.APIReader], when set, is asked once more, so that
//     a cache holding only labelled objects cannot hide an object of that name from the check.
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
