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
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/jsontext"
	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// applyStatus applies the status in m, the desired object as a JSON value; like is an empty
// object of its kind, with its name and namespace, to read the live object into, and answer what
// the API server's answer is read into (see [Applier.request]).
func (a *Applier) applyStatus(ctx context.Context, m map[string]any, gvk schema.GroupVersionKind, like, answer client.Object, o *applyOptions) (client.Object, bool, error) {
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
		current = r.conditions()
	}
	times, known := timesApplied(live, a.manager)
	carry := func(t string) bool { return !known || times[t] }
	desired := statusBody(m, gvk, live, current, o.ownedConditions, true, carry)
	result, changed, err := a.apply(ctx, desired, gvk, answer, live, "status", o.force, precondition{})
	if undeclaredTransitionTime(err) {
		// The conditions of this kind have no lastTransitionTime (KEDA's, for one): apply them
		// without the times the Applier added.
		if untimed := statusBody(m, gvk, live, current, o.ownedConditions, false, carry); !jsonvalue.Equal(untimed, desired) {
			result, changed, err = a.apply(ctx, untimed, gvk, answer, live, "status", o.force, precondition{})
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
// kinds' conditions need not be. Only the fields the request's condition holds are checked: a
// field it lacks (an apply configuration's or an unstructured object's condition without a
// reason) is not this manager's to set: the API server keeps another manager's value there, or
// the kind's schema decides whether the condition may lack it (metav1.Condition's requires a
// reason; a CRD's own condition type may not). A typed object's condition holds every field (an unset reason is
// an empty one). A condition without a lastTransitionTime is checked as if it had one: the
// Applier gives it one, or the kind's conditions have none.
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
		withAbsentFieldsValid(&c, jsonvalue.Map(e))
		if err := conditions.Validate(c); err != nil {
			return fmt.Errorf("failed to apply %s: %w", describeBody(m, gvk, "status"), err)
		}
	}
	return nil
}

