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

	"github.com/onsi/gomega/types"
)

// matcher is the GomegaMatcher behind every matcher of this package: it understands the actual
// value, runs a check on it, and builds messages that say what was expected, why it did not
// hold, and what the object looks like.
type matcher struct {
	// expectation completes "Expected <object> to ...", such as "have condition Ready=True".
	expectation string
	// check reports whether s matches; why says what is different when it does not.
	check func(s *subject) (ok bool, why string, err error)
	// details renders what the messages show of s, such as its conditions.
	details func(s *subject) string

	s   *subject
	why string
}

var _ types.GomegaMatcher = (*matcher)(nil)

// Match implements types.GomegaMatcher.
func (m *matcher) Match(actual any) (bool, error) {
	s, err := subjectOf(actual)
	if err != nil {
		return false, fmt.Errorf("failed to check whether the value can %s: %w", m.expectation, err)
	}
	m.s = s
	ok, why, err := m.check(s)
	if err != nil {
		return false, fmt.Errorf("failed to check whether %s can %s: %w", s.desc, m.expectation, err)
	}
	m.why = why
	return ok, nil
}

// FailureMessage implements types.GomegaMatcher.
func (m *matcher) FailureMessage(any) string {
	return m.message(" to ", "but "+m.why)
}

// NegatedFailureMessage implements types.GomegaMatcher.
func (m *matcher) NegatedFailureMessage(any) string {
	return m.message(" not to ", "but it does")
}

func (m *matcher) message(to, but string) string {
	if m.s == nil {
		return "Expected an object" + to + m.expectation
	}
	msg := "Expected " + m.s.desc + to + m.expectation + "\n" + but + "\n"
	if m.details != nil {
		msg += m.details(m.s)
	}
	return msg
}
