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
	"strings"

	"github.com/onsi/gomega/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

// conditionOptions are the refinements of [HaveCondition]. The zero value checks only type and
// status.
type conditionOptions struct {
	reason            conditions.Reason
	messageContaining []string
	currentGeneration bool
}

// ConditionOption refines [HaveCondition]: [WithReason], [WithMessage] and [CurrentGeneration].
type ConditionOption interface {
	applyToCondition(*conditionOptions)
}

// WithReason requires the condition's reason to be this one:
// matchers.WithReason(conditions.ReasonSucceeded), or matchers.WithReason("QuotaExceeded").
type WithReason conditions.Reason

func (r WithReason) applyToCondition(o *conditionOptions) { o.reason = conditions.Reason(r) }

// WithMessage requires the condition's message to contain this text; given several times, each
// of them.
type WithMessage string

func (m WithMessage) applyToCondition(o *conditionOptions) {
	o.messageContaining = append(o.messageContaining, string(m))
}

// CurrentGeneration requires the condition's observedGeneration to be the object's
// metadata.generation: the controller has reported on the latest spec.
type CurrentGeneration struct{}

func (CurrentGeneration) applyToCondition(o *conditionOptions) { o.currentGeneration = true }

var (
	_ ConditionOption = WithReason("")
	_ ConditionOption = WithMessage("")
	_ ConditionOption = CurrentGeneration{}
)

// HaveCondition succeeds when the actual value has a condition of type t with status, and,
// with options, the reason of [WithReason], a message containing the text of [WithMessage], and
// an observedGeneration equal to its metadata.generation ([CurrentGeneration]):
//
//	g.Expect(cluster).To(matchers.HaveCondition(conditions.Ready, metav1.ConditionFalse,
//		matchers.WithReason("QuotaExceeded"), matchers.WithMessage("cpu"), matchers.CurrentGeneration{}))
//
// The actual value is an object with conditions (a [conditions.Getter]), an
// *unstructured.Unstructured with status.conditions, or a bare []metav1.Condition, which has no
// generation to check. Anything else is an error. The failure message says which part did not
// match and lists the object's conditions.
//
// A finalizer that reports on its cleanup is checked with the Deleting condition, as in
// HaveCondition(conditions.Deleting, metav1.ConditionTrue, matchers.WithReason(...)); add
// HaveField("DeletionTimestamp", Not(BeNil())) when the test must also prove the object is being
// deleted.
func HaveCondition(t conditions.Type, status metav1.ConditionStatus, opts ...ConditionOption) types.GomegaMatcher {
	var o conditionOptions
	for _, opt := range opts {
		opt.applyToCondition(&o)
	}
	return &matcher{
		expectation: "have condition " + conditionDesc(t, status, o),
		check:       func(s *subject) (bool, string, error) { return checkCondition(s, t, status, o) },
		details:     (*subject).conditionTable,
	}
}

// BeReady succeeds when the actual object is ready by [conditions.IsReady]: its Ready condition
// is True and was observed at the current generation, and so was its status.observedGeneration,
// if it has one. `kubectl wait --for=condition=Ready` (1.37) makes the same generation check.
func BeReady() types.GomegaMatcher {
	return &matcher{
		expectation: "be Ready",
		check: func(s *subject) (bool, string, error) {
			g, err := s.conditionsGetter()
			if err != nil {
				return false, "", err
			}
			// conditions.IsReady checks status.observedGeneration only for types with a getter
			// method; check it for unstructured objects and plain status structs too.
			gen := g.GetGeneration()
			var observed int64
			hasObserved := false
			if s.obj != nil {
				observed, hasObserved = conditions.GetObservedGeneration(s.obj)
			}
			if conditions.IsReady(g) && (!hasObserved || observed >= gen) {
				return true, "", nil
			}
			c := conditions.Get(g, conditions.Ready)
			switch {
			case c == nil:
				return false, "it has no Ready condition", nil
			case c.Status != metav1.ConditionTrue:
				return false, "Ready is " + statusDesc(c), nil
			case c.ObservedGeneration < gen:
				return false, fmt.Sprintf("Ready is True for generation %d, not for the current generation %d", c.ObservedGeneration, gen), nil
			}
			return false, fmt.Sprintf("status.observedGeneration %d lags metadata.generation %d", observed, gen), nil
		},
		details: (*subject).conditionTable,
	}
}

func checkCondition(s *subject, t conditions.Type, status metav1.ConditionStatus, o conditionOptions) (bool, string, error) {
	g, err := s.conditionsGetter()
	if err != nil {
		return false, "", err
	}
	if o.currentGeneration && s.bare {
		return false, "", fmt.Errorf("a bare condition list has no generation to compare observedGeneration with")
	}
	c := conditions.Get(g, t)
	switch {
	case c == nil:
		return false, fmt.Sprintf("it has no %s condition", t), nil
	case c.Status != status:
		return false, fmt.Sprintf("%s is %s", t, statusDesc(c)), nil
	case o.reason != "" && c.Reason != string(o.reason):
		return false, fmt.Sprintf("%s has reason %s", t, c.Reason), nil
	case !containsAll(c.Message, o.messageContaining):
		return false, fmt.Sprintf("%s has message %q", t, c.Message), nil
	case o.currentGeneration && c.ObservedGeneration != g.GetGeneration():
		return false, fmt.Sprintf("%s was observed at generation %d, and the object is at generation %d", t, c.ObservedGeneration, g.GetGeneration()), nil
	}
	return true, "", nil
}

// conditionDesc is "Ready=True with reason Succeeded, a message containing "x", observed at the
// current generation".
func conditionDesc(t conditions.Type, status metav1.ConditionStatus, o conditionOptions) string {
	desc := fmt.Sprintf("%s=%s", t, status)
	var parts []string
	if o.reason != "" {
		parts = append(parts, "reason "+string(o.reason))
	}
	for _, m := range o.messageContaining {
		parts = append(parts, fmt.Sprintf("a message containing %q", m))
	}
	if len(parts) > 0 {
		desc += " with " + strings.Join(parts, " and ")
	}
	if o.currentGeneration {
		desc += ", observed at the current generation"
	}
	return desc
}

// statusDesc is "False (Failed: quota exceeded)".
func statusDesc(c *metav1.Condition) string {
	desc := string(c.Status)
	if c.Reason == "" && c.Message == "" {
		return desc
	}
	detail := c.Reason
	if c.Message != "" {
		detail = strings.TrimPrefix(detail+": "+oneLine(c.Message), ": ")
	}
	return desc + " (" + detail + ")"
}

// containsAll reports whether message contains each of texts.
func containsAll(message string, texts []string) bool {
	for _, t := range texts {
		if !strings.Contains(message, t) {
			return false
		}
	}
	return true
}
