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

package conditions

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Patch is the set of condition changes a controller made to an object, computed from the
// conditions before and after its reconcile by [NewPatch]. Applied to the latest version of the
// object read from the API server, it carries over only those changes, so that conditions other
// writers set in the meantime survive: a three-way merge.
type Patch []change

// change is one condition type that differs between before and after; a nil side means absent.
type change struct {
	t             string
	before, after *metav1.Condition
}

// NewPatch returns the changes from before to after. Conditions that are equal in both (see
// [Set] for what equal means) are not part of it.
func NewPatch(before, after []metav1.Condition) Patch {
	var p Patch
	for i := range after {
		a := &after[i]
		j := indexOf(before, a.Type)
		if j >= 0 && equal(&before[j], a) {
			continue
		}
		ch := change{t: a.Type, after: a}
		if j >= 0 {
			ch.before = &before[j]
		}
		p = append(p, ch)
	}
	for i := range before {
		if indexOf(after, before[i].Type) < 0 {
			p = append(p, change{t: before[i].Type, before: &before[i]})
		}
	}
	return p
}

// IsEmpty reports whether the patch changes nothing.
func (p Patch) IsEmpty() bool { return len(p) == 0 }

// Types returns the condition types the patch changes, in the order of the patch.
func (p Patch) Types() []Type {
	out := make([]Type, len(p))
	for i := range p {
		out[i] = Type(p[i].t)
	}
	return out
}

// ApplyOptions configures [Patch.Apply]. Build it with [ApplyOption] values.
type ApplyOptions struct {
	// OwnedConditions lists types this controller owns: its change wins even when another writer
	// changed the same condition since the snapshot.
	OwnedConditions []Type

	// ForceOverwrite makes every change in the patch win, as if every type were owned.
	ForceOverwrite bool
}

// ApplyOption configures [Patch.Apply].
type ApplyOption interface {
	ApplyToApply(*ApplyOptions)
}

// OwnedConditions lists condition types whose changes win conflicts; see
// [ApplyOptions.OwnedConditions].
type OwnedConditions []Type

// ApplyToApply implements [ApplyOption].
func (o OwnedConditions) ApplyToApply(opts *ApplyOptions) {
	opts.OwnedConditions = append(opts.OwnedConditions, o...)
}

// ForceOverwrite makes every change win; see [ApplyOptions.ForceOverwrite].
type ForceOverwrite bool

// ApplyToApply implements [ApplyOption].
func (f ForceOverwrite) ApplyToApply(opts *ApplyOptions) {
	opts.ForceOverwrite = bool(f)
}

// ConflictError is returned by [Patch.Apply] when another writer changed a condition that the
// patch changes too, and the type is not owned.
type ConflictError struct {
	// Types are the conflicting condition types.
	Types []Type
}

// Error implements error.
func (e *ConflictError) Error() string {
	names := make([]string, len(e.Types))
	for i, t := range e.Types {
		names[i] = string(t)
	}
	return fmt.Sprintf("conditions %s were changed by another writer since they were read", strings.Join(names, ", "))
}

// Apply applies the patch to latest, usually the object as the API server has it now:
//
//   - a condition the patch adds, changes or removes is written when latest still has it as it
//     was before (no one else touched it), when latest already has the patch's version, or when
//     its type is owned (see [OwnedConditions], [ForceOverwrite]);
//   - otherwise nothing is written and a [*ConflictError] names the types. Other conditions of
//     latest are never touched.
//
// Conditions keep the ObservedGeneration the patch computed them for (which may be older than
// latest's generation, if the spec changed meanwhile), and latest's LastTransitionTime when the
// status is the same there. New conditions are inserted at their place in latest's order.
func (p Patch) Apply(latest Setter, opts ...ApplyOption) error {
	var o ApplyOptions
	for _, opt := range opts {
		opt.ApplyToApply(&o)
	}
	list := slices.Clone(latest.GetConditions())
	var conflicts []Type
	for _, ch := range p {
		i := indexOf(list, ch.t)
		var current *metav1.Condition
		if i >= 0 {
			current = &list[i]
		}
		wins := o.ForceOverwrite || slices.Contains(o.OwnedConditions, Type(ch.t))
		switch {
		case sameContent(current, ch.after):
			// Already as the patch wants it.
		case !sameContent(current, ch.before) && !wins:
			conflicts = append(conflicts, Type(ch.t))
		case ch.after == nil:
			list = slices.Delete(list, i, i+1)
		case current != nil:
			c := *ch.after
			if current.Status == c.Status {
				c.LastTransitionTime = current.LastTransitionTime
			}
			list[i] = c
		default:
			list = insert(list, *ch.after, orderOf(latest))
		}
		touch(latest, Type(ch.t))
	}
	if len(conflicts) > 0 {
		return &ConflictError{Types: conflicts}
	}
	latest.SetConditions(list)
	return nil
}

// sameContent reports whether a and b (either may be nil) agree on everything but
// LastTransitionTime.
func sameContent(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason &&
		a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}
