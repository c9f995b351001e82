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
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// applyOwned sets o's owner on desired, when there is one, and applies it. live is what the
// Applier's reader holds of the object (nil when it does not), like an empty object of its
// type and name, and answer what the API server's answer is read into (see [Applier.request]).
//
// An owned apply is always conditional on what was checked: the API server refuses it, with
// nothing written, when the object is not the one whose ownership the adoption check saw (see
// [Applier.ownedPrecondition]). Server-side apply would otherwise let the controller's own field
// manager drop an owner reference it applied before, for another owner: two workers of one
// controller, with a cache that lags, would both take one child.
//
// A refusal because the object changed since it was read (a 409, or the API server's refusal of
// a second controller reference or of another uid, which the Applier returns as a conflict) is
// a race lost to another writer. With an API reader the object is then read and checked again,
// and applied on the resourceVersion read, up to [checkedApplyAttempts] applies in all, so that
// the loser of a race for an unowned child gets the [*ownership.AdoptionError] that names the
// winner. Without one the conflict is returned, and the next reconcile, with a reader that has
// caught up, checks again. A field another manager owns is a conflict with an object already
// checked: it is returned at once.
func (a *Applier) applyOwned(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind, like, live, answer client.Object, o *applyOptions) (client.Object, bool, error) {
	if !o.owned {
		return a.apply(ctx, desired, gvk, answer, live, "", o.force, precondition{})
	}
	var pre precondition
	if _, applied := a.cache.get(a.keyOf(desired, gvk, "")); live == nil && applied && a.apiReader != nil {
		// Applied before, and the reader does not hold it: it lags behind, or the object was
		// deleted since. A read costs less than an apply, and the apply is then conditional on
		// what the read found.
		var err error
		if live, err = a.readLive(ctx, a.apiReader, like, gvk); err != nil {
			return nil, false, err
		}
		pre = checkedRead(live)
	} else {
		pre = a.ownedPrecondition(desired, gvk, live, o)
	}
	for attempt := 1; ; attempt++ {
		result, changed, err := a.applyWithOwner(ctx, withOwnMetadata(desired), gvk, answer, live, o, pre)
		err = a.lostRace(err, desired, gvk, like, pre)
		if !apierrors.IsConflict(err) || (live != nil && isFieldConflict(err)) || a.apiReader == nil || attempt == checkedApplyAttempts {
			return result, changed, err
		}
		if live, err = a.readLive(ctx, a.apiReader, like, gvk); err != nil {
			return nil, false, err
		}
		pre = checkedRead(live)
	}
}

// withOwnMetadata returns a copy of desired, an apply request's body, that shares everything
// with it but the metadata, which it copies: the owner's mark goes in there (see
// ownership.Set), and desired stays as it is for another attempt.
func withOwnMetadata(desired map[string]any) map[string]any {
	c := maps.Clone(desired)
	c["metadata"] = jsonvalue.DeepCopy(desired["metadata"])
	return c
}

// checkedRead returns the precondition of an owned apply after a read through the API reader
// found live (nil for nothing): that version of the object, or a creation only.
func checkedRead(live client.Object) precondition {
	if live == nil {
		return precondition{resourceVersion: noSuchResourceVersion}
	}
	return precondition{resourceVersion: live.GetResourceVersion()}
}

// ownedPrecondition returns what the API server must find for an owned apply after the Applier
// checked live, the object its reader holds (nil for none), against the adoption policy:
//
//   - an object live shows controlled by the owner through an owner reference, or through
//     tracking labels applied without ForceConflicts: the same object (its uid). Nothing can
//     take it from the owner in between without the API server refusing the apply: it allows
//     one controller reference only, and another manager's tracking labels are a field
//     conflict.
//   - any other object live shows (unowned, or marked by tracking labels that ForceConflicts
//     would take over): the same version of it (its resourceVersion), so that a change of its
//     ownership after the read, by anyone, the controller's own other workers included, fails
//     the apply instead of being overwritten.
//   - no object, when the Applier's last apply of this object, for this owner, left it at a
//     resourceVersion the reader has not caught up with: that version, which the Applier knows
//     to be the owner's; the API server also creates the object if it is gone. Likewise when
//     live is older than that apply.
//   - no object otherwise: a creation only, refused when an object of that name exists that
//     the reader does not hold.
//
// A reader that holds the object without a uid or resourceVersion (a hand-built reader) gets
// the condition it can: the resourceVersion, or none.
func (a *Applier) ownedPrecondition(desired map[string]any, gvk schema.GroupVersionKind, live client.Object, o *applyOptions) precondition {
	var owner types.UID
	if !isNil(o.owner) {
		owner = o.owner.GetUID()
	}
	r, applied := a.cache.get(a.keyOf(desired, gvk, ""))
	applied = applied && r.owner == owner && owner != ""
	if live == nil {
		if applied {
			return precondition{resourceVersion: r.resourceVersion}
		}
		return precondition{resourceVersion: noSuchResourceVersion}
	}
	if applied && olderThan(live.GetResourceVersion(), r.resourceVersion) {
		// The reader lags behind the Applier's own apply, which left the object the owner's.
		return precondition{uid: live.GetUID(), resourceVersion: r.resourceVersion}
	}
	mark, marked := ownership.OwnerOf(live)
	marked = marked && mark.UID == owner && owner != ""
	if marked && (mark.Mechanism == ownership.ControllerReference || !o.force) && live.GetUID() != "" {
		return precondition{uid: live.GetUID()}
	}
	return precondition{uid: live.GetUID(), resourceVersion: live.GetResourceVersion()}
}

