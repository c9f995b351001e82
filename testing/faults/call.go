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

package faults

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Outcome is how a recorded call ended.
type Outcome string

// The outcomes of calls.
const (
	// OK: the call succeeded.
	OK Outcome = "ok"
	// Injected: a rule returned an error; unless the rule has LostResponse, the call never
	// reached the API server.
	Injected Outcome = "injected"
	// Failed: the call returned an error no rule injected: the API server's, or its context's.
	Failed Outcome = "failed"
)

// Selects reports whether c ended with outcome o.
func (o Outcome) Selects(c Call) bool { return c.Outcome == o }

// Call is the record of one call made through a [Client].
type Call struct {
	// Seq numbers the calls of a Client in the order they started, from 1.
	Seq int

	// Verb is what the call did.
	Verb Verb

	// GVK is the kind of the object, or of the items of the list, the call acted on.
	GVK schema.GroupVersionKind

	// Key is the object's namespace and name. For list, watch and deletecollection calls, Name is
	// empty and Namespace is the namespace they were limited to, if any. For a create with
	// generateName, Name is the name the API server assigned.
	Key types.NamespacedName

	// Subresource is the subresource the call acted on, such as "status"; empty for the object
	// itself.
	Subresource string

	// Outcome is how the call ended, and Err the error it returned, if any.
	Outcome Outcome
	Err     error

	// Rule is the position in Plan.Rules of the rule that injected Err, or -1.
	Rule int

	// Latency is the delay the rules added to the call.
	Latency time.Duration

	// Forwarded reports whether the call reached the wrapped client: false when a rule returned
	// an error instead, true for a LostResponse.
	Forwarded bool

	// ResourceVersion is the object's resourceVersion after a successful get or write.
	ResourceVersion string

	// Object is a copy of the object after a successful get, create, update, patch or apply, or
	// nil: for an apply through the client's Apply an *unstructured.Unstructured, for one
	// through its Patch (a patch of the apply type, as tenon's patch.Applier sends for built-in
	// kinds) the object of the call's Go type, as the client decoded it.
	Object client.Object

	// Patch is the body of a patch or apply call, as sent.
	Patch []byte
}

// IsWrite reports whether the call's verb is one of [Writes].
func (c Call) IsWrite() bool {
	return slices.Contains(Writes, c.Verb)
}

// String describes the call in one line: what it acted on, its outcome and error, such as
// `patch Widget default/w status: injected (rule 0): Operation cannot be fulfilled on ...`.
func (c Call) String() string {
	var b strings.Builder
	b.WriteString(c.describe())
	b.WriteString(": " + string(c.Outcome))
	if c.Err != nil {
		if c.Outcome == Injected {
			fmt.Fprintf(&b, " (rule %d)", c.Rule)
			if c.Forwarded {
				b.WriteString(" after the call went through")
			}
		}
		b.WriteString(": " + c.Err.Error())
	}
	if c.Latency > 0 {
		fmt.Fprintf(&b, " after %v latency", c.Latency)
	}
	return b.String()
}

// Selector selects recorded calls, for [Client.Calls] and [Client.Count]. [Verb], [Verbs],
// [Match], [Rule], [Outcome] and [SelectorFunc] are selectors.
type Selector interface {
	Selects(Call) bool
}

// SelectorFunc adapts a function to a [Selector].
type SelectorFunc func(Call) bool

// Selects reports whether f returns true for c.
func (f SelectorFunc) Selects(c Call) bool { return f(c) }

// Selects reports whether c has verb v.
func (v Verb) Selects(c Call) bool { return c.Verb == v }

// Selects reports whether c has one of the verbs.
func (vs Verbs) Selects(c Call) bool { return slices.Contains(vs, c.Verb) }

var (
	_ Selector = Verb("")
	_ Selector = Verbs(nil)
	_ Selector = Match{}
	_ Selector = Rule{}
	_ Selector = Outcome("")
	_ Selector = SelectorFunc(nil)
)

func selectsAll(c Call, selectors []Selector) bool {
	for _, s := range selectors {
		if !s.Selects(c) {
			return false
		}
	}
	return true
}
