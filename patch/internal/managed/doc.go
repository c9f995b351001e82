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

// Package managed is the proof engine of patch.Applier: it reads an object's managedFields and
// proves, from them and the object, that a server-side apply would change nothing.
//
// [UpToDate] proves that an apply of a desired object by a field manager would neither change a
// value nor take or give up ownership of a field, so that the Applier may skip it; [FixedPoint]
// proves that the API server's answer to an apply is what applying the same object again would
// leave, so that the Applier's memory of the apply may skip the next one. Both are
// conservative: what they cannot prove (a value the server normalises, a default inside a value
// owned as a whole, an empty map the object lacks) is false, and the caller applies. [EntriesOf]
// reads the managedFields entries once for both; [DeclaredFields] and [DeclaredMetadata] compute
// the field set an apply declares from the kind's schema, where it is known.
//
// The proofs are checked against the API server by the randomized tests of package patch, on
// Kubernetes' own kinds and other projects' CRDs, each skip confirmed by a dry run.
package managed
