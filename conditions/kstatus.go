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

	"github.com/tenon-dev/tenon/internal/objects"
)

// MarkReconciling sets Reconciling to True and removes Stalled, and reports whether anything
// changed: the controller is working towards the desired state and expects to get there.
// kstatus reports the object InProgress. As for [MarkTrue], an invalid reason is stored and
// surfaces when the object is written (see [Set]).
func MarkReconciling(obj Setter, reason Reason, message string) (changed bool) {
	changed = MarkTrue(obj, Reconciling, reason, message)
	return Delete(obj, Stalled) || changed
}

// MarkStalled sets Stalled to True and removes Reconciling: the controller cannot make progress
// without outside help (an invalid spec, missing credentials) and says why in the message.
// kstatus reports the object Failed. Pair it with a terminal error (see the requeue package), so
// the controller waits for a change instead of retrying. It reports whether anything changed; as
// for [MarkTrue], an invalid reason is stored and surfaces when the object is written (see
// [Set]).
func MarkStalled(obj Setter, reason Reason, message string) (changed bool) {
	changed = MarkTrue(obj, Stalled, reason, message)
	return Delete(obj, Reconciling) || changed
}

// MarkReconciled removes Reconciling and Stalled: the controller has finished acting on the
// current generation. With a current status.observedGeneration, kstatus then reports the object
// Current.
func MarkReconciled(obj Setter) (changed bool) {
	a := Delete(obj, Reconciling)
	b := Delete(obj, Stalled)
	return a || b
}

