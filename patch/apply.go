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
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

// Applier writes objects with server-side apply under one field manager, and skips every
// request it can prove would change nothing (see [Applier.Apply] for the proof). It takes typed
// and unstructured objects ([Applier.Apply], [Applier.ApplyStatus]) and apply configurations
// ([Applier.ApplyConfiguration], [Applier.ApplyStatusConfiguration]), and applies an owned child,
// ownership and adoption check included, in one call ([OwnedBy]). Create it once per controller
// with [NewApplier] and keep it: it remembers what it applied. It is safe for concurrent use.
type Applier struct {
	client    client.Client
	reader    client.Reader
	apiReader client.Reader
	manager   string
	cache     *applyCache
	// types knows the schemas of the built-in kinds (client-go's copy of them), for the proof
	// from managedFields; built on first use.
	types func() managedfields.TypeConverter
}

// ApplierOptions configures an [Applier]. The zero value is the default configuration.
type ApplierOptions struct {
	// Reader reads the live object before each apply, to decide whether the apply is needed,
	// to check the adoption of a child applied with [OwnedBy] and, for [Applier.ApplyStatus], to
	// carry condition transition times over. Default: the client given to [NewApplier]. A
	// manager's client (mgr.GetClient()) reads typed objects from its cache, so a skipped apply
	// costs no request at all; it reads unstructured objects from the API server unless
	// client.Options.Cache.Unstructured is set.
	Reader client.Reader

	// APIReader reads the live object when Reader does not find it and the call has [OwnedBy]:
	// a reader that goes to the API server, such as mgr.GetAPIReader(). Set it when Reader is a
	// cache that holds only some objects (a label or field selector in the manager's cache
	// options), or one that may lag. A child the Applier never applied is first applied as a
	// creation only (the API server creates it, or refuses, with nothing written, when an object
	// of that name exists), so creating a child costs its apply and no read; the API reader
	// reads the object when that apply is refused, when the Applier applied the child before and
	// Reader does not hold it, and when an owned apply loses a race, so that the loser gets an
	// [*ownership.AdoptionError] ("Applying an owned child" in the package documentation).
	// Default: none; an owned apply that finds an object Reader does not hold, or that changed
	// since Reader read it, then returns a conflict (the next reconcile checks again) and never
	// writes to it.
	APIReader client.Reader

	// CacheSize is the number of (object, field manager, subresource) combinations whose last
	// apply the Applier remembers, about 150 bytes each, and for a status apply the type,
	// status and transition time of each condition. For objects it has forgotten it proves
	// a skip from the live object and its managedFields alone, which costs more CPU and, while
	// Reader lags, sends an apply that a record would have skipped. Default: sized to the work:
	// 4,096 at first, doubling while the objects this Applier applies again do not fit (found by
	// its entry in their managedFields, or by records used again), up to 1,048,576 (about 150
	// MB, for half a million objects), and back down as they become fewer; records of objects
	// no longer applied are dropped after about as many calls as the record holds. A size set
	// here is fixed.
	CacheSize int
}

// NewApplier returns an Applier that applies with c under fieldManager, the name recorded in
// managedFields (for example "cluster-controller"). c must not be nil and fieldManager must not
// be empty, or every call of the Applier returns an error. To apply under several field
// managers, use one Applier for each.
func NewApplier(c client.Client, fieldManager string, opts ApplierOptions) *Applier {
	if opts.Reader == nil {
		opts.Reader = c
	}
	cache := newGrowingApplyCache(defaultApplyCacheSize)
	if opts.CacheSize > 0 {
		cache = newApplyCache(opts.CacheSize)
	}
	return &Applier{
		client: c, reader: opts.Reader, apiReader: opts.APIReader, manager: fieldManager, cache: cache,
		types: sync.OnceValue(func() managedfields.TypeConverter { return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme) }),
	}
}

// Apply makes obj, a desired object (typed, such as an *appsv1.Deployment, or unstructured),
// true on the API server with server-side apply, and reports whether the object changed.
//
//   - The request declares the fields set in obj, owned by the Applier's field manager; fields
//     this manager applied before and obj no longer sets are removed, fields of other managers
//     are kept. With [ForceConflicts] fields another manager owns are taken over; without it
//     such a field with a different value fails the request with a 409.
//   - The object is created if it does not exist.
//   - With [OwnedBy], the request also declares the owner's mark (a controller owner reference,
//     or tracking labels and annotations where Kubernetes allows no reference), after the
//     adoption policy and the no-stealing rule were checked against the live object: a child
//     another owner controls, or one the policy does not adopt, is an
//     [*ownership.AdoptionError], and nothing is sent.
//   - The request is skipped, with obj set to the live object, when the Applier proves it
//     would change nothing (its last apply of the same body left the object as it is, or the
//     live object and its field manager's managedFields entry already match obj); it is sent
//     in every other case. What the proof requires, and what it cannot decide, is in "When an
//     apply is skipped" in the package documentation.
//   - Identity and server-owned metadata in obj (resourceVersion, uid, generation,
//     managedFields, creationTimestamp) and the status are not sent: use [Applier.ApplyStatus]
//     for the status.
//
// Typed objects: a field whose Go type has no omitempty is sent even when it is the zero value,
// which makes the manager own it with that value; build such objects with the fields you mean
// to own only, or use an apply configuration ([Applier.ApplyConfiguration]) or an unstructured
// object. A struct-typed field with omitempty that holds its zero value (a Service port's unset
// targetPort, an intstr.IntOrString) is not sent, although encoding/json would write it: Go
// cannot tell unset from zero there, and omitempty says zero means unset. A pointer to an empty
// struct is sent, and so is everything in an unstructured object.
//
// On success obj holds the live object: the server's response, or the object read when the
// request was skipped. changed is true when a request was sent and the object's resourceVersion
// moved (or it was created). On error obj is not modified.
func (a *Applier) Apply(ctx context.Context, obj client.Object, opts ...ApplyCallOption) (changed bool, err error) {
	o := newApplyOptions(opts)
	gvk, err := a.prepare(obj)
	if err != nil {
		return false, err
	}
	m, err := requestMap(obj)
	if err != nil {
		return false, err
	}
	desired := applyBody(m, gvk)
	live, err := a.readLive(ctx, a.reader, obj, gvk)
	if err != nil {
		return false, err
	}
	result, changed, err := a.applyOwned(ctx, desired, gvk, obj, live, &o)
	if result != nil {
		if ferr := fill(obj, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(desired, gvk, ""), ferr)
		}
	}
	return changed, err
}

