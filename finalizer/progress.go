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

package finalizer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/patch"
)

// The Deleting and Stalled conditions are shared by the Lifecycles of every controller that
// keeps a finalizer on an object (a storage controller, a backup controller and the operator
// each hold one): their messages have one line per finalizer, "<finalizer>: step <name>:
// <message>" or "<finalizer>: step <name> failed: <error>" in Deleting, "<finalizer>: cleanup
// did not finish within ..." in Stalled, in the order of the object's finalizers. Each Lifecycle
// writes its own line and keeps the others, so two controllers do not overwrite each other's
// progress, and one writes only when its own line changes: the line of a finalizer that has gone
// since is dropped at its next change, not at once. A Lifecycle whose cleanup is done removes its
// lines before its finalizer goes when other finalizers keep the object.

// maxProgressLine bounds one finalizer's line, so that several fit the API server's limit on a
// condition's message.
const maxProgressLine = 1024

// progressLines returns the lines of a Deleting or Stalled message by finalizer, for the
// finalizers obj still has.
func progressLines(obj client.Object, message string) map[string]string {
	lines := map[string]string{}
	for line := range strings.SplitSeq(message, "\n") {
		f, rest, ok := strings.Cut(line, ": ")
		if ok && slices.Contains(obj.GetFinalizers(), f) {
			lines[f] = rest
		}
	}
	return lines
}

// setLine sets this Lifecycle's line of obj's condition t to line, or removes it when line is
// "", keeping the lines of obj's other finalizers in the order of its finalizers; reason gives the
// condition's reason from the lines. A condition left without lines is removed. When this
// Lifecycle's line does not change, the condition is left as it is, even the line of a finalizer
// another controller has removed since, so that another controller's write never causes one of
// ours.
func (l *Lifecycle[T]) setLine(s conditions.Setter, obj T, t conditions.Type, line string, reason func(lines []string) conditions.Reason) {
	line = truncate(strings.ReplaceAll(line, "\n", " "), maxProgressLine)
	var current string
	if c := conditions.Get(s, t); c != nil && c.Status == metav1.ConditionTrue {
		current = c.Message
	}
	lines := progressLines(obj, current)
	own, has := lines[l.Finalizer]
	if (has && own == line) || (!has && line == "") {
		return
	}
	if line == "" {
		delete(lines, l.Finalizer)
	} else {
		lines[l.Finalizer] = line
	}
	var out, kept []string
	for _, f := range obj.GetFinalizers() {
		if line, ok := lines[f]; ok {
			out = append(out, f+": "+line)
			kept = append(kept, line)
		}
	}
	if len(out) == 0 {
		conditions.Delete(s, t)
		return
	}
	conditions.MarkTrue(s, t, reason(kept), strings.Join(out, "\n"))
}

// deletingReason is the reason of the Deleting condition: CleanupFailed when any finalizer's step
// failed, CleanupInProgress otherwise.
func deletingReason(lines []string) conditions.Reason {
	if slices.ContainsFunc(lines, failedStep) {
		return ReasonCleanupFailed
	}
	return ReasonCleanupInProgress
}

// stalledReason is the reason of the Stalled condition a Lifecycle writes.
func stalledReason([]string) conditions.Reason { return ReasonCleanupTimedOut }

// ownProgress returns this Lifecycle's line of obj's Deleting condition, or the whole message of
// one written before lines named their finalizers; "" when there is none.
func (l *Lifecycle[T]) ownProgress(obj client.Object) string {
	s, ok := obj.(conditions.Setter)
	if !ok {
		return ""
	}
	c := conditions.Get(s, conditions.Deleting)
	if c == nil {
		return ""
	}
	if line, ok := progressLines(obj, c.Message)[l.Finalizer]; ok {
		return line
	}
	if strings.HasPrefix(c.Message, "step ") {
		return c.Message
	}
	return ""
}

// failedStep reports whether a line's message is a step's failure: "step <name> failed: ...".
func failedStep(line string) bool {
	head, _, ok := strings.Cut(line, ": ")
	return ok && strings.HasPrefix(head, "step ") && strings.HasSuffix(head, " failed")
}

// truncate makes s valid UTF-8 (invalid bytes replaced by U+FFFD, as the condition's message
// will have them) and cuts it to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// progressRetries bounds how many times writeLines merges its lines again after another
// controller's write.
const progressRetries = 3

// recordProgress writes this Lifecycle's line of obj's Deleting condition, and of Stalled when
// timedOut, through h.
func (l *Lifecycle[T]) recordProgress(ctx context.Context, obj T, h *patch.Helper, message string, timedOut bool) error {
	return l.writeLines(ctx, obj, h, func(s conditions.Setter) {
		l.setLine(s, obj, conditions.Deleting, message, deletingReason)
		if timedOut {
			l.setLine(s, obj, conditions.Stalled, fmt.Sprintf("cleanup did not finish within %s of deletion: %s", l.Timeout, message), stalledReason)
			conditions.Delete(s, conditions.Reconciling)
		}
	})
}

// retire removes this Lifecycle's lines from obj's Deleting and Stalled conditions, before its
// finalizer goes, when other finalizers keep obj: what they said is over. When this finalizer is
// the last, obj goes with it and nothing is written.
func (l *Lifecycle[T]) retire(ctx context.Context, obj T) error {
	s, ok := any(obj).(conditions.Setter)
	if !ok || !slices.ContainsFunc(obj.GetFinalizers(), func(f string) bool { return f != l.Finalizer }) {
		return nil
	}
	if _, inDeleting := progressLines(obj, messageOf(s, conditions.Deleting))[l.Finalizer]; !inDeleting {
		if _, inStalled := progressLines(obj, messageOf(s, conditions.Stalled))[l.Finalizer]; !inStalled {
			return nil
		}
	}
	h, err := patch.NewHelper(obj, l.Client)
	if err != nil {
		return err
	}
	return l.writeLines(ctx, obj, h, func(s conditions.Setter) {
		l.setLine(s, obj, conditions.Deleting, "", deletingReason)
		l.setLine(s, obj, conditions.Stalled, "", stalledReason)
	})
}

// messageOf returns the message of obj's condition t, "" without one.
func messageOf(s conditions.Setter, t conditions.Type) string {
	if c := conditions.Get(s, t); c != nil {
		return c.Message
	}
	return ""
}

// writeLines changes obj's conditions with set and writes them through h. Deleting and Stalled
// are shared with other controllers' Lifecycles, so they are not owned conditions: when another
// controller wrote one since obj was read, the Helper reports a conflict instead of overwriting
// their lines, and set runs again on the object the Helper read, up to progressRetries times.
func (l *Lifecycle[T]) writeLines(ctx context.Context, obj T, h *patch.Helper, set func(s conditions.Setter)) error {
	for attempt := 1; ; attempt++ {
		if s, ok := any(obj).(conditions.Setter); ok {
			set(s)
		}
		err := h.Patch(ctx, obj, patch.OwnedConditions{conditions.Reconciling})
		var conflict *patch.ConflictError
		if !errors.As(err, &conflict) || attempt == progressRetries {
			return err
		}
		latest, ok := h.Previous().(T)
		if !ok || reflect.ValueOf(latest).IsNil() {
			return err
		}
		// Start again from the object as the other controller left it.
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(latest.DeepCopyObject()).Elem())
		if h, err = patch.NewHelper(obj, l.Client); err != nil {
			return err
		}
	}
}
