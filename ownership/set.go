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
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tenon-dev/tenon/internal/names"
)

// Set makes owner the controlling owner of child, in memory, and reports which mechanism it
// used and whether child changed. The caller writes child afterwards, with Create, Update,
// Patch or server-side apply; when changed is false and child already exists, there is nothing
// to write.
//
//   - Mechanism: a controller owner reference when Kubernetes allows one (owner cluster-scoped,
//     or owner and child in the same namespace); otherwise tracking labels and annotations
//     (child in another namespace, or a cluster-scoped child of a namespaced owner).
//     [RequireMechanism] forces one; asking for [ControllerReference] where it is not allowed
//     is a [*ScopeError]. A child with an empty namespace is taken to be cluster-scoped, so set
//     a namespaced child's namespace before calling Set.
//   - One mark: child ends up with exactly one of the two marks for owner. Switching mechanism
//     removes the other (the owner's controller reference, or the tracking keys).
//   - No stealing: when child, or [Existing], is controlled by another owner (by either
//     mechanism), Set returns an [*AdoptionError] carrying that owner. A previous
//     incarnation of owner (same kind, namespace and name, another UID) counts as another
//     owner, except under [AdoptAlways], which replaces its marks.
//   - Adoption: when child (or [Existing]) has a UID, it exists; if owner has no mark on it
//     yet (nor an owner reference without the controller flag), the [AdoptionPolicy] decides,
//     and a refusal is an [*AdoptionError] without an owner. A child without a UID is being
//     created and is always taken.
//   - Other owner references (without the controller flag) and all other labels and
//     annotations are never touched. Changed maps and slices are replaced, not modified in
//     place, so a labels map shared between several children stays as it was.
//   - owner must have been read from the API server: its UID is what the marks record. An
//     owner without a UID or name, an owner kind unknown to scheme, and nil arguments are
//     errors.
//
// When Set returns an error, child is not modified.
func Set(owner, child client.Object, scheme *runtime.Scheme, opts ...SetOption) (mechanism Mechanism, changed bool, err error) {
	o := newSetOptions(opts)
	if isNil(owner) || isNil(child) {
		return "", false, errors.New("failed to set the owner: owner and child must not be nil")
	}
	if scheme == nil {
		return "", false, errors.New("failed to set the owner: the scheme must not be nil")
	}
	if err := o.validate(); err != nil {
		return "", false, err
	}
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return "", false, fmt.Errorf("failed to find the kind of the owner %T: %w", owner, err)
	}
	ref := reference{Group: gvk.Group, Kind: gvk.Kind, Namespace: owner.GetNamespace(), Name: owner.GetName(), UID: owner.GetUID()}
	childRef := describe(child, scheme)
	if err := validateOwner(ref, childRef); err != nil {
		return "", false, err
	}

	mechanism, err = choose(ref, childRef, o.mechanism)
	if err != nil {
		return "", false, err
	}
	for _, obj := range []client.Object{child, o.existing} {
		if isNil(obj) {
			continue
		}
		if err := checkAdoption(ref, childRef, obj, o.adoption); err != nil {
			return "", false, err
		}
	}

	want := metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               ref.Name,
		UID:                ref.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(o.blockOwnerDeletion),
	}
	changed = setOwnerReferences(child, ref, want, mechanism == ControllerReference)
	if mechanism == TrackingLabels {
		changed = track(child, ref) || changed
	} else {
		changed = untrack(child) || changed
	}
	return mechanism, changed, nil
}

func (o *setOptions) validate() error {
	switch o.adoption {
	case "":
		o.adoption = AdoptIfUnowned
	case AdoptIfUnowned, AdoptNever, AdoptAlways:
	default:
		return fmt.Errorf("failed to set the owner: unknown adoption policy %q", o.adoption)
	}
	switch o.mechanism {
	case "", ControllerReference, TrackingLabels:
	default:
		return fmt.Errorf("failed to set the owner: unknown mechanism %q", o.mechanism)
	}
	return nil
}

// validateOwner checks what the marks will record about owner.
func validateOwner(owner, child reference) error {
	switch {
	case owner.Name == "":
		return fmt.Errorf("failed to set the owner of %s: the owner has no name", child)
	case owner.UID == "":
		return fmt.Errorf("failed to set the owner of %s: %s has no UID; use the owner as read from the API server", child, owner)
	case child.UID != "" && child.UID == owner.UID:
		return fmt.Errorf("failed to set the owner of %s: an object cannot own itself", child)
	}
	if names.IsLabelValue(string(owner.UID)) {
		return nil
	}
	if errs := content.IsLabelValue(string(owner.UID)); len(errs) > 0 {
		return fmt.Errorf("failed to set the owner of %s: the UID of %s is not a valid label value: %s", child, owner, strings.Join(errs, "; "))
	}
	return nil
}

// validateScope returns a [*ScopeError] when Kubernetes does not allow an owner reference from
// child to owner: owner is namespaced and child is in another namespace, or cluster-scoped.
func validateScope(owner, child reference) error {
	if owner.Namespace == "" || owner.Namespace == child.Namespace {
		return nil
	}
	return &ScopeError{owner: owner, child: child}
}

