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
	"crypto/sha256"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// entriesOf returns the proofs' form of the managedFields entries in list, each field set
// decoded from its JSON, and the hash of the JSON of manager's apply entry for subresource
// (zero when there is not exactly one, or it has no field set).
//
// The field sets are not kept between proofs: a manager's own entry names the owner's uid (in
// its owner reference's key), so two children of different owners never share one, and other
// writers' name what differs from object to object.
func entriesOf(list []metav1.ManagedFieldsEntry, manager, subresource string) ([]managed.Entry, [32]byte) {
	out := make([]managed.Entry, 0, len(list))
	for i := range list {
		set, ok := managed.FieldSet(&list[i])
		out = append(out, managed.NewEntry(&list[i], set, ok))
	}
	return out, appliedSetHash(list, manager, subresource)
}

// appliedSetHash returns the hash of the JSON of the field set of manager's apply entry for
// subresource in list; zero when there is not exactly one, or it has no field set.
func appliedSetHash(list []metav1.ManagedFieldsEntry, manager, subresource string) [32]byte {
	var own [32]byte
	owners := 0
	for i := range list {
		e := &list[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != subresource {
			continue
		}
		owners++
		if e.FieldsV1 != nil {
			own = sha256.Sum256(e.FieldsV1.GetRawBytes())
		}
	}
	if owners != 1 {
		return [32]byte{}
	}
	return own
}
