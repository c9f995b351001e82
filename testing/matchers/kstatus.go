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
	"strings"

	"github.com/onsi/gomega/types"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// HaveKStatus succeeds when [conditions.ComputeKStatus] reports status for the actual object: Current,
// InProgress, Failed or Terminating, as kstatus-based tools (sigs.k8s.io/cli-utils/pkg/kstatus)
// show it for a custom resource. HaveKStatus(conditions.KStatusCurrent) is what Flux and kpt wait
// for: the status describes the current spec, nothing is in progress or stalled, and the Ready
// condition, when there is one, is True. The failure message gives kstatus's message.
func HaveKStatus(status conditions.KStatus) types.GomegaMatcher {
	return &matcher{
		expectation: "be " + string(status) + " by kstatus",
		check: func(s *subject) (bool, string, error) {
			if s.runtime == nil {
				return false, "", errors.New("kstatus needs an object, not a bare condition list")
			}
			got, message, err := kstatusOf(s.runtime)
			if err != nil {
				return false, "", err
			}
			why := "kstatus computes " + string(got)
			if message != "" {
				why += ": " + message
			}
			return got == status, why, nil
		},
		details: (*subject).conditionTable,
	}
}

// kstatusOf returns obj's kstatus state and message, by [conditions.ComputeKStatus].
func kstatusOf(obj runtime.Object) (conditions.KStatus, string, error) {
	return conditions.ComputeKStatus(obj)
}

// BeCompliant succeeds when the actual object's status follows the condition convention that
// kstatus-based tools and `kubectl wait --for=condition=Ready` rely on, so that they read it as
// the controller means it. Use it in tests, after a reconcile, to catch a status that tools
// would misread. The rules:
//
//  1. every condition is valid (see [conditions.Validate]) and no type appears twice;
//  2. there is a Ready condition;
//  3. status.observedGeneration exists; no condition, nor status.observedGeneration, claims a
//     generation newer than metadata.generation; and when Ready is True for the current
//     generation, status.observedGeneration is current too (otherwise kstatus reports the object
//     InProgress while Ready says it is done);
//  4. when Ready is not True (and the object is not being deleted), Reconciling or Stalled is
//     True: without them kstatus falls back to Ready and reports InProgress, and can never tell
//     a controller that makes progress from one that is stuck (see [conditions.ComputeKStatus]);
//  5. Ready True does not coexist with a True Stalled, nor Reconciling True with Stalled True
//     (kstatus would report whichever comes first in the list). Ready and Reconciling may both
//     be True: an object can serve while it rolls out a change or retries a failed step.
//
// A status that lags a spec change the controller has not reconciled yet (Ready and
// status.observedGeneration both at an older generation) follows the convention: it is what
// every object looks like between a change and the next reconcile.
//
// The failure message lists every rule the object breaks.
func BeCompliant() types.GomegaMatcher {
	return &matcher{
		expectation: "follow the status condition convention",
		check: func(s *subject) (bool, string, error) {
			if s.runtime == nil {
				return false, "", errors.New("the convention applies to objects, not to a bare condition list")
			}
			problems, err := compliance(s.runtime)
			if err != nil {
				return false, "", err
			}
			if len(problems) == 0 {
				return true, "", nil
			}
			return false, "it breaks it:\n  - " + strings.Join(problems, "\n  - "), nil
		},
		details: (*subject).conditionTable,
	}
}
