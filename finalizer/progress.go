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
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
)

// The Deleting condition is shared by the Lifecycles of every controller that keeps a finalizer
// on an object (a storage controller, a backup controller and the operator each hold one): its
// message has one line per finalizer whose cleanup is under way, "<finalizer>: step <name>:
// <message>" or "<finalizer>: step <name> failed: <error>", in the order of the object's
// finalizers. Each Lifecycle writes its own line and keeps the others, so two controllers do
// not overwrite each other's progress, and one writes only when its own line changes.

// maxProgressLine bounds one finalizer's line, so that several fit the API server's limit on a
// condition's message.
const maxProgressLine = 1024

// progressLines returns the lines of a Deleting message by finalizer, for the finalizers obj
// still has.
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

// deleting returns the reason and message of obj's Deleting condition with this Lifecycle's line
// set to mine: CleanupFailed when any finalizer's step failed, CleanupInProgress otherwise.
func (l *Lifecycle[T]) deleting(s conditions.Setter, obj T, mine string) (conditions.Reason, string) {
	var current string
	if c := conditions.Get(s, conditions.Deleting); c != nil {
		current = c.Message
	}
	lines := progressLines(obj, current)
	lines[l.Finalizer] = truncate(strings.ReplaceAll(mine, "\n", " "), maxProgressLine)
	reason := ReasonCleanupInProgress
	var out []string
	for _, f := range obj.GetFinalizers() {
		line, ok := lines[f]
		if !ok {
			continue
		}
		if failedStep(line) {
			reason = ReasonCleanupFailed
		}
		out = append(out, f+": "+line)
	}
	return reason, strings.Join(out, "\n")
}

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

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
