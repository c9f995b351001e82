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

package matchers

import (
	"fmt"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/tenon-dev/tenon/testing/reconciletest"
)

// BeDone succeeds when a reconcile (a [reconciletest.Step], or the *Step Recorder.Last returns)
// returned neither an error nor a requeue: the reconciler has no reason to run again until
// something changes. A reconciler that polls at steady state is stable without being done; see
// [reconciletest.Step.Stable].
func BeDone() types.GomegaMatcher {
	return &stepMatcher{expectation: "be done", check: func(s reconciletest.Step) (bool, error) { return s.Err == nil && !s.Requeued(), nil }}
}

// BeRequeued succeeds when a reconcile returned no error and asked to be requeued, after any
// delay.
func BeRequeued() types.GomegaMatcher {
	return &stepMatcher{expectation: "requeue", check: func(s reconciletest.Step) (bool, error) { return s.Err == nil && s.Requeued(), nil }}
}

// BeRequeuedAfter succeeds when a reconcile returned no error and a RequeueAfter that matches
// expected: a time.Duration it must equal, or a matcher, such as
// BeNumerically("~", time.Minute, 6*time.Second) for a jittered poll.
func BeRequeuedAfter(expected any) types.GomegaMatcher {
	m, isMatcher := expected.(types.GomegaMatcher)
	desc := fmt.Sprint(expected)
	switch {
	case isMatcher:
		desc = "a delay that matches"
	default:
		m = gomega.Equal(expected)
		if d, ok := expected.(time.Duration); ok {
			desc = d.String()
		}
	}
	return &stepMatcher{expectation: "requeue after " + desc, check: func(s reconciletest.Step) (bool, error) {
		if s.Err != nil || s.Result.RequeueAfter <= 0 {
			return false, nil
		}
		return m.Match(s.Result.RequeueAfter)
	}}
}

// BeTerminal succeeds when a reconcile returned a terminal error (reconcile.TerminalError), which
// controller-runtime logs once and does not retry.
func BeTerminal() types.GomegaMatcher {
	return &stepMatcher{expectation: "fail with a terminal error", check: func(s reconciletest.Step) (bool, error) { return s.Terminal(), nil }}
}

// HaveFailed succeeds when a reconcile returned an error that is not terminal, which
// controller-runtime retries with backoff. Assert on the error itself with
// Expect(step.Err).To(MatchError(...)).
func HaveFailed() types.GomegaMatcher {
	return &stepMatcher{expectation: "fail with an error that is retried", check: func(s reconciletest.Step) (bool, error) {
		return s.Err != nil && !s.Terminal(), nil
	}}
}

// stepMatcher is the GomegaMatcher behind the matchers of a reconcile's outcome.
type stepMatcher struct {
	expectation string
	check       func(reconciletest.Step) (bool, error)
}

// Match implements types.GomegaMatcher.
func (m *stepMatcher) Match(actual any) (bool, error) {
	s, err := stepOf(actual)
	if err != nil {
		return false, err
	}
	return m.check(s)
}

// FailureMessage implements types.GomegaMatcher.
func (m *stepMatcher) FailureMessage(actual any) string {
	return m.message(actual, " to ")
}

// NegatedFailureMessage implements types.GomegaMatcher.
func (m *stepMatcher) NegatedFailureMessage(actual any) string {
	return m.message(actual, " not to ")
}

func (m *stepMatcher) message(actual any, to string) string {
	s, err := stepOf(actual)
	if err != nil {
		return fmt.Sprintf("Expected a reconcile%s%s\nbut %v", to, m.expectation, err)
	}
	return fmt.Sprintf("Expected the reconcile of %s%s%s\nbut it returned %s\n  %s", s.Request, to, m.expectation, s.Outcome(), s)
}

func stepOf(actual any) (reconciletest.Step, error) {
	switch s := actual.(type) {
	case reconciletest.Step:
		return s, nil
	case *reconciletest.Step:
		if s != nil {
			return *s, nil
		}
		return reconciletest.Step{}, fmt.Errorf("there is no reconcile to match yet (a nil *reconciletest.Step, as Recorder.Last returns before the first)")
	}
	return reconciletest.Step{}, fmt.Errorf("expected a reconciletest.Step, got %T", actual)
}
