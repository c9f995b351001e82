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

// MirrorOptions configures [Mirror]. Build it with [MirrorOption] values.
type MirrorOptions struct {
	// Fallback is set when the source has no condition of the mirrored type. Defaults to Unknown
	// with reason [ReasonNotObserved] and a message naming the source.
	Fallback *metav1.Condition
}

// MirrorOption configures [Mirror].
type MirrorOption interface {
	ApplyToMirror(*MirrorOptions)
}

// Fallback is the condition [Mirror] sets when the source has none of the mirrored type. Its
// Type is ignored.
type Fallback metav1.Condition

// ApplyToMirror implements [MirrorOption].
func (f Fallback) ApplyToMirror(o *MirrorOptions) {
	c := metav1.Condition(f)
	o.Fallback = &c
}

// Mirror sets a condition of type t on obj that copies the status, reason and message of
// source's condition of type sourceType, such as a child's Ready condition mirrored as the
// parent's DatabaseReady. See [Set] for how it is set.
//
//   - When the mirror's status changes, its LastTransitionTime is the source condition's: when
//     the child became ready, not when the parent's controller noticed. (Cluster API's mirror
//     does the same.) When the status stays, the mirror keeps its time, as for any [Set].
//   - When source's condition was computed for an older generation than source's current one,
//     its status may no longer hold: the mirror is Unknown with reason [ReasonNotObserved],
//     since now.
//   - When source has no such condition, the mirror is the [Fallback], by default Unknown with
//     reason [ReasonNotObserved], since now.
func Mirror(obj Setter, t Type, source Source, sourceType Type, opts ...MirrorOption) (changed bool, err error) {
	var o MirrorOptions
	for _, opt := range opts {
		opt.ApplyToMirror(&o)
	}
	c := Get(source, sourceType)
	var mirrored metav1.Condition
	switch {
	case c == nil && o.Fallback != nil:
		mirrored = *o.Fallback
		mirrored.Message = TruncateMessage(mirrored.Message)
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
	return Set(obj, mirrored)
}

// Aggregate sets a condition of type t on obj that combines the condition of type sourceType of
// every object in sources, such as "every replica is Ready":
//
//   - healthy when every source's condition is healthy (True, or False for a negative-polarity
//     type; see [SummaryOptions]); also healthy when sources is empty;
//   - unhealthy when any is unhealthy; Unknown when none is unhealthy but some are Unknown,
//     missing or computed for an older generation than their source's;
//   - as for [Summary], healthy is True and unhealthy False when t has positive polarity, and
//     the other way round when t has negative polarity: Degraded aggregated from the replicas'
//     Degraded is True while any replica is degraded.
//
// The reason is that of the worst source (by name among the equally bad); the message counts and
// lists the sources that are not healthy, worst first, then by name, so that the same set of
// sources gives the same message whatever order they are passed in.
func Aggregate[S Source](obj Setter, t Type, sources []S, sourceType Type, opts ...SummaryOption) (changed bool, err error) {
	o := newSummaryOptions(opts)
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
		return Set(obj, newCondition(t, o.status(t, healthy), o.TrueReason, o.TrueMessage))
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
	return Set(obj, newCondition(t, o.status(t, worst.h), reason, message))
}
