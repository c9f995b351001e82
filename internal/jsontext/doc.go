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

// Package jsontext reads and writes JSON text as encoding/json does, value for value and byte
// for byte, for the JSON values tenon handles on every write: managedFields' field sets and
// their keys (Decode, DecodeObject), and request bodies (Marshal). It does without
// encoding/json's reflection and the second pass it makes to validate, and hands whatever is
// not plain to encoding/json itself: a string with escapes or bytes beyond ASCII, a value of a
// type JSON has no place for. Its tests compare both on random and fuzzed input.
package jsontext
