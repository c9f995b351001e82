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
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tenon-dev/tenon/conditions"
)

// BeCurrent succeeds when kstatus would report the actual object Current (see
// [conditions.Compute]): its status describes its current spec, nothing is in progress or
// stalled, and its Ready condition, when it has one, is True. This is what Flux and kpt wait
// for.
func BeCurrent() types.GomegaMatcher {
	return HaveKStatus(conditions.StatusCurrent)
}

// HaveKStatus succeeds when [conditions.Compute] reports status for the actual object: Current,
// InProgress, Failed or Terminating, as kstatus-based tools (sigs.k8s.io/cli-utils/pkg/kstatus)
// show it for a custom resource. The failure message gives kstatus's message.
func HaveKStatus(status conditions.Status) types.GomegaMatcher {
	return &matcher{
		expectation: "be " + string(status) + " by kstatus",
		check: func(s *subject) (bool, string, error) {
			if s.runtime == nil {
				return false, "", errors.New("kstatus needs an object, not a bare condition list")
			}
			res, err := conditions.Compute(s.runtime)
			if err != nil {
				return false, "", err
			}
			why := "kstatus computes " + string(res.Status)
			if res.Message != "" {
				why += ": " + res.Message
			}
			return res.Status == status, why, nil
		},
		details: (*subject).conditionTable,
	}
}

// BeCompliant succeeds when the actual object's status follows the condition convention that
// kstatus-based tools and `kubectl wait` rely on, by [conditions.Check]: valid, unique conditions,
// a Ready condition, a status.observedGeneration, and Reconciling or Stalled whenever Ready is not
// True. The failure message lists every rule the object breaks.
func BeCompliant() types.GomegaMatcher {
	return &matcher{
		expectation: "follow the status condition convention",
		check: func(s *subject) (bool, string, error) {
			if s.runtime == nil {
				return false, "", errors.New("the convention applies to objects, not to a bare condition list")
			}
			err := conditions.Check(s.runtime)
			if err == nil {
				return true, "", nil
			}
			if !errors.Is(err, conditions.ErrNotCompliant) {
				return false, "", err
			}
			return false, "it breaks it:\n" + indentRules(err), nil
		},
		details: (*subject).conditionTable,
	}
}

// indentRules lists the broken rules of a conditions.Check error, one a line.
func indentRules(err error) string {
	msg := err.Error()
	// Check's error is "<summary>: <Kind> <name>: rule 1: ...\nrule 3: ...".
	if i := strings.Index(msg, "rule "); i >= 0 {
		msg = msg[i:]
	}
	var b strings.Builder
	for line := range strings.SplitSeq(msg, "\n") {
		fmt.Fprintf(&b, "  - %s\n", line)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
