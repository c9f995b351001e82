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

// Package threeway is the engine of patch.Helper: the three-way merge of a reconcile's changes
// onto the latest object, and the guarded JSON Patch that writes the result.
//
// [Merger] carries the changes a reconcile made (from the object it read to the object it wants)
// over to the latest object; [Differ] computes the [Request] that writes the result, each [Op]
// guarded by a test of what the writer expects to find. patch.Helper's documentation states the
// contract the two keep between them: fields this reconcile did not change keep the latest
// object's values; lists, conditions another writer owns and whole objects added are guarded, so
// that another writer's change since the read is a rejected request instead of lost data.
//
// FuzzMergeAndDiff checks the pair: from random objects and random changes by the controller and
// by others, the requests apply to the object they were computed for, produce exactly the merge,
// and keep every field each writer changed.
package threeway
