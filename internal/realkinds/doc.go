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

// Package realkinds gives tenon's randomized tests the kinds operator authors point tenon at:
// Kubernetes' own (Node, Pod, Deployment, StatefulSet, Service, ConfigMap, Secret, Job) and
// custom resources of other projects (Cluster API, cert-manager, Gateway API, Flux, Kueue,
// KEDA), whose CRDs are copied into crds/ by hack/realkinds. A test installs the CRDs, creates a
// [Kind]'s seed object, loads the kind's schema from the API server's OpenAPI v3 document
// ([Load]) and draws values and edits from it ([Gen]): list types and their keys, map types,
// int-or-string, quantities and timestamps the API server normalizes, defaulted fields,
// preserved unknown fields, embedded resources and condition lists whose items carry fields of
// their own. A test is a proof only of the space it draws from; this package makes that space the
// one users live in.
package realkinds