// ApplyConfiguration applies ac, an apply configuration, as [Applier.Apply] applies an object,
// and reports whether the object changed. An apply configuration holds exactly the fields set
// through its With methods, so it declares exactly what the controller means to own: it is the
// upstream answer to typed objects' zero values, which a typed object declares (and takes
// ownership of) for every field whose Go type has no omitempty. Use client-go's
// applyconfigurations packages for built-in kinds (corev1ac.ConfigMap(name, namespace).WithData),
// the apply configurations controller-gen's applyconfiguration generator writes for custom
// resources, or client.ApplyConfigurationFromUnstructured.
//
//   - ac must set apiVersion, kind and name, as the generated constructors do, and the namespace
//     of a namespaced object.
//   - The request is the one Apply sends for an object that sets the same fields: the status and
//     server-owned metadata are not sent, [OwnedBy] adds the owner's mark after the adoption
//     check, [ForceConflicts] takes fields over. It is skipped under the same proof.
//   - The Applier remembers its applies by object, field manager and subresource, whatever the
//     form: an apply configuration that declares what a typed object declared before is skipped;
//     one that leaves out a field that a typed object sent as its zero value is sent, and the
//     manager no longer owns that field.
//   - On success ac holds the live object, as after client.Client's Apply: the server's response,
//     or the object read when the request was skipped (its status included). Build a fresh ac
//     for each call: one that holds a live object declares all of it. On error ac is not
//     modified.
func (a *Applier) ApplyConfiguration(ctx context.Context, ac runtime.ApplyConfiguration, opts ...ApplyCallOption) (changed bool, err error) {
	o := newApplyOptions(opts)
	m, gvk, err := a.prepareConfiguration(ac)
	if err != nil {
		return false, err
	}
	desired := applyBody(m, gvk)
	like := a.newObject(m, gvk)
	live, err := a.readLive(ctx, a.reader, like, gvk)
	if err != nil {
		return false, err
	}
	result, changed, err := a.applyOwned(ctx, desired, gvk, like, live, &o)
	if result != nil {
		if ferr := fillConfiguration(ac, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(desired, gvk, ""), ferr)
		}
	}
	return changed, err
}

// applyOwned sets o's owner on desired, when there is one, and applies it. live is what the
// Applier's reader holds of the object (nil when it does not), and like an empty object of its
// type and name.
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
func (a *Applier) applyOwned(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind, like, live client.Object, o *applyOptions) (client.Object, bool, error) {
	if !o.owned {
		return a.apply(ctx, desired, gvk, live, "", o.force, precondition{})
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
		result, changed, err := a.applyWithOwner(ctx, jsonvalue.DeepCopyMap(desired), gvk, live, o, pre)
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
func (a *Applier) applyWithOwner(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind, live client.Object, o *applyOptions, pre precondition) (client.Object, bool, error) {
	child := &unstructured.Unstructured{Object: desired}
	setOpts := append(slices.Clip(o.ownerOpts), ownership.Existing{Object: live})
	if _, _, err := ownership.Set(o.owner, child, a.client.Scheme(), setOpts...); err != nil {
		return nil, false, fmt.Errorf("failed to apply %s: %w", describeBody(desired, gvk, ""), err)
	}
	return a.apply(ctx, desired, gvk, live, "", o.force, pre)
}

// ApplyStatus applies obj's status through the status subresource with server-side apply and
// reports whether the object changed. It lets several controllers, each with its own field
// manager, write the status of one object, each owning its own conditions (status.conditions
// must be a list of type map keyed by type, as metav1.Condition lists are in kubebuilder
// types with +listType=map and +listMapKey=type):
//
//   - The request holds obj's status: every field set in it and its conditions, or with
//     [OwnedConditions] only the conditions of those types. A condition this manager applied
//     before and no longer sends is removed; other managers' conditions are kept.
//   - LastTransitionTime is carried over from the live object for every condition whose status
//     did not change, so a condition rebuilt from scratch each reconcile does not move its
//     transition time (nor change the object); a new or flipped condition without one gets
//     the current time, truncated to seconds, unless the kind's conditions have no
//     lastTransitionTime: when a condition of the live object has none, or the API server
//     refuses the field as not declared in the schema (the request is then sent again without
//     the times the Applier added), the conditions are applied as set. While the reader has not
//     caught up with the Applier's last status apply of the object, the conditions that apply
//     left, which the Applier remembers, are the live ones: a condition that flipped since the
//     reader's copy is a flip, not a condition that kept its status.
//   - The request is skipped when the Applier proves it would change nothing, as for
//     [Applier.Apply], from its last status apply or the manager's managedFields entry for the
//     status subresource.
//   - When obj is a conditions.Getter (a typed object with conditions), every condition the
//     request would hold is first checked with conditions.Validate (all but lastTransitionTime,
//     which the Applier sets). When one is invalid (a type or reason the API server would
//     reject), nothing is sent (the live object is not even read), and the error wraps
//     conditions.ErrInvalid and names the object, the condition and the rule it breaks;
//     requeue.Classify reports it as requeue.ClassInvalid, which is not retried.
//
// As for [Applier.Apply], a typed object's status fields whose Go type has no omitempty are sent
// even when they are the zero value, and become owned by this manager; struct-typed fields with
// omitempty that hold their zero value are not sent.
//
// The object must exist and have a status subresource (for a CRD without one use [Helper]): an
// object of a kind without one is an error that says so (405 Method Not Allowed, which is not
// apierrors.IsNotFound). On success obj holds the live object; on error obj is not modified.
func (a *Applier) ApplyStatus(ctx context.Context, obj client.Object, opts ...ApplyCallOption) (changed bool, err error) {
	o := newApplyOptions(opts)
	gvk, err := a.prepare(obj)
	if err != nil {
		return false, err
	}
	m, err := requestMap(obj)
	if err != nil {
		return false, err
	}
	result, changed, err := a.applyStatus(ctx, m, gvk, obj, &o)
	if result != nil {
		if ferr := fill(obj, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(m, gvk, "status"), ferr)
		}
	}
	return changed, err
}

// ApplyStatusConfiguration applies the status of ac, an apply configuration, as
// [Applier.ApplyStatus] applies an object's status, and reports whether the object changed. See
// [Applier.ApplyConfiguration] for what an apply configuration must set and holds on return.
//
// Conditions built with client-go's metav1 apply configurations
// (metav1ac.Condition().WithType(...).WithStatus(...).WithReason(...).WithMessage(...)) need no
// LastTransitionTime: the Applier carries it over while the status does not change, and sets
// it to the current time otherwise. Conditions computed as []metav1.Condition (with the
// conditions package) convert one by one with the same builders; leave LastTransitionTime out
// unless the condition's own time is meant. The conditions are checked before anything is sent,
// as ApplyStatus checks them, when the client's scheme maps the kind to a Go type that is a
// conditions.Getter.
func (a *Applier) ApplyStatusConfiguration(ctx context.Context, ac runtime.ApplyConfiguration, opts ...ApplyCallOption) (changed bool, err error) {
	o := newApplyOptions(opts)
	m, gvk, err := a.prepareConfiguration(ac)
	if err != nil {
		return false, err
	}
	result, changed, err := a.applyStatus(ctx, m, gvk, a.newObject(m, gvk), &o)
	if result != nil {
		if ferr := fillConfiguration(ac, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(m, gvk, "status"), ferr)
		}
	}
	return changed, err
}

