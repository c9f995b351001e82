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

package matchers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/ownership"
)

// HaveFinalizer succeeds when the actual object has the finalizer name in metadata.finalizers.
func HaveFinalizer(name string) types.GomegaMatcher {
	return &matcher{
		expectation: fmt.Sprintf("have finalizer %q", name),
		check: func(s *subject) (bool, string, error) {
			if s.obj == nil {
				return false, "", fmt.Errorf("%s is not an object: it has no finalizers", s.desc)
			}
			return slices.Contains(s.obj.GetFinalizers(), name), "it does not", nil
		},
		details: func(s *subject) string {
			if len(s.obj.GetFinalizers()) == 0 {
				return "Finalizers: none\n"
			}
			return fmt.Sprintf("Finalizers: %q\n", s.obj.GetFinalizers())
		},
	}
}

// BeControlledBy succeeds when owner controls the actual object, by either of the mechanisms of
// package ownership: an owner reference to owner with controller set (owner's controller manages
// the object, and deleting owner deletes it), or ownership's tracking label and annotations
// naming owner, which stand in for a controller reference where Kubernetes allows none (a child
// in another namespace, or a cluster-scoped child of a namespaced owner).
//
// An owner with a UID (one read from the API server) is matched by UID, so an object owned by
// an earlier owner of the same name does not match. An owner without a UID is matched by name
// (and, for tracking, namespace), and by kind and group when its TypeMeta has them.
func BeControlledBy(owner client.Object) types.GomegaMatcher {
	return ownerMatcher(owner, true)
}

// BeOwnedBy succeeds when the actual object has an owner reference to owner, as controller or
// not, or is tracked by owner with ownership's tracking label; owner is matched as by
// [BeControlledBy].
func BeOwnedBy(owner client.Object) types.GomegaMatcher {
	return ownerMatcher(owner, false)
}

func ownerMatcher(owner client.Object, controller bool) types.GomegaMatcher {
	verb := "be owned by "
	if controller {
		verb = "be controlled by "
	}
	ownerDesc := describe(owner, owner)
	if owner.GetUID() != "" {
		ownerDesc += fmt.Sprintf(" (uid %s)", owner.GetUID())
	}
	return &matcher{
		expectation: verb + ownerDesc,
		check: func(s *subject) (bool, string, error) {
			return ownedBy(s, owner, controller)
		},
		details: ownerDetails,
	}
}

// ownedBy reports whether s has an owner reference to owner (a controller reference, when
// controller is set) or the tracking label for it, and why not.
func ownedBy(s *subject, owner client.Object, controller bool) (bool, string, error) {
	if s.obj == nil {
		return false, "", fmt.Errorf("%s is not an object: it has no owner references", s.desc)
	}
	if trackedBy(s.obj, owner) {
		return true, "", nil
	}
	for _, ref := range s.obj.GetOwnerReferences() {
		if !refersTo(ref, owner) {
			continue
		}
		if controller && (ref.Controller == nil || !*ref.Controller) {
			return false, "its reference to the owner is not a controller reference, and it has no tracking label for the owner", nil
		}
		return true, "", nil
	}
	return false, "it has no reference to that owner, and no tracking label for it", nil
}

// ownerDetails lists s's owner references and its tracking label, if any.
func ownerDetails(s *subject) string {
	var b strings.Builder
	refs := s.obj.GetOwnerReferences()
	if len(refs) == 0 {
		b.WriteString("Owner references: none\n")
	} else {
		b.WriteString("Owner references:\n")
	}
	for _, ref := range refs {
		fmt.Fprintf(&b, "  %s %s %s (uid %s", ref.APIVersion, ref.Kind, ref.Name, ref.UID)
		if ref.Controller != nil && *ref.Controller {
			b.WriteString(", controller")
		}
		b.WriteString(")\n")
	}
	if uid, ok := s.obj.GetLabels()[ownership.LabelOwnerUID]; ok {
		a := s.obj.GetAnnotations()
		name := a[ownership.AnnotationOwnerName]
		if ns := a[ownership.AnnotationOwnerNamespace]; ns != "" {
			name = ns + "/" + name
		}
		fmt.Fprintf(&b, "Tracking label: %s %s (uid %s)\n", a[ownership.AnnotationOwnerKind], name, uid)
	}
	return b.String()
}

// refersTo reports whether ref points at owner: by UID when owner has one, else by name and,
// when owner's TypeMeta has it, kind and group.
func refersTo(ref metav1.OwnerReference, owner client.Object) bool {
	if owner.GetUID() != "" {
		return ref.UID == owner.GetUID()
	}
	if ref.Name != owner.GetName() {
		return false
	}
	gvk := owner.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		return true
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && ref.Kind == gvk.Kind && gv.Group == gvk.Group
}

// trackedBy reports whether obj carries ownership's tracking label for owner: by UID when owner
// has one, else by the name, namespace and, when owner's TypeMeta has it, kind and group that
// the tracking annotations record.
func trackedBy(obj metav1.Object, owner client.Object) bool {
	uid, ok := obj.GetLabels()[ownership.LabelOwnerUID]
	if !ok || uid == "" {
		return false
	}
	if owner.GetUID() != "" {
		return uid == string(owner.GetUID())
	}
	a := obj.GetAnnotations()
	if a[ownership.AnnotationOwnerName] != owner.GetName() || a[ownership.AnnotationOwnerNamespace] != owner.GetNamespace() {
		return false
	}
	gvk := owner.GetObjectKind().GroupVersionKind()
	return gvk.Kind == "" || schema.ParseGroupKind(a[ownership.AnnotationOwnerKind]) == gvk.GroupKind()
}

// GoneTimeout bounds each read [BeGone] makes.
const GoneTimeout = 10 * time.Second

// BeGone succeeds when reader returns NotFound for the actual object's kind, namespace and
// name. It reads on every match, so it polls with Eventually:
//
//	g.Eventually(obj).WithTimeout(30 * time.Second).Should(matchers.BeGone(c))
//
// The object is read into a new value of its own Go type (or, for unstructured objects and
// metadata-only objects, with its GroupVersionKind), so obj itself is never changed. An error
// other than NotFound fails the match with that error. When the object still exists, the failure
// message says whether it is being deleted and which finalizers hold it.
func BeGone(reader client.Reader) types.GomegaMatcher {
	return &matcher{
		expectation: "be gone",
		check: func(s *subject) (bool, string, error) {
			obj, ok := s.obj.(client.Object)
			if !ok {
				return false, "", fmt.Errorf("%s is not a client.Object", s.desc)
			}
			latest, err := objects.Empty(obj)
			if err != nil {
				return false, "", err
			}
			ctx, cancel := context.WithTimeout(context.Background(), GoneTimeout)
			defer cancel()
			err = reader.Get(ctx, client.ObjectKeyFromObject(obj), latest)
			switch {
			case apierrors.IsNotFound(err):
				return true, "", nil
			case err != nil:
				return false, "", err
			case latest.GetDeletionTimestamp() != nil:
				return false, fmt.Sprintf("it is being deleted since %s, held by finalizers %q",
					latest.GetDeletionTimestamp().UTC().Format(time.RFC3339), latest.GetFinalizers()), nil
			}
			return false, "it exists and is not being deleted", nil
		},
	}
}
