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

// Package clouddns is the client of a cloud DNS API: the example operator creates a DNS record
// for every Cluster through it and deletes the record in a finalizer, the kind of external
// resource the garbage collector knows nothing about. It stands in for a cloud provider's SDK;
// with a real provider, use its SDK instead.
//
// The API behaves like a real provider where it matters to an operator: requests need a bearer
// token; record changes are accepted at once but take a while to propagate (a record is PENDING,
// then INSYNC; a deleted record is DELETING, then gone); creating a record that exists is a
// conflict. Package clouddnstest serves it, for tests.
package clouddns
