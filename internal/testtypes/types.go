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
	"path/filepath"
	"runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the test types.
	GroupVersion = schema.GroupVersion{Group: "test.tenon.dev", Version: "v1"}

	// SchemeBuilder registers the test types with a scheme.
	SchemeBuilder = k8sruntime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the test types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *k8sruntime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{}, &Gadget{}, &GadgetList{}, &Fixture{}, &FixtureList{}, &Shape{}, &ShapeList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// CRDDirectory returns the absolute path of the directory holding the generated CRD manifests,
// for testenv.Options.CRDDirectoryPaths.
func CRDDirectory() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "crd")
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Replicas is a number the tests change to bump metadata.generation.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Size is a free-form string.
	// +optional
	Size string `json:"size,omitempty"`

	// Color is a second free-form string, so concurrent writers can own different fields.
	// +optional
	Color string `json:"color,omitempty"`

	// Items is a list for tests of list merging.
	// +optional
	// +listType=set
	Items []string `json:"items,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the current state of the Widget.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Phase is a free-form status field.
	// +optional
	Phase string `json:"phase,omitempty"`

	// ReadyReplicas is a numeric status field.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// Widget is a namespaced test resource with a status subresource.
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

// GetConditions returns the Widget's conditions.
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

// Gadget is a namespaced test resource without a status subresource: its status is written
// together with its spec, and every write bumps metadata.generation.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec WidgetSpec `json:"spec,omitempty"`
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Gadget's conditions.
func (g *Gadget) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the Gadget's conditions.
func (g *Gadget) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// GadgetList is a list of Gadgets.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}

// Fixture is a cluster-scoped test resource with a status subresource.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type Fixture struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec WidgetSpec `json:"spec,omitempty"`
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Fixture's conditions.
func (f *Fixture) GetConditions() []metav1.Condition { return f.Status.Conditions }

// SetConditions replaces the Fixture's conditions.
func (f *Fixture) SetConditions(c []metav1.Condition) { f.Status.Conditions = c }

// FixtureList is a list of Fixtures.
//
// +kubebuilder:object:root=true
type FixtureList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Fixture `json:"items"`
}
