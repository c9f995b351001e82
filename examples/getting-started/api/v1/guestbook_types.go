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

// GuestbookSpec defines the desired state of Guestbook.
type GuestbookSpec struct {
	// message is the greeting the Guestbook's ConfigMap holds.
	// +required
	// +kubebuilder:validation:MinLength=1
	Message string `json:"message"`
}

// GuestbookStatus defines the observed state of Guestbook.
type GuestbookStatus struct {
	// observedGeneration is the generation the controller last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled, as kstatus and kubectl wait read them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`

// Guestbook is the Schema for the guestbooks API.
type Guestbook struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Guestbook.
	// +required
	Spec GuestbookSpec `json:"spec"`

	// status defines the observed state of Guestbook.
	// +optional
	Status GuestbookStatus `json:"status,omitzero"`
}

// GetConditions returns the Guestbook's conditions, for tenon's conditions package.
func (g *Guestbook) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the Guestbook's conditions, for tenon's conditions package.
func (g *Guestbook) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// +kubebuilder:object:root=true

// GuestbookList contains a list of Guestbook.
type GuestbookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Guestbook `json:"items"`
}