// applyStatus applies the status in m, the desired object as a JSON value; like is an empty
// object of its kind, with its name and namespace, to read the live object into.
func (a *Applier) applyStatus(ctx context.Context, m map[string]any, gvk schema.GroupVersionKind, like client.Object, o *applyOptions) (client.Object, bool, error) {
	if o.owned {
		return nil, false, fmt.Errorf("failed to apply %s: OwnedBy applies to the object, not to its status", describeBody(m, gvk, "status"))
	}
	if err := checkConditions(m, gvk, like, o.ownedConditions); err != nil {
		return nil, false, err
	}
	live, err := a.readLive(ctx, a.reader, like, gvk)
	if err != nil {
		return nil, false, err
	}
	if live == nil {
		return nil, false, fmt.Errorf("failed to apply %s: %w", describeBody(m, gvk, "status"),
			apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, like.GetName()))
	}
	liveMap, err := objects.ToMap(live)
	if err != nil {
		return nil, false, err
	}
	liveRaw, _ := jsonvalue.Nested(liveMap, "status", "conditions")
	current, _ := jsonvalue.Conditions(liveRaw)
	if r, applied := a.cache.get(a.keyOf(m, gvk, "status")); applied && olderThan(live.GetResourceVersion(), r.resourceVersion) {
		// The reader has not caught up with the Applier's last status apply: the conditions it
		// shows are older than those on the server, and a condition that flipped since would
		// get the time of before the flip. The conditions that apply left are newer.
		current = r.conditions
	}
	times, known := timesApplied(live, a.manager)
	carry := func(t string) bool { return !known || times[t] }
	desired := statusBody(m, gvk, live, current, o.ownedConditions, true, carry)
	result, changed, err := a.apply(ctx, desired, gvk, live, "status", o.force, precondition{})
	if undeclaredTransitionTime(err) {
		// The conditions of this kind have no lastTransitionTime (KEDA's, for one): apply them
		// without the times the Applier added.
		if untimed := statusBody(m, gvk, live, current, o.ownedConditions, false, carry); !jsonvalue.Equal(untimed, desired) {
			result, changed, err = a.apply(ctx, untimed, gvk, live, "status", o.force, precondition{})
		}
	}
	if apierrors.IsNotFound(err) {
		err = a.noStatusSubresource(ctx, err, desired, gvk, like, live)
	}
	return result, changed, err
}

// checkConditions returns an error that wraps conditions.ErrInvalid when the status in m, a
// desired object of kind gvk as a JSON value, has a condition to apply (of a type in owned, or
// any when owned is nil) that the API server would reject. Only the conditions of a kind whose Go
// type is a conditions.Getter (like, typed) are checked: they are metav1.Conditions, which other
// kinds' conditions need not be. A condition without a lastTransitionTime is checked as if it had
// one: the Applier gives it one, or the kind's conditions have none.
func checkConditions(m map[string]any, gvk schema.GroupVersionKind, like client.Object, owned []conditions.Type) error {
	if _, ok := like.(conditions.Getter); !ok {
		return nil
	}
	raw, _ := jsonvalue.Nested(m, "status", "conditions")
	for _, e := range jsonvalue.List(raw) {
		var c metav1.Condition
		if owned != nil && !slices.Contains(owned, conditions.Type(jsonvalue.ConditionType(e))) ||
			jsonvalue.Map(e) == nil || runtime.DefaultUnstructuredConverter.FromUnstructured(jsonvalue.Map(e), &c) != nil {
			continue // not applied, or not a metav1.Condition: the API server decides
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Unix(0, 0)
		}
		if err := conditions.Validate(c); err != nil {
			return fmt.Errorf("failed to apply %s: %w", describeBody(m, gvk, "status"), err)
		}
	}
	return nil
}

