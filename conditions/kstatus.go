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
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// MarkReconciling sets Reconciling to True and removes Stalled: the controller is working
// towards the desired state and expects to get there. kstatus reports the object InProgress.
func MarkReconciling(obj Setter, reason Reason, message string) (changed bool, err error) {
	changed, err = MarkTrue(obj, Reconciling, reason, message)
	if err != nil {
		return false, err
	}
	return Delete(obj, Stalled) || changed, nil
}

// MarkStalled sets Stalled to True and removes Reconciling: the controller cannot make progress
// without outside help (an invalid spec, missing credentials) and says why in the message.
// kstatus reports the object Failed. Pair it with a terminal error (see the requeue package), so
// the controller waits for a change instead of retrying.
func MarkStalled(obj Setter, reason Reason, message string) (changed bool, err error) {
	changed, err = MarkTrue(obj, Stalled, reason, message)
	if err != nil {
		return false, err
	}
	return Delete(obj, Reconciling) || changed, nil
}

// MarkReconciled removes Reconciling and Stalled: the controller has finished acting on the
// current generation. With a current status.observedGeneration, kstatus then reports the object
// Current.
func MarkReconciled(obj Setter) (changed bool) {
	a := Delete(obj, Reconciling)
	b := Delete(obj, Stalled)
	return a || b
}

// ObservedGenerationGetter is implemented by objects with a status.observedGeneration field.
type ObservedGenerationGetter interface {
	GetObservedGeneration() int64
}

// ObservedGenerationSetter is implemented by objects whose status.observedGeneration can be set.
type ObservedGenerationSetter interface {
	ObservedGenerationGetter
	SetObservedGeneration(int64)
}

// SetObservedGeneration sets obj's status.observedGeneration to its metadata.generation and
// reports whether it changed. Call it when the reconcile of the current generation has finished
// (whether it succeeded or not), so clients know the status describes the current spec.
//
// obj is either an [ObservedGenerationSetter], an *unstructured.Unstructured, or a pointer to a
// struct with a Status struct field holding an int64 ObservedGeneration field, as kubebuilder
// scaffolds them. Anything else is an error, and obj is not modified.
func SetObservedGeneration(obj metav1.Object) (changed bool, err error) {
	gen := obj.GetGeneration()
	switch o := obj.(type) {
	case ObservedGenerationSetter:
		if o.GetObservedGeneration() == gen {
			return false, nil
		}
		o.SetObservedGeneration(gen)
		return true, nil
	case *unstructured.Unstructured:
		current, _, err := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		if err != nil {
			return false, fmt.Errorf("failed to read status.observedGeneration of %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if current == gen && hasObservedGeneration(o) {
			return false, nil
		}
		if err := unstructured.SetNestedField(o.Object, gen, "status", "observedGeneration"); err != nil {
			return false, fmt.Errorf("failed to set status.observedGeneration of %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		return true, nil
	}
	field, err := observedGenerationField(obj)
	if err != nil {
		return false, err
	}
	if field.Int() == gen {
		return false, nil
	}
	field.SetInt(gen)
	return true, nil
}

// GetObservedGeneration returns obj's status.observedGeneration and whether obj has one; see
// [SetObservedGeneration] for the objects it understands.
func GetObservedGeneration(obj metav1.Object) (generation int64, ok bool) {
	switch o := obj.(type) {
	case ObservedGenerationGetter:
		return o.GetObservedGeneration(), true
	case *unstructured.Unstructured:
		g, found, err := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		return g, found && err == nil
	case *Unstructured:
		return GetObservedGeneration(o.Unstructured)
	}
	field, err := observedGenerationField(obj)
	if err != nil {
		return 0, false
	}
	return field.Int(), true
}

func hasObservedGeneration(u *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "observedGeneration")
	return found
}

// observedGenerationField finds obj.Status.ObservedGeneration by reflection.
func observedGenerationField(obj metav1.Object) (reflect.Value, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if status := v.FieldByName("Status"); status.IsValid() && status.Kind() == reflect.Struct {
			if f := status.FieldByName("ObservedGeneration"); f.IsValid() && f.Kind() == reflect.Int64 && f.CanSet() {
				return f, nil
			}
		}
	}
	return reflect.Value{}, fmt.Errorf("%T has no status.observedGeneration: give its Status an ObservedGeneration int64 field, or implement conditions.ObservedGenerationSetter", obj)
}

// Status is the overall state of an object, as the kstatus library
// (sigs.k8s.io/cli-utils/pkg/kstatus) computes it for custom resources and as kstatus-based tools
// (Flux, kpt, cli-utils) show it.
type Status string

// The states [Compute] returns.
const (
	// StatusCurrent: the object's status describes its current spec and nothing is in progress.
	StatusCurrent Status = "Current"
	// StatusInProgress: the controller has not yet observed the current generation, or says it is
	// Reconciling.
	StatusInProgress Status = "InProgress"
	// StatusFailed: the controller says it is Stalled.
	StatusFailed Status = "Failed"
	// StatusTerminating: the object is being deleted.
	StatusTerminating Status = "Terminating"
)

// Result is the outcome of [Compute]: a state and a human-readable message.
type Result struct {
	// Status is the state kstatus would report.
	Status Status
	// Message explains Status.
	Message string
}

// Compute returns obj's state by kstatus's rules for custom resources, in order:
//
//  1. a deletionTimestamp means Terminating;
//  2. a status.observedGeneration different from metadata.generation means InProgress (an
//     object without the field skips this rule: give your status one);
//  3. a True Reconciling condition means InProgress;
//  4. a True Stalled condition means Failed;
//  5. anything else is Current.
//
// Note what rule 5 implies: an object whose Ready condition is False, but that has neither
// Reconciling nor Stalled, is Current to kstatus. Use [MarkReconciling] and [MarkStalled] while
// the object is not ready, and [Check] in tests to catch objects that break the convention.
//
// obj may be typed or unstructured; a typed object is converted with the default converter,
// which is an error only for types that cannot be represented as JSON.
func Compute(obj runtime.Object) (Result, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return Result{}, err
	}
	if u.GetDeletionTimestamp() != nil {
		return Result{Status: StatusTerminating, Message: "Resource scheduled for deletion"}, nil
	}
	if observed, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); err == nil && found {
		if gen := u.GetGeneration(); observed != gen {
			return Result{Status: StatusInProgress,
				Message: fmt.Sprintf("%s generation is %d, but latest observed generation is %d", u.GetKind(), gen, observed)}, nil
		}
	}
	a, err := FromUnstructured(u)
	if err != nil {
		return Result{}, err
	}
	if c := Get(a, Reconciling); c != nil && c.Status == metav1.ConditionTrue {
		return Result{Status: StatusInProgress, Message: c.Message}, nil
	}
	if c := Get(a, Stalled); c != nil && c.Status == metav1.ConditionTrue {
		return Result{Status: StatusFailed, Message: c.Message}, nil
	}
	return Result{Status: StatusCurrent, Message: "Resource is current"}, nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert %T to unstructured: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		// Typed objects read through a client usually have no TypeMeta; name the Go type instead.
		t := reflect.TypeOf(obj)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		u.SetKind(t.Name())
	}
	return u, nil
}
