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

// Package desired builds the objects a Cluster wants: its ConfigMap, its entry in the directory
// namespace, its two Services and its StatefulSet, from the Cluster's spec alone.
//
// It holds no client and imports nothing of tenon's: the controller applies what it returns
// (internal/controller), and the benchmarks' floor operator, written with controller-runtime
// alone (lab/cmd/floor), creates and updates the same objects, so that the two are compared on
// the same work.
package desired
