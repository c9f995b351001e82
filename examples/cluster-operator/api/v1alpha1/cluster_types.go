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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

// Condition types of a Cluster, in addition to the standard Ready, Reconciling, Stalled and
// Deleting of the conditions package.
const (
	// ConfigReady is True when the cluster's ConfigMap is applied and its entry is published in
	// the directory namespace.
	ConfigReady conditions.Type = "ConfigReady"
	// WorkloadReady is True when the Service and StatefulSet are applied and every replica is
	// ready.
	WorkloadReady conditions.Type = "WorkloadReady"
	// DNSReady is True when the cluster's DNS record is in sync at the DNS provider.
	DNSReady conditions.Type = "DNSReady"
)

// DeletionPolicy says what happens to the cluster's DNS record when the Cluster is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the DNS record with the Cluster.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain keeps the DNS record when the Cluster is deleted.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// ClusterSpec defines the desired state of a Cluster: a replicated, quorum-based service.
type ClusterSpec struct {
	// Replicas is the number of members. A quorum needs an odd number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:validation:XValidation:rule="self % 2 == 1",message="replicas must be odd (1, 3, 5, 7 or 9) so that a quorum exists"
	// +kubebuilder:default=3
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Version is the version of the service to run, as MAJOR.MINOR.PATCH.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}$`
	// +kubebuilder:validation:MaxLength=14
	Version string `json:"version"`

	// DNSName is the name clients reach the cluster at, such as demo.clusters.example.com. It is
	// published at the DNS provider and cannot be changed: create a new Cluster instead.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\\\.)+[a-z]{2,63}$')",message="dnsName must be a lower-case, fully qualified DNS name such as demo.clusters.example.com"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="dnsName is immutable; create a new Cluster to change it"
	DNSName string `json:"dnsName"`

	// Config is configuration passed to every member through a ConfigMap.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 64 && size(self[k]) <= 1024)",message="config keys may be at most 64 and values at most 1024 characters long"
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// DeletionPolicy says what happens to the DNS record when the Cluster is deleted: Delete
	// (the default) removes it, Retain keeps it.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// ClusterStatus defines the observed state of a Cluster.
type ClusterStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the state of the cluster: Ready summarises ConfigReady, WorkloadReady
	// and DNSReady; Reconciling, Stalled and Deleting follow the kstatus convention.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// ReadyReplicas is the number of members that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Endpoint is where clients reach the cluster, once its DNS record is in sync.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
}

// Cluster is a replicated service: a StatefulSet with its ConfigMap and Service, an entry in the
// directory namespace, and a DNS record at an external provider.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cl
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the Cluster's conditions, for the conditions package.
func (c *Cluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the Cluster's conditions, for the conditions package.
func (c *Cluster) SetConditions(s []metav1.Condition) { c.Status.Conditions = s }

// ConditionOrder lists the Cluster's conditions in the order they read best: Ready, the
// conditions it summarises, then kstatus's Reconciling and Stalled, and Deleting.
func (c *Cluster) ConditionOrder() []conditions.Type {
	order := append([]conditions.Type{conditions.Ready}, DependentConditions()...)
	return append(order, conditions.Reconciling, conditions.Stalled, conditions.Deleting)
}

// DependentConditions are the conditions Ready summarises: one for each part of a Cluster.
func DependentConditions() []conditions.Type {
	return []conditions.Type{ConfigReady, WorkloadReady, DNSReady}
}

// GetObservedGeneration returns status.observedGeneration.
func (c *Cluster) GetObservedGeneration() int64 { return c.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (c *Cluster) SetObservedGeneration(g int64) { c.Status.ObservedGeneration = g }

// +kubebuilder:object:root=true

// ClusterList contains a list of Cluster.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}