// noStatusSubresource returns err, the NotFound of a status apply of desired to live, as an
// error that names the missing status subresource when the object is still there: the API
// server answers an apply to the status of a kind without a status subresource (a CRD that
// declares none) exactly as one to an object that is gone, and a NotFound is what reconcilers
// ignore (client.IgnoreNotFound), which would drop the status silently on every reconcile. The
// object is read again through the API reader when there is one, through the client otherwise;
// when it is gone, or another object of its name replaced it, err is returned as it is.
func (a *Applier) noStatusSubresource(ctx context.Context, err error, desired map[string]any, gvk schema.GroupVersionKind, like, live client.Object) error {
	r := a.apiReader
	if r == nil {
		r = a.client
	}
	again, readErr := a.readLive(ctx, r, like, gvk)
	if readErr != nil || again == nil || again.GetUID() != live.GetUID() {
		return err
	}
	return fmt.Errorf("failed to apply %s: %s exists and has no status subresource (write its status with a Helper, or declare the subresource in its CRD): %w",
		describeBody(desired, gvk, "status"), gvk.Kind, apierrors.NewMethodNotSupported(resourceOf(a.client, gvk), "apply of the status"))
}

// Forget drops what the Applier remembers about obj, for every field manager. Call it after
// deleting an object; an Applier that is never told only keeps the entries until newer ones push
// them out.
func (a *Applier) Forget(obj client.Object) {
	if a == nil || a.client == nil || obj == nil {
		return
	}
	gvk, err := apiutil.GVKForObject(obj, a.client.Scheme())
	if err != nil {
		return
	}
	a.cache.forget(func(k applyKey) bool {
		return k.gvk == gvk && k.name == obj.GetName() && k.namespace == obj.GetNamespace()
	})
}

// prepare checks the Applier and obj and returns obj's kind.
func (a *Applier) prepare(obj client.Object) (schema.GroupVersionKind, error) {
	if err := a.check(); err != nil {
		return schema.GroupVersionKind{}, err
	}
	if isNil(obj) {
		return schema.GroupVersionKind{}, errors.New("failed to apply: the object is nil")
	}
	gvk, err := apiutil.GVKForObject(obj, a.client.Scheme())
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("failed to apply %T: %w", obj, err)
	}
	return gvk, nil
}

// prepareConfiguration checks the Applier and ac and returns ac as a JSON value, and its kind.
func (a *Applier) prepareConfiguration(ac runtime.ApplyConfiguration) (map[string]any, schema.GroupVersionKind, error) {
	if err := a.check(); err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	if isNil(ac) {
		return nil, schema.GroupVersionKind{}, errors.New("failed to apply: the apply configuration is nil")
	}
	data, err := json.Marshal(ac)
	if err != nil {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("failed to encode the apply configuration %T: %w", ac, err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil { // numbers as int64 where integral, as in unstructured objects
		return nil, schema.GroupVersionKind{}, fmt.Errorf("failed to decode the apply configuration %T: %w", ac, err)
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || apiVersion == "" || kind == "" {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("failed to apply %T: the apply configuration needs an apiVersion and a kind", ac)
	}
	gvk := gv.WithKind(kind)
	if name, _ := jsonvalue.Nested(m, "metadata", "name"); name == nil || name == "" {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("failed to apply %s: the apply configuration needs a name", gvk.Kind)
	}
	return m, gvk, nil
}

// check reports why the Applier cannot apply anything, or nil.
func (a *Applier) check() error {
	switch {
	case a == nil || a.client == nil:
		return errors.New("failed to apply: the Applier has no client")
	case a.manager == "":
		return errors.New("failed to apply: no field manager")
	}
	return nil
}

// newObject returns an empty object of kind gvk with the name and namespace of m, a desired
// object as a JSON value: typed when the client's scheme knows the kind, so that a manager's
// client reads it from its cache, unstructured otherwise.
func (a *Applier) newObject(m map[string]any, gvk schema.GroupVersionKind) client.Object {
	var obj client.Object
	if typed, err := a.client.Scheme().New(gvk); err == nil {
		obj, _ = typed.(client.Object)
	}
	if obj == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		obj = u
	}
	name, _ := jsonvalue.Nested(m, "metadata", "name")
	namespace, _ := jsonvalue.Nested(m, "metadata", "namespace")
	obj.SetName(fmt.Sprint(name))
	if ns, ok := namespace.(string); ok {
		obj.SetNamespace(ns)
	}
	return obj
}

// readLive reads the live object named like obj with r; nil when it does not exist.
func (a *Applier) readLive(ctx context.Context, r client.Reader, obj client.Object, gvk schema.GroupVersionKind) (client.Object, error) {
	key := client.ObjectKeyFromObject(obj)
	live, err := newLike(obj, gvk)
	if err != nil {
		return nil, err
	}
	if err := r.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to read %s %s: %w", gvk.Kind, key, err)
	}
	return live, nil
}

// noSuchResourceVersion is a resourceVersion no object has (the largest revision etcd can
// count to): as the precondition of an apply, it lets the API server create the object and
// refuses, with a 409, to change one that exists.
const noSuchResourceVersion = "9223372036854775807"

// keyOf returns the key the Applier remembers applies of desired to subresource by.
func (a *Applier) keyOf(desired map[string]any, gvk schema.GroupVersionKind, subresource string) applyKey {
	name, _ := jsonvalue.Nested(desired, "metadata", "name")
	namespace, _ := jsonvalue.Nested(desired, "metadata", "namespace")
	return applyKey{gvk: gvk, namespace: fmt.Sprint(orEmpty(namespace)), name: fmt.Sprint(name), manager: a.manager, subresource: subresource}
}

// apply sends desired, the body of an apply request for an object of kind gvk, unless live shows
// it would change nothing; the API server applies it only under pre. It returns what the object
// is afterwards: live when the request was skipped, the response otherwise.
func (a *Applier) apply(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind,
	live client.Object, subresource string, force bool, pre precondition,
) (result client.Object, changed bool, err error) {
	key := a.keyOf(desired, gvk, subresource)
	hash, err := hashOf(desired, force)
	if err != nil {
		return nil, false, err
	}
	if live != nil {
		skip, err := a.unchanged(desired, gvk, live, subresource, key, hash)
		if err != nil {
			return nil, false, err
		}
		if skip {
			return live, false, nil
		}
	}
	return a.send(ctx, desired, gvk, live, subresource, force, pre, key, hash)
}

// unchanged reports whether the apply of desired (its hash) to live can be skipped: the
// Applier's record under key shows the same apply already reached a fixed point at live's
// version, or one live has not caught up with; or live, with its managedFields, proves that
// the apply would change nothing, which is then recorded.
func (a *Applier) unchanged(desired map[string]any, gvk schema.GroupVersionKind, live client.Object,
	subresource string, key applyKey, hash [32]byte,
) (bool, error) {
	r, applied := a.cache.get(key)
	if !applied && appliedBy(live, a.manager, subresource) {
		a.cache.missedApplied()
	}
	lagging := applied && olderThan(live.GetResourceVersion(), r.resourceVersion)
	if applied && r.fixed && r.hash == hash && (r.resourceVersion == live.GetResourceVersion() || lagging) {
		// The same apply as last time, and the object has not changed since; or the reader (a
		// cache) has not caught up with that apply yet, and will bring any later change to the
		// object in a new event.
		return true, nil
	}
	if lagging {
		// A reader that has not caught up with the Applier's last apply, which was another,
		// holds an object that is no longer so and proves nothing: applying A, then B, then A
		// again must send A.
		return false, nil
	}
	upToDate, err := a.provenUpToDate(desired, gvk, live, subresource)
	if err != nil || !upToDate {
		return false, err
	}
	proven := applyRecord{hash: hash, resourceVersion: live.GetResourceVersion(), owner: ownerMarked(desired), fixed: true}
	if subresource == "status" {
		liveMap, err := objects.ToMap(live)
		if err != nil {
			return false, err
		}
		proven.conditions = transitionTimes(liveMap)
	}
	a.cache.put(key, proven)
	return true, nil
}

// appliedBy reports whether live has an apply entry of manager for subresource in its
// managedFields: the Applier applied it before (this process, or an earlier one).
func appliedBy(live client.Object, manager, subresource string) bool {
	for _, e := range live.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource {
			return true
		}
	}
	return false
}

