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
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fallback is the condition [Mirror] returns when the source has none of the mirrored type. Its
// Type is ignored. Without it the fallback is Unknown with reason [ReasonNotObserved] and a
// message naming the source.
type Fallback metav1.Condition

func (f Fallback) apply(o *options) {
	c := metav1.Condition(f)
	o.fallback = &c
}

// Mirror returns a condition of type t that copies the status, reason and message of source's
// condition of type sourceType, such as a child's Ready condition mirrored as the parent's
// DatabaseReady; set it on the parent with [Set]:
//
//		conditions.Set(cluster, conditions.Mirror(DatabaseReady, database, conditions.Ready))
//
//	  - Its LastTransitionTime is the source condition's, so that when [Set] sees the status
//	    change, the mirror's time is when the child became ready, not when the parent's controller
//	    noticed. (Cluster API's mirror does the same.) While the status stays, Set keeps the
//	    mirror's time, as for any condition.
//	  - When source's condition was computed for an older generation than source's current one,
//	    its status may no longer hold: the mirror is Unknown with reason [ReasonNotObserved], and
//	    no transition time (Set uses now).
//	  - When source has no such condition, the mirror is the [Fallback], by default Unknown with
//	    reason [ReasonNotObserved].
func Mirror(t Type, source Source, sourceType Type, opts ...Option) metav1.Condition {
	o := newOptions(opts)
	c := Get(source, sourceType)
	var mirrored metav1.Condition
	switch {
	case c == nil && o.fallback != nil:
		mirrored = *o.fallback
		mirrored.Message = truncateMessage(mirrored.Message)
	case c == nil:
		mirrored = newCondition(t, metav1.ConditionUnknown, ReasonNotObserved,
			fmt.Sprintf("%s has no %s condition", source.GetName(), sourceType))
	case stale(c, source.GetGeneration()):
		mirrored = newCondition(t, metav1.ConditionUnknown, ReasonNotObserved,
			fmt.Sprintf("%s: %s computed for generation %d, current is %d", source.GetName(), sourceType, c.ObservedGeneration, source.GetGeneration()))
	default:
		mirrored = newCondition(t, c.Status, Reason(c.Reason), c.Message)
		mirrored.LastTransitionTime = c.LastTransitionTime
	}
	mirrored.Type = string(t)
	if c == nil || stale(c, source.GetGeneration()) {
		mirrored.LastTransitionTime = metav1.Time{}
	}
	return mirrored
}

// Aggregate returns a condition of type t that combines the condition of type sourceType of
// every object in sources, such as "every replica is Ready"; set it with [Set]:
//
//   - healthy when every source's condition is healthy (True, or False for a negative-polarity
//     type; see [NegativePolarity]); also healthy when sources is empty;
//   - unhealthy when any is unhealthy; Unknown when none is unhealthy but some are Unknown,
//     missing or computed for an older generation than their source's;
//   - as for [Summary], healthy is True and unhealthy False when t has positive polarity, and
//     the other way round when t has negative polarity: Degraded aggregated from the replicas'
//     Degraded is True while any replica is degraded.
//
// The reason is that of the worst source (by name among the equally bad); the message counts and
// lists the sources that are not healthy, worst first, then by name, so that the same set of
// sources gives the same message whatever order they are passed in.
func Aggregate[S Source](t Type, sources []S, sourceType Type, opts ...Option) metav1.Condition {
	o := newOptions(opts)
	type finding struct {
		name string
		c    *metav1.Condition
		gen  int64
		h    health
	}
	var bad []finding
	for _, s := range sources {
		c := Get(s, sourceType)
		if h := o.assess(sourceType, c, s.GetGeneration()); h != healthy {
			bad = append(bad, finding{name: s.GetName(), c: c, gen: s.GetGeneration(), h: h})
		}
	}
	if len(bad) == 0 {
		return newCondition(t, o.status(t, healthy), o.trueReason, o.trueMessage)
	}
	slices.SortFunc(bad, func(a, b finding) int {
		return cmp.Or(int(b.h-a.h), strings.Compare(a.name, b.name))
	})

	const listed = 10
	parts := make([]string, 0, listed+1)
	for i, f := range bad {
		if i == listed {
			parts = append(parts, fmt.Sprintf("and %d more", len(bad)-listed))
			break
		}
		parts = append(parts, f.name+": "+describe(f.c, f.gen))
	}
	worst := bad[0]
	reason := ReasonNotObserved
	if worst.c != nil && worst.c.Reason != "" && !stale(worst.c, worst.gen) {
		reason = Reason(worst.c.Reason)
	}
	message := fmt.Sprintf("%d of %d not healthy: %s", len(bad), len(sources), strings.Join(parts, "; "))
	return newCondition(t, o.status(t, worst.h), reason, message)
}
