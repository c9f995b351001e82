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

// Package jsonvalue reads, compares and copies JSON values as runtime.DefaultUnstructuredConverter
// and the unstructured JSON decoder produce them: map[string]any, []any, string, bool, nil, int64
// and float64 (json.Number and other integer types are tolerated). It holds what the patch
// package's Helper and Applier and the three-way merge of package threeway share: equality that
// ignores the Go type of a number, copies that share nothing, members where a null or an empty
// list counts as missing (as the API server stores neither), JSON pointers, and a status's
// conditions read as a list keyed by type with every field each condition carries.
package jsonvalue
