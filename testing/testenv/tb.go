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

import "github.com/tenon-dev/tenon/internal/testkit"

// TB is the interface that *testing.T, *testing.B, *testing.F and Ginkgo v2's GinkgoT() satisfy
// (GinkgoTB() is not needed). It is the same type as
// [github.com/tenon-dev/tenon/testing/faults.TB] and
// [github.com/tenon-dev/tenon/testing/reconciletest.TB], so one t passes to all three packages: a
// helper that takes a testenv.TB can pass its t on to the other two.
//
// It requires these methods of testing.TB, which a TB of your own must implement:
//
//	Helper()
//	Name() string
//	Context() context.Context
//	Cleanup(func())
//	Failed() bool
//	Logf(format string, args ...any)
//	Errorf(format string, args ...any)
//	Fatalf(format string, args ...any)
//
// The environment's per-test helpers ([Environment.Namespace], [Environment.NewManager],
// [StartManager], [Environment.NewUser], [User.NewManager]) use Helper, Name, Context, Cleanup,
// Errorf and Fatalf. They register their cleanups with Cleanup, so what they create lives as
// long as the test (or, from Ginkgo, the node) that asked for it.
type TB = testkit.TB