// provenUpToDate reports whether live, with its managedFields, proves that applying desired
// would change nothing (see [Applier.Apply]).
func (a *Applier) provenUpToDate(desired map[string]any, gvk schema.GroupVersionKind, live client.Object, subresource string) (bool, error) {
	liveMap, err := objects.ToMap(live)
	if err != nil {
		return false, err
	}
	declared := declaredFields(a.types(), desired)
	var declaredMeta map[string]any
	if declared == nil {
		declaredMeta = declaredMetadata(a.types(), desired)
	}
	// liveMap holds the field sets as JSON objects already (see entriesOf).
	return upToDate(desired, liveMap, entriesOf(&unstructured.Unstructured{Object: liveMap}), a.manager, subresource, declared, declaredMeta), nil
}

// send sends the apply request of desired under pre, and remembers it under key and hash.
func (a *Applier) send(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind,
	live client.Object, subresource string, force bool, pre precondition, key applyKey, hash [32]byte,
) (result client.Object, changed bool, err error) {
	u, err := a.request(ctx, desired, subresource, force, pre)
	what := describeBody(desired, gvk, subresource)
	if err != nil {
		return nil, false, fmt.Errorf("failed to apply %s: %w", what, err)
	}
	previous := a.previousVersion(live, key, hash)
	// An apply that wrote nothing left the object as applying it again leaves it; otherwise the
	// answer must show it (see fixedPoint), or the next apply is sent and proves it then.
	fixed := previous != "" && previous == u.GetResourceVersion() || fixedPoint(desired, u, a.manager, subresource) ||
		live != nil && sameApplied(live, u)
	record := applyRecord{hash: hash, resourceVersion: u.GetResourceVersion(), owner: ownerMarked(desired), fixed: fixed}
	if subresource == "status" {
		record.conditions = transitionTimes(u.Object)
	}
	a.cache.put(key, record)
	changed = previous == "" || u.GetResourceVersion() != previous
	if changed {
		log.FromContext(ctx).V(1).Info("Applied", "object", what, "fieldManager", a.manager, "resourceVersion", u.GetResourceVersion())
	}
	return u, changed, nil
}

// request sends the apply request of desired, to subresource, under pre, and returns the
// server's answer.
func (a *Applier) request(ctx context.Context, desired map[string]any, subresource string, force bool, pre precondition) (*unstructured.Unstructured, error) {
	// The client replaces u's content with the response as a whole, so desired's values can be
	// shared; only the metadata, where the precondition goes, is copied.
	u := &unstructured.Unstructured{Object: maps.Clone(desired)}
	if meta, ok := desired["metadata"].(map[string]any); ok {
		u.Object["metadata"] = maps.Clone(meta)
	}
	// The precondition goes in the request only, after the hash: it is not what is declared.
	if pre.uid != "" {
		u.SetUID(pre.uid)
	}
	if pre.resourceVersion != "" {
		u.SetResourceVersion(pre.resourceVersion)
	}
	ac := client.ApplyConfigurationFromUnstructured(u)
	// A request of an unstructured object makes a client with read-your-writes consistency
	// start an informer of that form for the kind, a second copy of every object of it beside the
	// typed one the controller caches, which nothing reads: the Applier's own record (a.cache)
	// already tells its proofs what it wrote.
	if subresource == "status" {
		opts := []client.SubResourceApplyOption{client.FieldOwner(a.manager), client.DisableReadYourWritesConsistency}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		return u, a.client.Status().Apply(ctx, ac, opts...)
	}
	opts := []client.ApplyOption{client.FieldOwner(a.manager), client.DisableReadYourWritesConsistency}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return u, a.client.Apply(ctx, ac, opts...)
}

