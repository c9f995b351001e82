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
	"slices"
)

// Tracker records which condition types a reconcile sets, so that at its end the conditions
// this controller owns but did not set this time can be removed. It is for reconcilers that own
// a set of conditions whose members come and go: a condition for a feature that was switched off
// must not linger with its last status.
//
// A Tracker is a [Setter]: pass it instead of the object to every function of this package
// during the reconcile; the conditions it sets, deletes, summarises or mirrors count as touched.
//
//	tr := conditions.Track(cluster)
//	conditions.MarkTrue(tr, ConfigReady, conditions.ReasonSucceeded, "")
//	if cluster.Spec.Backup != nil {
//		conditions.MarkTrue(tr, BackupReady, conditions.ReasonSucceeded, "")
//	}
//	tr.DeleteUntouched(ConfigReady, BackupReady) // removes BackupReady when backups are off
//
// A Tracker is meant for one reconcile; it is not safe for concurrent use.
type Tracker struct {
	Setter
	touched []Type
}

var (
	_ Setter  = (*Tracker)(nil)
	_ Orderer = (*Tracker)(nil)
)

// Track returns a Tracker for obj with nothing touched yet.
func Track(obj Setter) *Tracker {
	return &Tracker{Setter: obj}
}

// toucher is implemented by Tracker; functions that set or delete a condition report its type.
type toucher interface {
	touch(Type)
}

func touch(obj any, t Type) {
	if tr, ok := obj.(toucher); ok {
		tr.touch(t)
	}
}

func (t *Tracker) touch(ct Type) {
	if !slices.Contains(t.touched, ct) {
		t.touched = append(t.touched, ct)
	}
}

// Touched returns the types set or deleted through the Tracker, in the order first touched.
func (t *Tracker) Touched() []Type {
	return slices.Clone(t.touched)
}

// ConditionOrder returns the order of the tracked object, so that a Tracker inserts conditions
// where the object itself would.
func (t *Tracker) ConditionOrder() []Type {
	return orderOf(t.Setter)
}

// DeleteUntouched removes the conditions of the owned types that were not touched through the
// Tracker, and reports whether any was removed. Conditions of other types are left alone: they
// belong to other writers.
func (t *Tracker) DeleteUntouched(owned ...Type) (changed bool) {
	for _, ct := range owned {
		if slices.Contains(t.touched, ct) {
			continue
		}
		if Delete(t.Setter, ct) {
			changed = true
		}
	}
	return changed
}
