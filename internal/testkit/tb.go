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

package testkit

import (
	"context"
	"testing"
)

// TB is the part of testing.TB that tenon's test kit uses: *testing.T, *testing.B and
// *testing.F satisfy it, and so does Ginkgo v2's GinkgoT(), without the GinkgoTB() wrapper.
// testing/faults, testing/reconciletest and testing/testenv each export it as their TB.
type TB interface {
	// Helper marks the caller as a test helper.
	Helper()
	// Name returns the name of the running test.
	Name() string
	// Context returns a context that is canceled just before the test's cleanups run.
	Context() context.Context
	// Cleanup registers a function to run when the test and its subtests end.
	Cleanup(func())
	// Failed reports whether the test has failed.
	Failed() bool
	// Logf records a message in the test's log.
	Logf(format string, args ...any)
	// Errorf records an error in the test's log and marks the test failed; the test goes on.
	Errorf(format string, args ...any)
	// Fatalf records an error in the test's log, marks the test failed and stops it.
	Fatalf(format string, args ...any)
}

var _ TB = testing.TB(nil)
