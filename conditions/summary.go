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

package conditions

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/internal/conditionrules"
)

// Option configures [Summary], [Aggregate] and [Mirror]: [NegativePolarity], [IgnoreIfMissing],
// [TrueReason] and [Fallback]. An option that does not apply to a function is ignored by it.
type Option interface {
	apply(*options)
}

type options struct {
	negativePolarity []Type
	ignoreIfMissing  []Type
	trueReason       Reason
	trueMessage      string
	fallback         *metav1.Condition
}

// NegativePolarity lists condition types for which False is the healthy status, in addition to
// the standard ones: Reconciling, Stalled, Deleting and Degraded. It applies to the dependents
// and sources and to the target alike: a summary into a negative-polarity type is False when
// healthy. Several NegativePolarity options add up.
type NegativePolarity []Type

func (n NegativePolarity) apply(o *options) { o.negativePolarity = append(o.negativePolarity, n...) }

// IgnoreIfMissing lists dependents of a [Summary] that count as healthy while absent, such as
// conditions of an optional feature. Any other missing dependent makes the summary Unknown.
type IgnoreIfMissing []Type

func (i IgnoreIfMissing) apply(o *options) { o.ignoreIfMissing = append(o.ignoreIfMissing, i...) }

// TrueReason sets the reason and message of a healthy [Summary] or [Aggregate] (True, or False
// for a negative-polarity target). Without it the reason is [ReasonSucceeded] and the message
// empty.
type TrueReason struct {
	// Reason is the reason of a healthy summary.
	Reason Reason
	// Message is the message of a healthy summary.
	Message string
}

func (t TrueReason) apply(o *options) { o.trueReason, o.trueMessage = t.Reason, t.Message }

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.trueReason == "" {
		o.trueReason = ReasonSucceeded
	}
	return o
}

func (o *options) negative(t Type) bool {
	return conditionrules.NegativePolarity(t) || slices.Contains(o.negativePolarity, t)
}

// status returns the status of a summary of type t whose worst dependent is h: the polarity of
// t decides which of True and False is healthy.
func (o *options) status(t Type, h health) metav1.ConditionStatus {
	switch {
	case h == unknown:
		return metav1.ConditionUnknown
	case (h == healthy) != o.negative(t):
		return metav1.ConditionTrue
	default:
		return metav1.ConditionFalse
	}
}

// health is how one dependent counts towards a summary. The order is from best to worst.
type health int

const (
	healthy health = iota
	unknown
	unhealthy
)

// assess classifies c (nil when missing) for a summary of an object at generation gen.
func (o *options) assess(t Type, c *metav1.Condition, gen int64) health {
	switch {
	case c == nil:
		if slices.Contains(o.ignoreIfMissing, t) {
			return healthy
		}
		return unknown
	case stale(c, gen):
		return unknown // computed for an older spec: its status may no longer hold
	case c.Status == metav1.ConditionUnknown:
		return unknown
	case (c.Status == metav1.ConditionTrue) != o.negative(t):
		return healthy
	default:
		return unhealthy
	}
}

// Summary computes a condition of type t that summarises the dependents of obj, which are
// conditions of obj, taking polarity into account. Each dependent is
//
//   - healthy when True, or False for a negative-polarity type such as Degraded (see
//     [NegativePolarity]);
//   - unknown when Unknown, missing (unless listed in [IgnoreIfMissing]) or computed for an
//     older generation than obj's;
//   - unhealthy otherwise.
//
// The summary is healthy when every dependent is, unhealthy when any is, and Unknown otherwise.
// Its status follows the polarity of t, as it does for a dependent: for a positive type such as
// Ready, healthy is True and unhealthy False; for a negative type (Degraded, or one listed in
// [NegativePolarity]), healthy is False and unhealthy True. So a summary can feed another:
// Degraded summarised from the replicas' Degraded is True while a replica is degraded, and Ready
// summarised from that Degraded is then False.
//
// The reason is that of the worst dependent, the first in dependents order among the equally
// bad; the message lists every dependent that is not healthy, worst first, as
// "Type: message". A healthy summary has reason [ReasonSucceeded] unless [TrueReason] says
// otherwise. Summary does not modify obj; set the result with [Set]:
//
//	conditions.Set(cluster, conditions.Summary(cluster, conditions.Ready, []conditions.Type{ConfigReady, DNSReady}))
func Summary(obj Getter, t Type, dependents []Type, opts ...Option) metav1.Condition {
	o := newOptions(opts)
	gen := obj.GetGeneration()

	type finding struct {
		t Type
		c *metav1.Condition
		h health
	}
	var bad []finding
	for _, d := range dependents {
		if d == t {
			continue
		}
		c := Get(obj, d)
		if h := o.assess(d, c, gen); h != healthy {
			bad = append(bad, finding{t: d, c: c, h: h})
		}
	}
	if len(bad) == 0 {
		return newCondition(t, o.status(t, healthy), o.trueReason, o.trueMessage)
	}
	slices.SortStableFunc(bad, func(a, b finding) int { return int(b.h - a.h) })

	parts := make([]string, len(bad))
	for i, f := range bad {
		parts[i] = string(f.t) + ": " + describe(f.c, gen)
	}
	worst := bad[0]
	reason := ReasonNotObserved
	if worst.c != nil && worst.c.Reason != "" && !stale(worst.c, gen) {
		reason = Reason(worst.c.Reason)
	}
	return newCondition(t, o.status(t, worst.h), reason, strings.Join(parts, "; "))
}

// describe says what is wrong with condition c (nil when missing) of an object at generation gen.
func describe(c *metav1.Condition, gen int64) string {
	switch {
	case c == nil:
		return "not reported"
	case stale(c, gen):
		return fmt.Sprintf("computed for generation %d, current is %d", c.ObservedGeneration, gen)
	case c.Message == "":
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
	return c.Message
}

// stale reports whether c was computed for a generation older than gen. A condition without an
// observed generation (0) is not known to be stale.
func stale(c *metav1.Condition, gen int64) bool {
	return c.ObservedGeneration > 0 && c.ObservedGeneration < gen
}