// previousVersion returns the resourceVersion the object had before an apply (of hash, under
// key): the live object's, or, when the reader has not seen it yet (a cache right after this
// Applier created it), the one this Applier left it at; "" for none.
func (a *Applier) previousVersion(live client.Object, key applyKey, hash [32]byte) string {
	if live != nil {
		return live.GetResourceVersion()
	}
	if r, ok := a.cache.get(key); ok && r.hash == hash {
		return r.resourceVersion
	}
	return ""
}

// sameApplied reports whether u, the API server's answer to an apply, holds what live, the object
// the apply was sent to, held: the same content and the same field set for each managedFields
// entry. The apply then wrote nothing that matters, although the server may have stored the
// object again under a new resourceVersion (it does for an apply of `finalizers: []` to a custom
// resource, which it stores without them), and applying again leaves it as it is.
func sameApplied(live client.Object, u *unstructured.Unstructured) bool {
	before, err := objects.ToMap(live)
	if err != nil {
		return false
	}
	strip := func(m map[string]any) (map[string]any, map[string]any) {
		c := jsonvalue.DeepCopyMap(m)
		meta := jsonvalue.NestedMap(c, "metadata")
		sets := map[string]any{}
		for _, e := range jsonvalue.List(meta["managedFields"]) {
			em := jsonvalue.Map(e)
			sets[fmt.Sprint(em["manager"], "/", em["operation"], "/", em["subresource"], "/", em["apiVersion"])] = em["fieldsV1"]
		}
		delete(meta, "managedFields")
		delete(meta, "resourceVersion")
		return c, sets
	}
	x, xs := strip(before)
	y, ys := strip(u.Object)
	return len(xs) > 0 && jsonvalue.Equal(x, y) && jsonvalue.Equal(xs, ys)
}

// ownerMarked returns the uid of the owner whose mark desired, the body of an apply request,
// declares: its controller owner reference, or its tracking label; empty for none.
func ownerMarked(desired map[string]any) types.UID {
	owner, ok := ownership.OwnerOf(&unstructured.Unstructured{Object: desired})
	if !ok {
		return ""
	}
	return owner.UID
}

// describeBody names the object of an apply request body in messages: "ConfigMap ns/name", or
// "the status of ConfigMap ns/name".
func describeBody(desired map[string]any, gvk schema.GroupVersionKind, subresource string) string {
	name, _ := jsonvalue.Nested(desired, "metadata", "name")
	namespace, _ := jsonvalue.Nested(desired, "metadata", "namespace")
	what := gvk.Kind + " " + client.ObjectKey{Namespace: fmt.Sprint(orEmpty(namespace)), Name: fmt.Sprint(orEmpty(name))}.String()
	if subresource != "" {
		what = "the " + subresource + " of " + what
	}
	return what
}

// orEmpty returns v, or "" when v is nil.
func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// fill makes obj the object result holds: a shallow copy of a live object of obj's type, or the
// conversion of a response.
func fill(obj, result client.Object) error {
	if u, ok := result.(*unstructured.Unstructured); ok {
		return setFromUnstructured(obj, u)
	}
	return objects.CopyInto(obj, result)
}

// fillConfiguration makes ac hold result, as client.Client's Apply leaves an apply configuration
// holding the server's response, with nothing left of what ac held before.
func fillConfiguration(ac runtime.ApplyConfiguration, result client.Object) error {
	content, err := objects.ToMap(result)
	if err != nil {
		return err
	}
	if u, ok := ac.(interface{ SetUnstructuredContent(map[string]any) }); ok {
		// client.ApplyConfigurationFromUnstructured wraps an *unstructured.Unstructured.
		u.SetUnstructuredContent(runtime.DeepCopyJSON(content))
		return nil
	}
	data, err := json.Marshal(content)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%T is not a pointer to a struct", ac)
	}
	fresh := reflect.New(v.Elem().Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return err
	}
	v.Elem().Set(fresh.Elem())
	return nil
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// setFromUnstructured replaces obj with the object u holds.
func setFromUnstructured(obj client.Object, u *unstructured.Unstructured) error {
	if o, ok := obj.(*unstructured.Unstructured); ok {
		o.Object = u.Object
		return nil
	}
	fresh, err := newLike(obj, schema.GroupVersionKind{})
	if err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, fresh); err != nil {
		return err
	}
	return objects.CopyInto(obj, fresh)
}

// hashOf returns the hash of an apply request: its body and whether it forces ownership. Two
// bodies that are the same JSON value have the same hash, whatever the Go types of their
// numbers (see jsonvalue.AppendCanonical).
func hashOf(desired map[string]any, force bool) ([32]byte, error) {
	data, err := jsonvalue.AppendCanonical(make([]byte, 0, 1024), desired)
	if err != nil {
		return [32]byte{}, fmt.Errorf("failed to encode the apply request: %w", err)
	}
	if force {
		data = append(data, 1)
	}
	return sha256.Sum256(data), nil
}

// appliedMetadata lists the metadata fields an apply request may declare; the rest is identity
// the request is addressed by, or belongs to the API server.
var appliedMetadata = []string{"name", "namespace", "labels", "annotations", "ownerReferences", "finalizers"}

