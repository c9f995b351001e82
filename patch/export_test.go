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

package patch

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/managedfields"
)

// CountSchemaReads makes a count the times its proofs read the built-in kinds' schemas, and
// returns the count.
func CountSchemaReads(a *Applier) *atomic.Int64 {
	var n atomic.Int64
	read := a.types
	a.types = func() managedfields.TypeConverter { n.Add(1); return read() }
	return &n
}
