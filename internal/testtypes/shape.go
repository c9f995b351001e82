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

package testtypes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShapeSpec has a field of every shape the patch package's guarantee table distinguishes, for
// the randomized tests that check the table against the API server.
type ShapeSpec struct {
	// Text is a scalar string.
	// +optional
	Text string `json:"text,omitempty"`

	// Count is a scalar number.
	// +optional
	Count int64 `json:"count,omitempty"`

	// Enabled is a scalar bool.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Labels is a granular map: server-side apply owns it key by key.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Selector is an atomic map, as a Service's selector is: owned and replaced as a whole.
	// +optional
	// +mapType=atomic
	Selector map[string]string `json:"selector,omitempty"`

	// Nested is a granular struct.
	// +optional
	Nested *ShapeNested `json:"nested,omitempty"`

	// Atomic is an atomic struct: owned and replaced as a whole.
	// +optional
	// +structType=atomic
	Atomic *ShapeNested `json:"atomic,omitempty"`

	// Ports is a list of type map keyed by name, as a Service's ports are (keyed by port).
	// +optional
	// +listType=map
	// +listMapKey=name
	Ports []ShapePort `json:"ports,omitempty"`

	// Tags is a list of type set.
	// +optional
	// +listType=set
	Tags []string `json:"tags,omitempty"`

	// Args is an atomic list, as a container's args are.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// Steps is a list of objects without a list type, which a CRD treats as atomic.
	// +optional
	Steps []ShapeStep `json:"steps,omitempty"`

	// Groups is a granular map of granular structs.
	// +optional
	Groups map[string]ShapeNested `json:"groups,omitempty"`
}

// ShapeNested is a struct of scalars and a map.
type ShapeNested struct {
	// A is a scalar.
	// +optional
	A string `json:"a,omitempty"`

	// B is a scalar.
	// +optional
	B string `json:"b,omitempty"`

	// Extra is a granular map inside a struct.
	// +optional
	Extra map[string]string `json:"extra,omitempty"`
}

// ShapePort is an element of a list of type map.
type ShapePort struct {
	// Name is the list map key.
	Name string `json:"name"`

	// Port is a number.
	// +optional
	Port int32 `json:"port,omitempty"`

	// Protocol is a string.
	// +optional
	Protocol string `json:"protocol,omitempty"`
}

// ShapeStep is an element of a list without a list type.
type ShapeStep struct {
	// Name names the step.
	// +optional
	Name string `json:"name,omitempty"`

	// Value is a scalar.
	// +optional
	Value string `json:"value,omitempty"`

	// TimeoutSeconds is an optional number, as a toleration's tolerationSeconds is.
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
}

// ShapeStatus has the status shapes of the guarantee table.
type ShapeStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions is a list of type map keyed by type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Phase is a scalar.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Counters is a granular map in the status.
	// +optional
	Counters map[string]int64 `json:"counters,omitempty"`

	// Members is a list of type map in the status, to which several writers add elements.
	// +optional
	// +listType=map
	// +listMapKey=name
	Members []ShapePort `json:"members,omitempty"`

	// Notes is a list without a list type in the status.
	// +optional
	Notes []string `json:"notes,omitempty"`
}

// Shape is a namespaced test resource with a status subresource and a field of every shape
// that the patch package's guarantees distinguish.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type Shape struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ShapeSpec `json:"spec,omitempty"`
	// +optional
	Status ShapeStatus `json:"status,omitempty"`
}

// GetConditions returns the Shape's conditions.
func (s *Shape) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the Shape's conditions.
func (s *Shape) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (s *Shape) GetObservedGeneration() int64 { return s.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (s *Shape) SetObservedGeneration(g int64) { s.Status.ObservedGeneration = g }

// ShapeList is a list of Shapes.
//
// +kubebuilder:object:root=true
type ShapeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shape `json:"items"`
}
