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
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
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
	// omitted is where a kind's stored form omits an empty map an apply sets (see
	// managed.Omits), for the proofs.
	omitted omissions
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
	// apply the Applier remembers, about 200 bytes each, and for a status apply the type,
	// status and transition time of each condition. For objects it has forgotten it proves
	// a skip from the live object and its managedFields alone, which costs more CPU and, while
	// Reader lags, sends an apply that a record would have skipped. Default: sized to the work:
	// 4,096 at first, doubling while the objects this Applier applies again do not fit (found by
	// its entry in their managedFields, or by records used again), up to 1,048,576 (about 200
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
//   - The sharder's labels (keys that begin with shard.alpha.sharding.timebertt.dev/ or
//     drain.alpha.sharding.timebertt.dev/, see tenon's sharding package) are not sent: the
//     sharder assigns children itself, and a child that copied its owner's labels would make
//     this manager own the owner's shard label on the child and put it back after every move.
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
	result, changed, err := a.applyOwned(ctx, desired, gvk, obj, live, builtIn(obj, gvk), &o)
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
	result, changed, err := a.applyOwned(ctx, desired, gvk, like, live, nil, &o)
	if result != nil {
		if ferr := fillConfiguration(ac, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(desired, gvk, ""), ferr)
		}
	}
	return changed, err
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
//   - LastTransitionTime is carried over from the live object (or from this Applier's last
//     status apply, while the reader lags behind it) for every condition whose status did not
//     change; a new or flipped condition without one gets the current time, truncated to
//     seconds. When a condition the object holds has no lastTransitionTime (a kind whose
//     conditions have none), no time is added, and times are carried over only where this
//     manager applied them. See "Server-side apply" in the package documentation.
//   - The request is skipped when the Applier proves it would change nothing, as for
//     [Applier.Apply].
//   - When obj is a conditions.Getter, a condition to apply that conditions.Validate refuses
//     (lastTransitionTime aside) stops the call before anything is read or sent; the error
//     wraps conditions.ErrInvalid and names the condition (requeue.ClassInvalid). Only the
//     fields the request's condition holds are checked: a typed condition sends every field, so
//     an unset reason is an empty one, which is refused; a reason or status an apply
//     configuration leaves out is the API server's to keep (another manager's) or to refuse, as
//     the kind's schema says. A condition without a status keeps its transition time.
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
	result, changed, err := a.applyStatus(ctx, m, gvk, obj, builtIn(obj, gvk), &o)
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
	result, changed, err := a.applyStatus(ctx, m, gvk, a.newObject(m, gvk), nil, &o)
	if result != nil {
		if ferr := fillConfiguration(ac, result); ferr != nil && err == nil {
			err = fmt.Errorf("failed to read the response to the apply of %s: %w", describeBody(m, gvk, "status"), ferr)
		}
	}
	return changed, err
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