// withAbsentFieldsValid gives c, decoded from the JSON object e, a valid value for each field
// that Validate checks and e lacks, so that only the fields the request sets are checked.
func withAbsentFieldsValid(c *metav1.Condition, e map[string]any) {
	if _, ok := e["status"]; !ok {
		c.Status = metav1.ConditionUnknown
	}
	if _, ok := e["reason"]; !ok {
		c.Reason = "Absent"
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.Unix(0, 0)
	}
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

// text returns v as fmt.Sprint does, without formatting a string.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// noSuchResourceVersion is a resourceVersion no object has (the largest revision etcd can
// count to): as the precondition of an apply, it lets the API server create the object and
// refuses, with a 409, to change one that exists.
const noSuchResourceVersion = "9223372036854775807"

// keyOf returns the key the Applier remembers applies of desired to subresource by.
func (a *Applier) keyOf(desired map[string]any, gvk schema.GroupVersionKind, subresource string) applyKey {
	name, _ := jsonvalue.Nested(desired, "metadata", "name")
	namespace, _ := jsonvalue.Nested(desired, "metadata", "namespace")
	return applyKey{gvk: gvk, namespace: text(orEmpty(namespace)), name: text(name), manager: a.manager, subresource: subresource}
}

// apply sends desired, the body of an apply request for an object of kind gvk, unless live shows
// it would change nothing; the API server applies it only under pre. It returns what the object
// is afterwards: live when the request was skipped, the response otherwise, read as answer says
// (see [Applier.request]).
func (a *Applier) apply(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind,
	answer, live client.Object, subresource string, force bool, pre precondition,
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
	return a.send(ctx, desired, gvk, answer, live, subresource, force, pre, key, hash)
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
	upToDate, declared, err := a.provenUpToDate(desired, gvk, live, subresource, r.declaredFor(hash))
	if err != nil || !upToDate {
		return false, err
	}
	var conditions []any
	if subresource == "status" {
		liveMap, err := objects.ToMap(live)
		if err != nil {
			return false, err
		}
		conditions = transitionTimes(liveMap)
	}
	proven := applyRecord{hash: hash, resourceVersion: live.GetResourceVersion(), owner: ownerMarked(desired), fixed: true}
	a.cache.put(key, proven.withDetails(declared, conditions))
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
// would change nothing (see [Applier.Apply]). known is the hash of a field set of this
// manager's entry that is the field set desired declares: the one the API server recorded for
// an apply of the same desired object, or one an earlier proof of it found equal to the set the
// kind's schema gives. When live's entry holds those bytes, the schema is not walked again.
// When the proof holds with the schema's field set, declared is the hash of the entry's field
// set for the next proof (zero when it cannot be known).
func (a *Applier) provenUpToDate(desired map[string]any, gvk schema.GroupVersionKind, live client.Object, subresource string, known [32]byte) (upToDate bool, declared [32]byte, err error) {
	liveMap, entries, own, err := a.proofInput(live, subresource)
	if err != nil {
		return false, [32]byte{}, err
	}
	var declaredFields, declaredMeta map[string]any
	if own != ([32]byte{}) && own == known {
		// The schema's field set for desired is the one this entry holds: it was found equal to
		// these very bytes before.
		declaredFields = managed.AppliedSet(entries, a.manager, subresource)
	}
	if declaredFields == nil {
		declaredFields = managed.DeclaredFields(a.types(), desired)
	}
	if declaredFields == nil {
		declaredMeta = managed.DeclaredMetadata(a.types(), desired)
	}
	if !managed.UpToDate(desired, liveMap, entries, a.manager, subresource, declaredFields, declaredMeta, a.omitted.of(gvk, desired)) {
		return false, [32]byte{}, nil
	}
	if declaredFields != nil {
		declared = own
	}
	return true, declared, nil
}

// proofInput returns what the proof of an apply to subresource reads of live: live as a JSON
// value, its managedFields entries, and the hash of the field set of this manager's apply
// entry for subresource (zero when there is not exactly one, or live is read whole).
//
// A typed object of the API's shape (ObjectMeta embedded by value) is converted without its
// managedFields, whose field sets are decoded from their JSON once (the converter would encode
// and decode them), and, for an apply to the main resource, without its status, which such an
// apply neither declares nor owns (a StatefulSet's status costs as much to convert as its
// spec). The map is the caller's to read only.
func (a *Applier) proofInput(live client.Object, subresource string) (map[string]any, []managed.Entry, [32]byte, error) {
	v := reflect.ValueOf(live)
	if _, ok := live.(runtime.Unstructured); ok || !ownsItsMetadata(v) {
		// An unstructured object's conversion is its own map, and a copy of a type whose
		// metadata is behind a pointer shares it: read the whole object, as it is.
		m, err := objects.ToMap(live)
		if err != nil {
			return nil, nil, [32]byte{}, err
		}
		// The map holds the field sets as JSON objects already (see managed.EntriesOf).
		return m, managed.EntriesOf(&unstructured.Unstructured{Object: m}), [32]byte{}, nil
	}
	copied := reflect.New(v.Elem().Type())
	copied.Elem().Set(v.Elem())
	if subresource == "" {
		if f, ok := v.Elem().Type().FieldByName("Status"); ok && len(f.Index) == 1 {
			if name, _ := jsonField(f); name == "status" {
				copied.Elem().Field(f.Index[0]).SetZero()
			}
		}
	}
	without, ok := copied.Interface().(client.Object)
	if !ok {
		return nil, nil, [32]byte{}, fmt.Errorf("cannot read %T: not a client.Object", live)
	}
	without.SetManagedFields(nil)
	m, err := objects.ToMap(without)
	if err != nil {
		return nil, nil, [32]byte{}, err
	}
	if subresource == "" {
		delete(m, "status")
	}
	entries, own := entriesOf(live.GetManagedFields(), a.manager, subresource)
	return m, entries, own, nil
}

// ownsItsMetadata reports whether v is a pointer to a struct that embeds its ObjectMeta by
// value, as the API's Go types do: a shallow copy of the struct then has metadata of its own.
func ownsItsMetadata(v reflect.Value) bool {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := v.Elem().Type().FieldByName("ObjectMeta")
	return ok && f.Anonymous && len(f.Index) == 1 && f.Type == reflect.TypeFor[metav1.ObjectMeta]()
}

// send sends the apply request of desired under pre, and remembers it under key and hash.
func (a *Applier) send(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind,
	answer, live client.Object, subresource string, force bool, pre precondition, key applyKey, hash [32]byte,
) (result client.Object, changed bool, err error) {
	u, err := a.request(ctx, desired, gvk, answer, subresource, force, pre)
	if err != nil {
		return nil, false, fmt.Errorf("failed to apply %s: %w", describeBody(desired, gvk, subresource), err)
	}
	previous := a.previousVersion(live, key, hash)
	// An apply that wrote nothing left the object as applying it again leaves it; otherwise the
	// answer must show it (see managed.FixedPoint), or the next apply is sent and proves it then.
	fixed := previous != "" && previous == u.GetResourceVersion()
	// The API server recorded in the manager's entry the field set it computed for this apply
	// from the kind's schema: the set a proof of the same apply would otherwise compute anew.
	var declared [32]byte
	if !fixed {
		fixed, declared = a.fixedPoint(desired, gvk, u, subresource)
		fixed = fixed || live != nil && sameApplied(live, u)
	} else if _, ok := u.(runtime.Unstructured); !ok {
		// (An unstructured answer's managedFields would have to be converted to be read.)
		declared = appliedSetHash(u.GetManagedFields(), a.manager, subresource)
	}
	record := applyRecord{hash: hash, resourceVersion: u.GetResourceVersion(), owner: ownerMarked(desired), fixed: fixed}
	var conditions []any
	if subresource == "status" {
		m, err := objects.ToMap(u)
		if err != nil {
			return nil, false, err
		}
		conditions = transitionTimes(m)
	}
	a.cache.put(key, record.withDetails(declared, conditions))
	changed = previous == "" || u.GetResourceVersion() != previous
	if l := log.FromContext(ctx).V(1); changed && l.Enabled() {
		l.Info("Applied", "object", describeBody(desired, gvk, subresource), "fieldManager", a.manager, "resourceVersion", u.GetResourceVersion())
	}
	return u, changed, nil
}

// fixedPoint reports whether answer, the API server's answer to the apply of desired to
// subresource, proves a fixed point (see managed.FixedPoint), and returns the hash of the field
// set of the manager's apply entry in it (zero when it is not known; see Applier.proofInput).
func (a *Applier) fixedPoint(desired map[string]any, gvk schema.GroupVersionKind, answer client.Object, subresource string) (bool, [32]byte) {
	m, entries, own, err := a.proofInput(answer, subresource)
	if err != nil {
		return false, [32]byte{}
	}
	return managed.FixedPointOf(desired, m, entries, a.manager, subresource, a.omitted.of(gvk, desired)), own
}

// request sends the apply request of desired, an object of kind gvk, to subresource, under pre,
// and returns the server's answer. With answer, the caller's object of a built-in kind (see
// [builtIn]), the request is a patch of the apply type, whose answer the client reads straight
// into answer's Go type, in the kind's protobuf form, instead of as JSON converted afterwards.
// With answer nil, it is an apply configuration, whose answer is read as unstructured, whole:
// the proof that the answer is a fixed point must see every field the server returns, and
// another Go type than client-go's may lack some (a hand-written type for a custom resource, or
// one older than its CRD, where a mutating admission plugin may add a field the type drops).
func (a *Applier) request(ctx context.Context, desired map[string]any, gvk schema.GroupVersionKind, answer client.Object, subresource string, force bool, pre precondition) (client.Object, error) {
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
	if answer != nil {
		return a.requestTyped(ctx, u.Object, gvk, answer, subresource, force)
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

// requestTyped sends body as an apply patch to subresource and returns the answer, read into a
// new object of like's type, with its apiVersion and kind set to gvk as an unstructured answer
// has them.
func (a *Applier) requestTyped(ctx context.Context, body map[string]any, gvk schema.GroupVersionKind, like client.Object, subresource string, force bool) (client.Object, error) {
	answer, err := newLike(like, gvk)
	if err != nil {
		return nil, err
	}
	p := applyPatch(body)
	// Without read-your-writes for the same reason as an unstructured request: the Applier's
	// record tells its proofs what it wrote, and the controller's next read need not wait for
	// its cache to show the apply.
	if subresource == "status" {
		opts := []client.SubResourcePatchOption{client.FieldOwner(a.manager), client.DisableReadYourWritesConsistency}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		err = a.client.Status().Patch(ctx, answer, p, opts...)
	} else {
		opts := []client.PatchOption{client.FieldOwner(a.manager), client.DisableReadYourWritesConsistency}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		err = a.client.Patch(ctx, answer, p, opts...)
	}
	if err != nil {
		return nil, err
	}
	answer.GetObjectKind().SetGroupVersionKind(gvk)
	return answer, nil
}

// applyPatch is the body of a typed object's apply request, as a client.Patch.
type applyPatch map[string]any

// Type is types.ApplyPatchType.
func (applyPatch) Type() types.PatchType { return types.ApplyPatchType }

// Data returns the body as JSON. The resourceVersion and deletionTimestamp the client set on obj,
// the object the answer is read into, replace the body's, as in the patch client.Client's Apply
// sends: the API server's client sets neither, and a client that keeps objects in memory
// (controller-runtime's fake client, in users' unit tests) sets them there, the first
// resourceVersion of an object it creates through an apply, and the deletionTimestamp of one
// being deleted, which an apply must not change.
func (p applyPatch) Data(obj client.Object) ([]byte, error) {
	body := map[string]any(p)
	rv, deleted := obj.GetResourceVersion(), obj.GetDeletionTimestamp()
	if rv == "" && deleted == nil {
		return jsontext.Marshal(body)
	}
	body = maps.Clone(body)
	meta, _ := body["metadata"].(map[string]any)
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	if deleted != nil {
		meta["deletionTimestamp"] = deleted.UTC().Format(time.RFC3339)
	}
	body["metadata"] = meta
	return jsontext.Marshal(body)
}

// builtIn returns obj, the object a caller applies, when it is of kind gvk's Go type in
// client-go, whose types the Applier already takes as the built-in kinds' schemas (its type
// converter); nil otherwise: what [Applier.request] reads the answer into.
func builtIn(obj client.Object, gvk schema.GroupVersionKind) client.Object {
	types, err := clientGoTypes()
	if err != nil {
		return nil
	}
	typed, err := types.New(gvk)
	if err != nil || reflect.TypeOf(typed) != reflect.TypeOf(obj) {
		return nil
	}
	return obj
}

// clientGoTypes is a scheme of client-go's types only. client-go's own scheme
// (clientgoscheme.Scheme) will not do: it is controller-runtime's default scheme, in which
// programs and tests register their custom resources' Go types too (kubebuilder's test suite
// does).
var clientGoTypes = sync.OnceValues(func() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	return s, clientgoscheme.AddToScheme(s)
})

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

// sameApplied reports whether answer, the API server's answer to an apply, holds what live, the object
// the apply was sent to, held: the same content and the same field set for each managedFields
// entry. The apply then wrote nothing that matters, although the server may have stored the
// object again under a new resourceVersion (it does for an apply of `finalizers: []` to a custom
// resource, which it stores without them), and applying again leaves it as it is.
func sameApplied(live, answer client.Object) bool {
	before, err := objects.ToMap(live)
	if err != nil {
		return false
	}
	after, err := objects.ToMap(answer)
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
	y, ys := strip(after)
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
