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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is the desired state of a Widget. The contenders derive the status from it.
type WidgetSpec struct {
	// Size drives the ConfigReady condition: set means ready.
	// +optional
	Size string `json:"size,omitempty"`

	// Replicas drives the StorageReady condition: at least one means ready.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Color drives the NetworkReady condition: set means ready.
	// +optional
	Color string `json:"color,omitempty"`

	// Knobs are free-form settings. In the contention workload each concurrent writer owns one
	// key, so that a lost spec update can be attributed to the field and the writer.
	// +optional
	Knobs map[string]string `json:"knobs,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the controller's Ready, ConfigReady, StorageReady and NetworkReady, plus
	// those other writers own (a list of type map, so server-side apply can merge them).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Widget is the custom resource every contender reconciles.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec WidgetSpec `json:"spec,omitempty"`
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Widget's conditions; tenon's, Flux's and cluster-api's condition
// packages all use this method.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Widget's conditions.
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (w *Widget) GetObservedGeneration() int64 { return w.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (w *Widget) SetObservedGeneration(g int64) { w.Status.ObservedGeneration = g }

// WidgetList is a list of Widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
