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

package testenv

import (
	"context"
	"testing"
)

// TB is the part of testing.TB that the environment's per-test helpers ([Environment.Namespace],
// [Environment.NewManager], [StartManager], [Environment.NewUser], [User.NewManager]) use.
// *testing.T, *testing.B and *testing.F satisfy it, and so does Ginkgo's GinkgoT(): a Ginkgo
// suite passes GinkgoT() where a plain test passes t, without the GinkgoTB() wrapper.
//
// The helpers register their cleanups with Cleanup, so what they create lives as long as the
// test (or, from Ginkgo, the node) that asked for it.
type TB interface {
	Helper()
	Name() string
	Context() context.Context
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

var _ TB = testing.TB(nil)