// ObservedGenerationSetter is implemented by objects whose status.observedGeneration is not a
// Status.ObservedGeneration int64 field, which [SetObservedGeneration] and
// [GetObservedGeneration] find on their own.
type ObservedGenerationSetter interface {
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// SetObservedGeneration sets obj's status.observedGeneration to its metadata.generation and
// reports whether it changed. Call it when the reconcile of the current generation has finished
// (whether it succeeded or not), so clients know the status describes the current spec.
//
// obj is either an [ObservedGenerationSetter], an *unstructured.Unstructured or the
// [*Unstructured] adapter around one, or a pointer to a struct with a Status struct field holding
// an int64 ObservedGeneration field, as kubebuilder scaffolds them. Anything else is an error,
// and obj is not modified.
func SetObservedGeneration(obj metav1.Object) (changed bool, err error) {
	gen := obj.GetGeneration()
	switch o := obj.(type) {
	case ObservedGenerationSetter:
		if o.GetObservedGeneration() == gen {
			return false, nil
		}
		o.SetObservedGeneration(gen)
		return true, nil
	case *Unstructured:
		return SetObservedGeneration(o.Unstructured)
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
	case ObservedGenerationSetter:
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

// KStatus is the overall state of an object, as the kstatus library
// (sigs.k8s.io/cli-utils/pkg/kstatus) computes it for custom resources and as kstatus-based tools
// (Flux, kpt, Config Sync, cli-utils) show it.
type KStatus string

// The states [ComputeKStatus] returns.
const (
	// KStatusCurrent: the object's status describes its current spec, Ready (when it has one) is
	// True, and nothing is in progress or stalled.
	KStatusCurrent KStatus = "Current"
	// KStatusInProgress: the controller has not yet observed the current generation, says it is
	// Reconciling, or has a Ready condition that is False or Unknown.
	KStatusInProgress KStatus = "InProgress"
	// KStatusFailed: the controller says it is Stalled.
	KStatusFailed KStatus = "Failed"
	// KStatusTerminating: the object is being deleted.
	KStatusTerminating KStatus = "Terminating"
)

// ComputeKStatus returns obj's kstatus: its overall state, and a message that explains it, by the
// rules kstatus (sigs.k8s.io/cli-utils/pkg/kstatus, v0.37) applies to custom resources, with
// kstatus's messages. The first rule that applies decides:
//
//  1. a deletionTimestamp means Terminating;
//  2. a status.observedGeneration different from metadata.generation means InProgress (an
//     object without either field skips this rule: give your status one);
//  3. the first condition in list order that is Reconciling=True or Stalled=True decides:
//     Reconciling means InProgress, Stalled means Failed (so when both are True, whichever comes
//     first in the list wins);
//  4. the first Ready condition whose status is True, False or Unknown decides: True means
//     Current, False or Unknown means InProgress;
//  5. anything else, including an object with no conditions at all, is Current.
//
// The observedGeneration of the conditions plays no part: kstatus reads only
// status.observedGeneration. Rule 4 means an object that is not Ready and has neither
// Reconciling nor Stalled is InProgress for ever: kstatus cannot tell whether it makes progress
// or is stuck, and never reports it Failed. Use [MarkReconciling] and [MarkStalled] so it can
// (requeue.Report does), and the BeCompliant matcher of testing/matchers in tests to catch
// objects that do not.
//
// kstatus has rules of its own for some built-in kinds (Deployment, StatefulSet, DaemonSet,
// ReplicaSet, Pod, PersistentVolumeClaim, Service, Job, PodDisruptionBudget,
// CustomResourceDefinition, and ConfigMap, Secret and CronJob, which are always Current), which it
// applies between rules 3 and 4. ComputeKStatus does not implement them: do not use it for those
// kinds.
//
// obj may be typed or unstructured; a typed object is converted with the default converter,
// which is an error only for types that cannot be represented as JSON. A field of the wrong type
// (a metadata.generation that is not an integer, a condition that is not an object) is an error,
// as it is for kstatus.
func ComputeKStatus(obj runtime.Object) (status KStatus, message string, err error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return "", "", err
	}
	deletion, _, err := unstructured.NestedString(u.Object, "metadata", "deletionTimestamp")
	if err != nil {
		return "", "", fmt.Errorf("failed to read metadata.deletionTimestamp of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if deletion != "" {
		return KStatusTerminating, "Resource scheduled for deletion", nil
	}

	if status, message, err := generationStatus(u); status != "" || err != nil {
		return status, message, err
	}
	list, err := kstatusConditions(u)
	if err != nil {
		return "", "", err
	}
	status, message = conditionStatus(list)
	return status, message, nil
}

// generationStatus returns InProgress when u's status.observedGeneration is set and is not its
// metadata.generation (rule 2), and no status otherwise.
func generationStatus(u *unstructured.Unstructured) (KStatus, string, error) {
	gen, hasGen, err := unstructured.NestedInt64(u.Object, "metadata", "generation")
	if err != nil {
		return "", "", fmt.Errorf("failed to read metadata.generation of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if !hasGen {
		return "", "", nil
	}
	observed, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if err != nil {
		return "", "", fmt.Errorf("failed to read status.observedGeneration of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if found && observed != gen {
		return KStatusInProgress, fmt.Sprintf("%s generation is %d, but latest observed generation is %d", u.GetKind(), gen, observed), nil
	}
	return "", "", nil
}

// conditionStatus applies rules 3 to 5 to the conditions kstatus reads: Reconciling or Stalled
// True, whichever comes first, then Ready, then Current.
func conditionStatus(list []kstatusCondition) (KStatus, string) {
	for _, c := range list {
		switch {
		case c.Type == string(Reconciling) && c.Status == metav1.ConditionTrue:
			return KStatusInProgress, c.Message
		case c.Type == string(Stalled) && c.Status == metav1.ConditionTrue:
			return KStatusFailed, c.Message
		}
	}
	for _, c := range list {
		if c.Type != string(Ready) {
			continue
		}
		switch c.Status {
		case metav1.ConditionTrue:
			return KStatusCurrent, "Resource is Ready"
		case metav1.ConditionFalse, metav1.ConditionUnknown:
			return KStatusInProgress, c.Message
		}
	}
	return KStatusCurrent, "Resource is current"
}

// kstatusCondition holds the fields of a condition kstatus reads.
type kstatusCondition struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Message string                 `json:"message,omitempty"`
}

// kstatusConditions reads u's status.conditions as kstatus does: in list order, duplicates
// included, and without requiring the other fields of a metav1.Condition.
func kstatusConditions(u *unstructured.Unstructured) ([]kstatusCondition, error) {
	var out struct {
		Status struct {
			Conditions []kstatusCondition `json:"conditions"`
		} `json:"status"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		return nil, fmt.Errorf("failed to read status.conditions of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out.Status.Conditions, nil
}

// toUnstructured returns obj as an unstructured object: itself, the one it wraps, or its
// conversion, named by its Go type when it has no kind.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *Unstructured:
		return o.Unstructured, nil
	}
	m, err := objects.ToMap(obj)
	if err != nil {
		return nil, err
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
