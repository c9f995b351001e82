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

// Package conditionrules holds the rules about condition types that more than one of tenon's
// packages apply, written once: the order conditions are kept in (conditions.Set inserts by it,
// and patch.Helper merges by it) and the standard types of negative polarity (conditions'
// summaries and observe's Events read them). It is internal; the conditions package documents
// both rules for users.
package conditionrules
