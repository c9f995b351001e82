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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Getter is an object whose status conditions can be read: typically a custom resource whose
// status has a Conditions []metav1.Condition field. The generation is the object's
// metadata.generation; every client.Object has it.
type Getter interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
}

// Setter is an object whose status conditions can be read and replaced.
//
// A custom resource implements it with two methods next to its type:
//
//	func (c *Cluster) GetConditions() []metav1.Condition  { return c.Status.Conditions }
//	func (c *Cluster) SetConditions(s []metav1.Condition) { c.Status.Conditions = s }
//
// Use [ForSlice] for a bare slice and [FromUnstructured] for an unstructured object.
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// Source is an object whose condition can be mirrored or aggregated into another object's
// conditions: a Getter with a name, for messages.
type Source interface {
	Getter
	GetName() string
}

// Orderer is implemented by objects that keep their conditions in an order of their own. Types
// it lists come first, in its order; others follow alphabetically. Without it the order is
// Ready first, then alphabetical. The order is a property of the type, so every writer that uses
// this package agrees on it.
type Orderer interface {
	ConditionOrder() []Type
}

// Type is a condition type, such as [Ready]. It must be a qualified name, as label keys are:
// an optional DNS subdomain prefix and a slash, then at most 63 characters of alphanumerics,
// '-', '_' and '.', starting and ending with an alphanumeric; and at most 316 characters in all,
// which a custom resource's schema for metav1.Condition requires.
//
// Declare your own types as constants of this type, so that a type can never be passed where a
// reason is expected:
//
//	const DNSReady conditions.Type = "DNSReady"
type Type string

// Reason is a condition reason: a CamelCase word such as [ReasonSucceeded], at most 1024
// characters, starting with a letter and containing only letters, digits, '_', ',' and ':'.
// Use [ReasonFrom] to derive one from arbitrary text.
type Reason string

// Standard condition types.
const (
	// Ready is the summary condition: True when the object is fully reconciled and working.
	// `kubectl wait --for=condition=Ready` waits for it.
	Ready Type = "Ready"

	// Reconciling is True while the controller is working towards the desired state (kstatus
	// reports the object InProgress). It is negative polarity: True means not done.
	Reconciling Type = "Reconciling"

	// Stalled is True when the controller cannot make progress without outside help, such as
	// an invalid spec or missing credentials (kstatus reports the object Failed). Negative
	// polarity.
	Stalled Type = "Stalled"

	// Deleting is True while finalizers clean up after the object's deletion; its reason and
	// message say what cleanup is waiting for. Negative polarity.
	Deleting Type = "Deleting"

	// Available is True when the object's service is available, which may be before every
	// part of it is Ready.
	Available Type = "Available"

	// Progressing is True while a rollout or other change is being carried out.
	Progressing Type = "Progressing"

	// Degraded is True when the object works with reduced capacity or function. Negative
	// polarity.
	Degraded Type = "Degraded"
)

// Standard reasons.
const (
	// ReasonSucceeded means the condition's work has been done successfully.
	ReasonSucceeded Reason = "Succeeded"

	// ReasonProgressing means work is under way and expected to finish without intervention.
	ReasonProgressing Reason = "Progressing"

	// ReasonFailed means an attempt failed; the message says why.
	ReasonFailed Reason = "Failed"

	// ReasonNotObserved means the state is unknown: a dependent or mirrored condition is missing,
	// or it was computed for an older generation than the current one.
	ReasonNotObserved Reason = "NotObserved"
)