// choose returns the mechanism for owner and child: required, or the owner reference where it
// is allowed.
func choose(owner, child reference, required Mechanism) (Mechanism, error) {
	scopeErr := validateScope(owner, child)
	switch required {
	case ControllerReference:
		if scopeErr != nil {
			return "", scopeErr
		}
		return ControllerReference, nil
	case TrackingLabels:
		return TrackingLabels, nil
	}
	if scopeErr != nil {
		return TrackingLabels, nil
	}
	return ControllerReference, nil
}

// checkAdoption returns why owner may not take obj under policy, or nil.
func checkAdoption(owner, child reference, obj client.Object, policy AdoptionPolicy) error {
	controlled := false
	for _, current := range owners(obj) {
		switch {
		case current.UID == owner.UID:
			controlled = true
		case isIncarnation(current, owner, obj.GetNamespace()):
			if policy != AdoptAlways {
				return &AdoptionError{child: child, Owner: &current, Policy: policy, PreviousIncarnation: true}
			}
		default:
			return &AdoptionError{child: child, Owner: &current, Policy: policy}
		}
	}
	for _, r := range obj.GetOwnerReferences() {
		// A reference without the controller flag says the owner made the child, too.
		controlled = controlled || r.UID == owner.UID
	}
	if controlled || obj.GetUID() == "" {
		return nil
	}
	switch policy {
	case AdoptNever:
		return &AdoptionError{child: child, Policy: policy}
	case AdoptIfUnowned:
		var others []metav1.OwnerReference
		for _, r := range obj.GetOwnerReferences() {
			if r.UID != owner.UID {
				others = append(others, r)
			}
		}
		if len(others) > 0 {
			return &AdoptionError{child: child, Policy: policy, OwnerReferences: others}
		}
	}
	return nil
}

// isIncarnation reports whether current, recorded on a child in namespace childNamespace, is
// an incarnation of owner: the same kind, namespace and name. An owner reference names an
// object in the child's namespace, or a cluster-scoped one.
func isIncarnation(current Owner, owner reference, childNamespace string) bool {
	if current.Group != owner.Group || current.Kind != owner.Kind || current.Name != owner.Name {
		return false
	}
	if current.Mechanism == ControllerReference {
		return owner.Namespace == "" || owner.Namespace == childNamespace
	}
	return current.Namespace == owner.Namespace
}

// dropped reports whether r, a reference of a child in namespace childNamespace other than the
// one to owner's controller reference it keeps, goes: owner's controller reference when owner
// tracks the child instead, or one left by a deleted incarnation of owner.
func dropped(r metav1.OwnerReference, owner reference, childNamespace string) bool {
	if r.Controller == nil || !*r.Controller {
		return false
	}
	return r.UID == owner.UID || isIncarnation(ownerFrom(r, childNamespace), owner, childNamespace)
}

// setOwnerReferences makes child's owner references agree with the mechanism: want as the
// controller reference (replacing any reference to owner's UID) when reference is true, no
// controller reference to owner otherwise. Controller references of previous incarnations of
// owner are dropped; checkAdoption has allowed that. Other references keep their order.
func setOwnerReferences(child client.Object, owner reference, want metav1.OwnerReference, reference bool) (changed bool) {
	current := child.GetOwnerReferences()
	next := make([]metav1.OwnerReference, 0, len(current)+1)
	placed := false
	for _, r := range current {
		switch {
		case r.UID == owner.UID && reference:
			if !placed {
				next = append(next, want)
				placed = true
			}
		case dropped(r, owner, child.GetNamespace()):
		default:
			next = append(next, r)
		}
	}
	if reference && !placed {
		next = append(next, want)
	}
	if len(current) == 0 && len(next) == 0 || equality.Semantic.DeepEqual(current, next) {
		return false
	}
	if len(next) == 0 {
		next = nil
	}
	if u, ok := child.(*unstructured.Unstructured); !ok || next == nil || !setUnstructuredOwnerReferences(u.Object, next) {
		child.SetOwnerReferences(next)
	}
	return true
}

// setUnstructuredOwnerReferences sets refs as the owner references of the unstructured object
// content, as Unstructured.SetOwnerReferences sets them, without the reflection of the converter
// it writes each with. It reports false, and leaves content as it is, when content is nil or its
// metadata is not an object: then Unstructured.SetOwnerReferences knows what to do.
func setUnstructuredOwnerReferences(content map[string]any, refs []metav1.OwnerReference) bool {
	if content == nil {
		return false
	}
	meta, ok := content["metadata"].(map[string]any)
	if _, present := content["metadata"]; present && !ok {
		return false
	}
	list := make([]any, len(refs))
	for i, r := range refs {
		m := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID)}
		if r.Controller != nil {
			m["controller"] = *r.Controller
		}
		if r.BlockOwnerDeletion != nil {
			m["blockOwnerDeletion"] = *r.BlockOwnerDeletion
		}
		list[i] = m
	}
	if meta == nil {
		meta = map[string]any{}
		content["metadata"] = meta
	}
	meta["ownerReferences"] = list
	return true
}