// applyBody returns the body of the apply request for m, a desired object of kind gvk as a JSON
// value: m without status and server-owned metadata, with its apiVersion and kind. m is not
// modified.
func applyBody(m map[string]any, gvk schema.GroupVersionKind) map[string]any {
	body := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "status", "metadata":
		default:
			body[k] = pruneNulls(jsonvalue.DeepCopy(v))
		}
	}
	meta := jsonvalue.NestedMap(m, "metadata")
	applied := make(map[string]any, len(appliedMetadata))
	for _, k := range appliedMetadata {
		if v, ok := meta[k]; ok && v != nil {
			applied[k] = jsonvalue.DeepCopy(v)
		}
	}
	body["metadata"] = applied
	body["apiVersion"], body["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return body
}

// statusBody returns the body of the status apply request for m, a desired object of kind gvk
// as a JSON value: its identity (live's) and status, with only the owned conditions when owned is
// set, and transition times carried over from current, the conditions the object has. A
// condition that sets no time and has none to carry over gets the current time when stamp is
// set and every condition in current has a time: a condition of current without one says that
// the schema has no lastTransitionTime, or does not require one. Without such stamping, a time is
// carried over only for a condition whose time this manager applied (carry reports it): so a
// condition applied without one stays without one, and the same desired object makes the same
// request again, rather than one that takes over another writer's time. m is not modified.
func statusBody(m map[string]any, gvk schema.GroupVersionKind, live client.Object, current []any, owned []conditions.Type, stamp bool,
	carry func(conditionType string) bool,
) map[string]any {
	status, _ := pruneNulls(jsonvalue.DeepCopy(m["status"])).(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	meta := map[string]any{"name": live.GetName()}
	if ns := live.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	body := map[string]any{
		"apiVersion": gvk.GroupVersion().String(),
		"kind":       gvk.Kind,
		"metadata":   meta,
		"status":     status,
	}
	raw, has := status["conditions"]
	if !has {
		return body
	}
	desired, ok := jsonvalue.Conditions(raw)
	if !ok {
		return body // not a list of conditions keyed by type: applied as it is
	}
	stamp = stamp && !slices.ContainsFunc(current, func(e any) bool { return !hasTime(jsonvalue.Map(e)) })
	if out := conditionsToApply(desired, current, owned, stamp, carry); len(out) > 0 {
		status["conditions"] = out
	} else {
		delete(status, "conditions")
	}
	return body
}

// conditionsToApply returns the conditions of desired that the status apply declares (those of
// the owned types, or all of them when owned is nil), each with its lastTransitionTime: the
// current condition's when its status did not change and stamp or carry says so, now when it
// has none and stamp is set, its own otherwise. desired's conditions are modified.
func conditionsToApply(desired, current []any, owned []conditions.Type, stamp bool, carry func(conditionType string) bool) []any {
	out := make([]any, 0, len(desired))
	for _, e := range desired {
		c := jsonvalue.Map(e)
		t := jsonvalue.ConditionType(c)
		if owned != nil && !slices.Contains(owned, conditions.Type(t)) {
			continue
		}
		l := jsonvalue.FindCondition(current, t)
		switch {
		case l != nil && hasTime(l) && jsonvalue.SameStatus(l, c) && (stamp || carry(t)):
			c["lastTransitionTime"] = jsonvalue.DeepCopy(l["lastTransitionTime"])
		case !hasTime(c) && stamp:
			c["lastTransitionTime"] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		}
		out = append(out, c)
	}
	return out
}

// timesApplied returns the types of the conditions whose lastTransitionTime manager's status apply
// set, as live's managedFields show them, and false when live has none to show (a cache that
// strips them).
func timesApplied(live client.Object, manager string) (map[string]bool, bool) {
	entries := live.GetManagedFields()
	if len(entries) == 0 {
		return nil, false
	}
	out := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "status" {
			continue
		}
		set, ok := fieldSet(e)
		if !ok {
			return nil, false
		}
		for k, v := range jsonvalue.NestedMap(set, "f:status", "f:conditions") {
			key, ok := strings.CutPrefix(k, "k:")
			var selector map[string]any
			if !ok || json.Unmarshal([]byte(key), &selector) != nil {
				continue
			}
			if t, _ := selector["type"].(string); t != "" {
				_, out[t] = jsonvalue.Map(v)["f:lastTransitionTime"]
			}
		}
	}
	return out, true
}

// hasTime reports whether the condition c has a lastTransitionTime.
func hasTime(c map[string]any) bool {
	return c["lastTransitionTime"] != nil && c["lastTransitionTime"] != ""
}

// undeclaredTransitionTime reports whether err is server-side apply's refusal of a condition's
// lastTransitionTime that the kind's schema does not declare (a 500, "field not declared in
// schema").
func undeclaredTransitionTime(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 500 &&
		strings.Contains(status.Status().Message, ".lastTransitionTime: field not declared in schema")
}

// transitionTimes returns what an [applyRecord] keeps of obj's conditions: the type, status and
// lastTransitionTime of each, or nil when obj has none or they are not a list keyed by type.
func transitionTimes(obj map[string]any) []any {
	raw, _ := jsonvalue.Nested(obj, "status", "conditions")
	list, ok := jsonvalue.Conditions(raw)
	if !ok || len(list) == 0 {
		return nil
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		c := jsonvalue.Map(e)
		kept := map[string]any{"type": c["type"]}
		for _, k := range []string{"status", "lastTransitionTime"} {
			if v, ok := c[k]; ok {
				kept[k] = jsonvalue.DeepCopy(v)
			}
		}
		out = append(out, kept)
	}
	return out
}

// requestMap returns obj as a JSON value to build a request from, as [toMap] does, but for a
// typed object without its empty struct fields (see [omitZeroStructs]).
func requestMap(obj client.Object) (map[string]any, error) {
	m, err := objects.ToMap(obj)
	if err != nil {
		return nil, err
	}
	if _, ok := obj.(*unstructured.Unstructured); !ok {
		omitZeroStructs(reflect.ValueOf(obj), m)
	}
	return m, nil
}

