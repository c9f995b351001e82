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
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Owns reports whether owner controls child by either mechanism: child has a controller owner
// reference, or the tracking label, with owner's UID. Matching by UID means that an owner
// deleted and recreated under the same name does not own its predecessor's children. Owner
// references without the controller flag do not count. Nil objects and an owner without a UID
// own nothing.
func Owns(owner, child client.Object) bool {
	if isNil(owner) || isNil(child) {
		return false
	}
	return controls(owner.GetUID(), child)
}

func controls(uid types.UID, child client.Object) bool {
	if uid == "" {
		return false
	}
	for _, o := range owners(child) {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// OwnerOf returns the owner that controls child, and reports whether there is one: its
// controller owner reference if it has one, otherwise its tracking label and annotations.
//
// An owner reference records no namespace: the owner is either in the child's namespace or
// cluster-scoped. For [ControllerReference], Namespace is the child's namespace, which is wrong
// only for cluster-scoped owner kinds; [EnqueueOwner] asks a RESTMapper which it is.
func OwnerOf(child client.Object) (owner Owner, ok bool) {
	if isNil(child) {
		return Owner{}, false
	}
	if o, ok := controllerOf(child); ok {
		return o, true // owners' first
	}
	return trackerOf(child)
}

// Release removes owner's marks from child, in memory, and reports whether there were any: the
// controller owner reference with owner's UID and, when the tracking label holds owner's UID,
// the tracking label and annotations. Other owners' marks are never touched. After Release
// and a write, the garbage collector and [DeleteTracked] leave the child alone: use it to hand a
// child over, or to keep it when its owner goes.
func Release(owner, child client.Object) (changed bool) {
	if isNil(owner) || isNil(child) || owner.GetUID() == "" {
		return false
	}
	uid := owner.GetUID()
	if t, ok := trackerOf(child); ok && t.UID == uid {
		changed = untrack(child)
	}
	refs := child.GetOwnerReferences()
	i := slices.IndexFunc(refs, func(r metav1.OwnerReference) bool {
		return r.UID == uid && r.Controller != nil && *r.Controller
	})
	if i < 0 {
		return changed
	}
	var next []metav1.OwnerReference
	next = append(next, refs[:i]...)
	next = append(next, refs[i+1:]...)
	child.SetOwnerReferences(next)
	return true
}
