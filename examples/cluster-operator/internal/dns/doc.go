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

// Package dns keeps a Cluster's DNS record at the DNS provider, for the controller: [Provider]
// gives access to the provider's API with the token of a Secret, read on every use, and
// [ClusterRecord] is the record as an external.Provider, which the controller's
// external.Resource drives (it creates the record once, polls it until it is in sync, puts it
// back when it drifts, and deletes it in the finalizer).
//
// The API is the one of internal/clouddns, a stand-in for a cloud provider's SDK: with a real
// provider, this package is where its SDK is called.
package dns
