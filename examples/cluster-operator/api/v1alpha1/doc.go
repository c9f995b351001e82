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

// Package v1alpha1 contains API Schema definitions for the apps v1alpha1 API group: the Cluster,
// a replicated service whose status follows tenon's conditions convention (Ready summarising
// ConfigReady, WorkloadReady and DNSReady; Reconciling, Stalled and Deleting as kstatus reads
// them) and whose spec the API server validates with OpenAPI and CEL rules.
//
// +kubebuilder:object:generate=true
// +groupName=apps.tenon.dev
package v1alpha1