// omitZeroStructs removes from m, the JSON value of the typed value v, every field whose Go type
// is a struct (not a pointer to one), whose json tag has omitempty and whose value is the zero
// value. encoding/json and runtime.DefaultUnstructuredConverter omit an empty string, number,
// bool, map, list or nil pointer with omitempty, but never a struct: a Service port's unset
// targetPort (an intstr.IntOrString) would be sent as 0, owned, and defaulted to the port by the
// server, so the live object could never match the request. A Go struct field cannot tell unset
// from zero, and omitempty says the type's author means zero as unset; a pointer to a struct, a
// field without omitempty and anything an unstructured object holds are sent as they are.
func omitZeroStructs(v reflect.Value, m any) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		if fields, ok := m.(map[string]any); ok {
			omitZeroFields(v, fields)
		}
	case reflect.Slice, reflect.Array:
		if list, ok := m.([]any); ok && len(list) == v.Len() && mayOmit(v.Type().Elem()) {
			for i := range list {
				omitZeroStructs(v.Index(i), list[i])
			}
		}
	case reflect.Map:
		if entries, ok := m.(map[string]any); ok && v.Type().Key().Kind() == reflect.String && mayOmit(v.Type().Elem()) {
			omitZeroEntries(v, entries)
		}
	}
}

// omitZeroEntries is omitZeroStructs for v, a map with string keys, and entries, its JSON object.
func omitZeroEntries(v reflect.Value, entries map[string]any) {
	for it := v.MapRange(); it.Next(); {
		if sub, ok := entries[it.Key().String()]; ok {
			omitZeroStructs(it.Value(), sub)
		}
	}
}

// omitZeroFields is omitZeroStructs for v, a struct, and fields, its JSON object.
func omitZeroFields(v reflect.Value, fields map[string]any) {
	for _, f := range planOf(v.Type()).fields {
		switch {
		case f.name == "":
			omitZeroStructs(v.Field(f.index), fields) // inlined: its fields are this struct's
		case f.omitZeroStruct && v.Field(f.index).IsZero():
			delete(fields, f.name)
		case f.walk:
			if sub, ok := fields[f.name]; ok {
				omitZeroStructs(v.Field(f.index), sub)
			}
		}
	}
}

// structPlan is what omitZeroStructs needs of a struct type's fields, worked out once per type
// (as encoding/json caches its encoders): the fields encoded from the struct's own fields, none
// for a type that encodes itself.
type structPlan struct {
	fields []fieldPlan
}

// fieldPlan is one encoded field of a struct.
type fieldPlan struct {
	index int
	// name is the field's JSON name; "" for an embedded struct whose fields are inlined.
	name string
	// omitZeroStruct is set for a struct field with omitempty: omitted when zero.
	omitZeroStruct bool
	// walk is set when the field's value may hold such a field (see mayOmit).
	walk bool
}

var (
	// structPlans caches planOf by reflect.Type; omittable caches mayOmit.
	structPlans, omittable sync.Map
)

// planOf returns the plan of struct type t.
func planOf(t reflect.Type) *structPlan {
	if p, ok := structPlans.Load(t); ok {
		return p.(*structPlan)
	}
	p := &structPlan{}
	if !encodesItself(t) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, omitempty := jsonField(f)
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			p.fields = append(p.fields, fieldPlan{index: i, name: name,
				omitZeroStruct: omitempty && f.Type.Kind() == reflect.Struct, walk: mayOmit(f.Type)})
		}
	}
	actual, _ := structPlans.LoadOrStore(t, p)
	return actual.(*structPlan)
}

// mayOmit reports whether a value of type t may hold a struct field that omitZeroStructs
// removes, so that it must be walked: false for scalars, strings, types that encode themselves
// and what holds only those.
func mayOmit(t reflect.Type) bool {
	if v, ok := omittable.Load(t); ok {
		return v.(bool)
	}
	// A type that refers to itself is walked while its answer is worked out (the safe answer).
	omittable.Store(t, true)
	result := mayOmitUncached(t)
	omittable.Store(t, result)
	return result
}

func mayOmitUncached(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return mayOmit(t.Elem())
	case reflect.Interface:
		return true
	case reflect.Struct:
		for _, f := range planOf(t).fields {
			if f.name == "" || f.omitZeroStruct || f.walk {
				return true
			}
		}
	}
	return false
}

// jsonField returns the name runtime.DefaultUnstructuredConverter gives the struct field f ("" for
// an embedded struct without a name, whose fields are inlined; "-" for one never encoded), and
// whether its tag has omitempty.
func jsonField(f reflect.StructField) (name string, omitempty bool) {
	tag, _ := f.Tag.Lookup("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && !f.Anonymous {
		name = f.Name
	}
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "omitempty" {
			omitempty = true
		}
	}
	return name, omitempty
}

// unstructuredEncoder is the interface of types that convert themselves to unstructured values
// (metav1.Time, resource.Quantity).
type unstructuredEncoder interface{ ToUnstructured() any }

var (
	jsonMarshalerType       = reflect.TypeFor[json.Marshaler]()
	unstructuredEncoderType = reflect.TypeFor[unstructuredEncoder]()
)

// encodesItself reports whether values of t have their own JSON encoding, so their JSON value is
// not made of t's fields.
func encodesItself(t reflect.Type) bool {
	for _, i := range []reflect.Type{jsonMarshalerType, unstructuredEncoderType} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// pruneNulls removes null fields from objects in v, recursively: a typed object converted to
// unstructured has them for fields it cannot omit, and an apply request must not declare them.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = pruneNulls(e)
		}
	case []any:
		for i := range x {
			x[i] = pruneNulls(x[i])
		}
	}
	return v
}