// lostRace returns err, the outcome of an owned apply under pre, with the API server's refusals
// that mean the object is not the one checked as conflicts that say so in the Applier's words:
// another controller's reference (it took the object since it was checked), another uid (the
// object was replaced), an object where none was found, or another version than the one
// checked. A conflict over fields another manager owns is returned as it is.
func (a *Applier) lostRace(err error, desired map[string]any, gvk schema.GroupVersionKind, like client.Object, pre precondition) error {
	var what string
	switch {
	case err == nil:
		return nil
	case isSecondController(err):
		what = "another controller took the object since it was checked"
	case pre.uid != "" && isUIDChange(err):
		what = fmt.Sprintf("the object checked (uid %s) was replaced by another of the same name since it was read", pre.uid)
	case !apierrors.IsConflict(err) || isFieldConflict(err):
		return err
	case pre.resourceVersion == noSuchResourceVersion:
		what = "an object of that name exists that the Applier's reader does not hold"
		if a.apiReader == nil {
			what += "; set ApplierOptions.APIReader to read it and check its adoption"
		}
	case pre.uid != "" && pre.resourceVersion != "":
		what = fmt.Sprintf("the object checked (uid %s) is gone, was replaced, or changed since it was read at resourceVersion %s", pre.uid, pre.resourceVersion)
	case pre.resourceVersion != "":
		what = fmt.Sprintf("the object changed since it was read at resourceVersion %s", pre.resourceVersion)
	case pre.uid != "":
		what = fmt.Sprintf("the object checked (uid %s) is gone or was replaced since it was read", pre.uid)
	default:
		return err
	}
	return fmt.Errorf("failed to apply %s: %w", describeBody(desired, gvk, ""),
		apierrors.NewConflict(resourceOf(a.client, gvk), like.GetName(), errors.New(what)))
}

// isSecondController reports whether err is the API server's refusal of an object with more
// than one controller owner reference: the apply added the owner's while another controller's
// was there, set since the object was checked.
func isSecondController(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
		return c.Field == "metadata.ownerReferences" && strings.Contains(c.Message, "Only one reference can have Controller set to true")
	})
}

// precondition is what the API server must find for an apply to go ahead: an object of that
// uid, and one of that resourceVersion ([noSuchResourceVersion]: none, the apply only creates
// the object). The zero value applies unconditionally.
type precondition struct {
	uid             types.UID
	resourceVersion string
}

// isUIDChange reports whether err is the API server's refusal of an apply whose metadata.uid is
// not that of the object it holds.
func isUIDChange(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
		return c.Field == "metadata.uid"
	})
}

// checkedApplyAttempts is the number of applies of a child the Applier's reader does not hold
// that the API server may refuse, because the object changed since it was read, before the
// Applier gives up and returns the refusal.
const checkedApplyAttempts = 3

// isFieldConflict reports whether err is server-side apply's refusal to change fields another
// field manager owns, rather than that of a resourceVersion precondition.
func isFieldConflict(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	return slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
		return c.Type == metav1.CauseTypeFieldManagerConflict
	})
}

// applyWithOwner declares o's owner in desired, after checking the adoption of live, and applies
// desired under pre.
func (a *Applier) applyWithOwner(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind, answer, live client.Object, o *applyOptions, pre precondition) (client.Object, bool, error) {
	child := &unstructured.Unstructured{Object: desired}
	setOpts := append(slices.Clip(o.ownerOpts), ownership.Existing{Object: live})
	if _, _, err := ownership.Set(o.owner, child, a.client.Scheme(), setOpts...); err != nil {
		return nil, false, fmt.Errorf("failed to apply %s: %w", describeBody(desired, gvk, ""), err)
	}
	return a.apply(ctx, desired, gvk, answer, live, "", o.force, pre)
}
