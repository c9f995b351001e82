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
	"github.com/tenon-dev/tenon/conditions"
)

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

// OwnedConditions lists the condition types this controller owns, for [Helper.Patch] and for
// [Applier.ApplyStatus]. Several OwnedConditions options add up.
//
// For Patch: when another writer changed one of these conditions since the snapshot, this
// reconcile's value wins; a change to a condition that is not owned, made while another writer
// changed it too, is a [*ConflictError] instead, for the next reconcile to look again. For
// ApplyStatus: see [ApplyOptions.OwnedConditions].
type OwnedConditions []conditions.Type

var (
	_ Option      = OwnedConditions(nil)
	_ ApplyOption = OwnedConditions(nil)
)

func (c OwnedConditions) applyToHelper(o *helperOptions) {
	o.ownedConditions = append(o.ownedConditions, c...)
}

// ApplyToApply implements [ApplyOption].
func (c OwnedConditions) ApplyToApply(o *ApplyOptions) {
	o.OwnedConditions = append(o.OwnedConditions, c...)
}

// FieldOwner names the field manager of one apply; see [ApplyOptions.FieldOwner].
type FieldOwner string

var _ ApplyOption = FieldOwner("")

// ApplyToApply implements [ApplyOption].
func (f FieldOwner) ApplyToApply(o *ApplyOptions) {
	o.FieldOwner = string(f)
}

// ForceOwnership takes over fields other field managers own; see [ApplyOptions.ForceOwnership].
type ForceOwnership bool

var _ ApplyOption = ForceOwnership(false)

// ApplyToApply implements [ApplyOption].
func (f ForceOwnership) ApplyToApply(o *ApplyOptions) {
	o.ForceOwnership = bool(f)
}
