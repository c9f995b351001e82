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

// Package micro holds the benchmark's micro-benchmarks (go test -bench): the condition setters
// and the patch helpers of tenon, apimachinery / controller-runtime, Flux and cluster-api, on
// the same object. Sub-benchmarks are named lib=<library>/op=<case>, so that
//
//	go tool benchstat -col /lib results.txt
//
// puts the libraries side by side, each compared with the first column: apimachinery's
// meta.SetStatusCondition for conditions, controller-runtime's controllerutil.CreateOrPatch for
// patches.
package micro
