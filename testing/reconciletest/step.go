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

package reconciletest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/testing/faults"
)

// Step is the record of one reconcile: one the harness ran, or one a [Recorder] saw.
type Step struct {
	// Number counts the reconciles of the harness, or of the Recorder, from 1.
	Number int
	// Request is what was reconciled.
	Request reconcile.Request
	// Result and Err are what Reconcile returned. A panic is turned into an error, as
	// controller-runtime does.
	Result reconcile.Result
	Err    error
	// Calls are the calls the reconcile made through the harness's client, in order. A
	// Recorder does not see them: its steps have none.
	Calls []faults.Call

	// maxWait is the longest requeue the harness that ran the step waits for (negative: none);
	// zero stands for DefaultMaxWait.
	maxWait time.Duration
	// recorded reports whether a Recorder recorded the step, which sees no calls.
	recorded bool
	// start and end are when the harness called the reconciler and when it returned.
	start, end time.Time
}

// Writes returns the calls of the step that wrote, or tried to: creates, updates, patches,
// applies and deletes, whatever their outcome.
func (s Step) Writes() []faults.Call {
	var writes []faults.Call
	for _, c := range s.Calls {
		if c.IsWrite() {
			writes = append(writes, c)
		}
	}
	return writes
}

// Requeued reports whether the reconcile asked to be run again later without an error:
// RequeueAfter, or the deprecated Requeue.
func (s Step) Requeued() bool {
	r := s.Result
	r.Priority = nil
	return !r.IsZero()
}

// Stable reports whether the reconcile left nothing to do: it returned no error, sent no write
// request through the harness's client, and asked for no requeue the harness waits for. A
// RequeueAfter longer than [Harness.MaxWait] is a poll, which a stable reconcile may return, as
// requeue.Poll does; one of at most MaxWait (or the deprecated Requeue) means the reconciler is
// waiting for something, and is not stable.
//
// A [Recorder]'s steps have no calls, so for them Stable says nothing about writes.
func (s Step) Stable() bool {
	return s.finished() && len(s.Writes()) == 0
}

// finished reports whether the reconcile returned no error and no requeue the harness waits for:
// it is done, or polls.
func (s Step) finished() bool {
	_, waits := s.wait()
	return s.Err == nil && !waits
}

// wait returns how long the harness waits before it reconciles again after the step, and
// whether it waits at all: only after a requeue without an error, of at most its MaxWait.
func (s Step) wait() (time.Duration, bool) {
	if s.Err != nil || !s.Requeued() {
		return 0, false
	}
	limit := s.maxWait
	if limit == 0 {
		limit = DefaultMaxWait
	}
	after := s.Result.RequeueAfter
	if limit < 0 || after > limit {
		return 0, false // a poll
	}
	return after, true
}

// Terminal reports whether the reconcile returned a terminal error, which controller-runtime
// does not retry.
func (s Step) Terminal() bool {
	return s.Err != nil && errors.Is(s.Err, reconcile.TerminalError(nil))
}

// Outcome describes what the reconcile returned: "done", "requeue after 5s", "error: ..." or
// "terminal error: ...".
func (s Step) Outcome() string {
	switch {
	case s.Terminal():
		return "terminal error: " + s.Err.Error()
	case s.Err != nil:
		return "error: " + s.Err.Error()
	case s.Result.RequeueAfter > 0:
		return fmt.Sprintf("requeue after %v", s.Result.RequeueAfter)
	case s.Requeued():
		return "requeue (rate limited)"
	}
	return "done"
}

// String describes the step: its number, outcome, and calls, one a line; for a step a
// [Recorder] recorded, which sees no calls, its number, request and outcome.
func (s Step) String() string {
	var b strings.Builder
	if s.recorded {
		fmt.Fprintf(&b, "step %d (%s): %s", s.Number, s.Request, s.Outcome())
		return b.String()
	}
	fmt.Fprintf(&b, "step %d: %s", s.Number, s.Outcome())
	if len(s.Calls) == 0 {
		b.WriteString(" (no calls)")
	}
	for _, c := range s.Calls {
		b.WriteString("\n    " + c.String())
	}
	return b.String()
}

// stepLog renders steps, one after the other.
func stepLog(steps []Step) string {
	lines := make([]string, 0, len(steps))
	for _, s := range steps {
		lines = append(lines, "  "+s.String())
	}
	return strings.Join(lines, "\n")
}
