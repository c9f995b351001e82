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

// ApplyOption configures one call of [Applier.Apply] or [Applier.ApplyStatus].
type ApplyOption interface {
	ApplyToApply(*ApplyOptions)
}

// ApplyOptions configures one call of [Applier.Apply] or [Applier.ApplyStatus]. Build it with
// [ApplyOption] values; the zero value is the default behaviour.
type ApplyOptions struct {
	// FieldOwner is the field manager for this call. Default: the Applier's.
	FieldOwner string

	// ForceOwnership takes over the fields in the request that another field manager owns,
	// instead of failing with a 409 Conflict. A controller that is the authority over the
	// objects it applies usually sets it. Default: false.
	ForceOwnership bool

	// OwnedConditions restricts the conditions that [Applier.ApplyStatus] applies to these
	// types: the conditions this field manager owns. Set it whenever several controllers write
	// conditions of one object; each then applies only its own, and server-side apply keeps the
	// others. Default: all conditions of the object.
	OwnedConditions []conditions.Type
}

// ApplyOptions applies opts to o and returns it.
func (o *ApplyOptions) ApplyOptions(opts []ApplyOption) *ApplyOptions {
	for _, opt := range opts {
		opt.ApplyToApply(o)
	}
	return o
}

// OwnedConditions lists the condition types this controller owns; see
// [HelperOptions.OwnedConditions] and [ApplyOptions.OwnedConditions]. Several OwnedConditions
// options add up.
type OwnedConditions []conditions.Type

var (
	_ Option      = OwnedConditions(nil)
	_ ApplyOption = OwnedConditions(nil)
)

// ApplyToHelper implements [Option].
func (c OwnedConditions) ApplyToHelper(o *HelperOptions) {
	o.OwnedConditions = append(o.OwnedConditions, c...)
}

// ApplyToApply implements [ApplyOption].
func (c OwnedConditions) ApplyToApply(o *ApplyOptions) {
	o.OwnedConditions = append(o.OwnedConditions, c...)
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

// FieldOwner names the field manager of the requests; see [HelperOptions.FieldOwner] and
// [ApplyOptions.FieldOwner].
type FieldOwner string

var (
	_ Option      = FieldOwner("")
	_ ApplyOption = FieldOwner("")
)

// ApplyToHelper implements [Option].
func (f FieldOwner) ApplyToHelper(o *HelperOptions) {
	o.FieldOwner = string(f)
}

// ApplyToApply implements [ApplyOption].
func (f FieldOwner) ApplyToApply(o *ApplyOptions) {
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

// ForceOwnership takes over fields other field managers own; see [ApplyOptions.ForceOwnership].
type ForceOwnership bool

var _ ApplyOption = ForceOwnership(false)

// ApplyToApply implements [ApplyOption].
func (f ForceOwnership) ApplyToApply(o *ApplyOptions) {
	o.ForceOwnership = bool(f)
}
