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

package contender

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// Finalizer is the finalizer every contender adds and removes.
const Finalizer = "bench.tenon.dev/cleanup"

// The condition types the controller owns.
const (
	TypeReady        = "Ready"
	TypeConfigReady  = "ConfigReady"
	TypeNetworkReady = "NetworkReady"
	TypeStorageReady = "StorageReady"
)

// OwnedTypes are the condition types the controller writes; other writers own the rest.
var OwnedTypes = []string{TypeReady, TypeConfigReady, TypeNetworkReady, TypeStorageReady}

// Desired returns the controller's conditions for w's spec, Ready first: type, status, reason
// and message. ObservedGeneration and LastTransitionTime are left for each contender's library
// to set, as it would in a real controller.
//
//   - ConfigReady is True when spec.size is set; its message names the size and the number of
//     knobs, so a writer that adds a knob changes the status.
//   - StorageReady is True when spec.replicas is at least 1.
//   - NetworkReady is True when spec.color is set.
//   - Ready is True when all three are, else False with the reason of the first that is not.
func Desired(w *benchv1.Widget) []metav1.Condition {
	config := metav1.Condition{Type: TypeConfigReady, Status: metav1.ConditionTrue, Reason: "SizeSet",
		Message: fmt.Sprintf("size %s, %d knobs", w.Spec.Size, len(w.Spec.Knobs))}
	if w.Spec.Size == "" {
		config = metav1.Condition{Type: TypeConfigReady, Status: metav1.ConditionFalse, Reason: "SizeMissing",
			Message: "spec.size is empty"}
	}
	storage := metav1.Condition{Type: TypeStorageReady, Status: metav1.ConditionFalse, Reason: "NoReplicas",
		Message: "spec.replicas is not at least 1"}
	if w.Spec.Replicas != nil && *w.Spec.Replicas > 0 {
		storage = metav1.Condition{Type: TypeStorageReady, Status: metav1.ConditionTrue, Reason: "ReplicasSet",
			Message: fmt.Sprintf("%d replicas", *w.Spec.Replicas)}
	}
	network := metav1.Condition{Type: TypeNetworkReady, Status: metav1.ConditionTrue, Reason: "ColorSet",
		Message: "color " + w.Spec.Color}
	if w.Spec.Color == "" {
		network = metav1.Condition{Type: TypeNetworkReady, Status: metav1.ConditionFalse, Reason: "NoColor",
			Message: "spec.color is empty"}
	}
	ready := metav1.Condition{Type: TypeReady, Status: metav1.ConditionTrue, Reason: "AllReady",
		Message: "config, storage and network are ready"}
	for _, dep := range []metav1.Condition{config, storage, network} {
		if dep.Status != metav1.ConditionTrue {
			ready = metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: dep.Reason,
				Message: dep.Type + ": " + dep.Message}
			break
		}
	}
	return []metav1.Condition{ready, config, network, storage}
}

// Converged reports whether w is in the state every contender must reach for its spec: the
// finalizer present, status.observedGeneration equal to metadata.generation, and each of the
// controller's conditions equal to [Desired] and computed for the current generation. When it is
// not, the reason says what differs.
func Converged(w *benchv1.Widget) (ok bool, reason string) {
	if !hasFinalizer(w) {
		return false, "finalizer missing"
	}
	if w.Status.ObservedGeneration != w.Generation {
		return false, fmt.Sprintf("status.observedGeneration %d, generation %d", w.Status.ObservedGeneration, w.Generation)
	}
	for _, want := range Desired(w) {
		got := findCondition(w.Status.Conditions, want.Type)
		switch {
		case got == nil:
			return false, "condition " + want.Type + " missing"
		case got.Status != want.Status || got.Reason != want.Reason || got.Message != want.Message:
			return false, fmt.Sprintf("condition %s is %s/%s/%q, want %s/%s/%q", want.Type,
				got.Status, got.Reason, got.Message, want.Status, want.Reason, want.Message)
		case got.ObservedGeneration != w.Generation:
			return false, fmt.Sprintf("condition %s observed generation %d, generation %d", want.Type,
				got.ObservedGeneration, w.Generation)
		}
	}
	return true, ""
}

func hasFinalizer(w *benchv1.Widget) bool {
	for _, f := range w.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func findCondition(list []metav1.Condition, t string) *metav1.Condition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}
