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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Verb is the kind of a client call, named as Kubernetes RBAC names it, plus [Apply] for
// server-side apply requests (which RBAC counts as patch): client.Client's Apply, and a Patch
// whose patch type is types.ApplyPatchType, which is how tenon's patch.Applier applies typed
// objects.
type Verb string

// The verbs of client calls. A call on a subresource has the verb of the method used: a status
// patch is a [Patch] with Subresource "status", a pod eviction a [Create] with Subresource
// "eviction".
const (
	Get         Verb = "get"
	List        Verb = "list"
	Watch       Verb = "watch"
	Create      Verb = "create"
	Update      Verb = "update"
	Patch       Verb = "patch"
	Apply       Verb = "apply"
	Delete      Verb = "delete"
	DeleteAllOf Verb = "deletecollection"
)

// Verbs is a set of verbs. As a [Selector] it selects the calls with any of them.
type Verbs []Verb

var (
	// Writes are the verbs that change objects.
	Writes = Verbs{Create, Update, Patch, Apply, Delete, DeleteAllOf}
	// Reads are the verbs that only read objects.
	Reads = Verbs{Get, List, Watch}
)

var allVerbs = append(slices.Clone(Reads), Writes...)

// NoSubresource is the [Match.Subresource] that selects only calls on the object itself, not on
// one of its subresources.
const NoSubresource = "-"

// Status selects the calls on the status subresource, as in Count(faults.Patch, faults.Status).
var Status = Match{Subresource: "status"}

// Match selects calls by what they act on. Every field that is set must match; the zero Match
// selects every call.
type Match struct {
	// Verbs selects calls with one of these verbs, such as [Writes] or Verbs{[Patch]}. Empty
	// selects every verb.
	Verbs Verbs

	// Kind selects calls on objects of this kind, or lists of them: "Widget" selects the kind in
	// any group, "Widget.test.tenon.dev" (kind.group, as kubectl writes it) only in that group, and
	// "ConfigMap." only the core group. Empty selects every kind.
	Kind string

	// Namespace selects calls on objects in this namespace, and lists and deletecollection calls
	// limited to it. Empty selects every namespace.
	Namespace string

	// Name selects calls on the object with this name. A create with generateName has no name
	// until the API server assigns one, so it is not selected by name. Empty selects every name.
	Name string

	// Subresource selects calls on this subresource, such as "status" or "scale";
	// [NoSubresource] selects only calls on objects themselves. Empty selects both.
	Subresource string
}

// Selects reports whether m selects c.
func (m Match) Selects(c Call) bool {
	if len(m.Verbs) > 0 && !slices.Contains(m.Verbs, c.Verb) {
		return false
	}
	if m.Kind != "" {
		kind, group, qualified := strings.Cut(m.Kind, ".")
		if kind != c.GVK.Kind || (qualified && group != c.GVK.Group) {
			return false
		}
	}
	if m.Namespace != "" && m.Namespace != c.Key.Namespace {
		return false
	}
	if m.Name != "" && m.Name != c.Key.Name {
		return false
	}
	switch m.Subresource {
	case "":
	case NoSubresource:
		return c.Subresource == ""
	default:
		return c.Subresource == m.Subresource
	}
	return true
}

// Fault is an error that the API server returns. The [Client] builds it as the API server does,
// with the resource and name of the call, so that apierrors.IsConflict and friends, and
// controller-runtime's handling of them, behave as they would on a cluster.
type Fault string

// The faults a [Rule] can inject.
const (
	// Conflict is 409 Conflict: "the object has been modified; please apply your changes to the
	// latest version and try again", as after a write with a stale resourceVersion.
	Conflict Fault = "Conflict"
	// NotFound is 404 NotFound, as for an object that is gone.
	NotFound Fault = "NotFound"
	// AlreadyExists is 409 AlreadyExists, as for a create of an object that exists.
	AlreadyExists Fault = "AlreadyExists"
	// Forbidden is 403 Forbidden, as when RBAC denies the call.
	Forbidden Fault = "Forbidden"
	// InternalError is 500 InternalError, as when a webhook or etcd fails.
	InternalError Fault = "InternalError"
	// ServiceUnavailable is 503 ServiceUnavailable with a Retry-After of [Rule.RetryAfter].
	ServiceUnavailable Fault = "ServiceUnavailable"
	// TooManyRequests is 429 TooManyRequests with a Retry-After of [Rule.RetryAfter], as when API
	// priority and fairness rejects the call.
	TooManyRequests Fault = "TooManyRequests"
	// Timeout is 504 Timeout: the request did not complete in time. With [Rule.LostResponse] it is
	// the ambiguous write a real timeout can be: done, although the caller saw it fail.
	Timeout Fault = "Timeout"
)

var allFaults = []Fault{Conflict, NotFound, AlreadyExists, Forbidden, InternalError, ServiceUnavailable, TooManyRequests, Timeout}

// defaultRetryAfter is the Retry-After of [ServiceUnavailable] and [TooManyRequests] faults whose
// rule sets none.
const defaultRetryAfter = time.Second

// Rule injects a fault, latency, or both into the calls its [Match] selects.
//
// Each rule counts the calls it selects, whether or not it fires, and fires on a call when every
// condition that is set holds:
//
//   - After: the call is on an object that a call with this verb succeeded on before; the count
//     restarts with every such call, so Nth 1 means "the first call after";
//   - Nth: it is the Nth call the rule counts;
//   - Every: its count is a multiple of Every;
//   - Probability: a draw from the plan's seeded random source succeeds;
//   - Times: the rule has fired fewer than Times times.
//
// When several rules fire on a call, their latencies add up and the first of them with a Fault
// or Err decides the error.
type Rule struct {
	// Match selects the calls the rule applies to.
	Match

	// After, when set, restricts the rule to calls on an object (same kind, namespace and name)
	// after a successful call with this verb on it, as in "NotFound on the first Get after
	// Delete". Nth and Every count from that call.
	After Verb

	// Nth fires the rule only on the Nth call it counts, starting at 1. Zero: any call.
	Nth int

	// Every fires the rule on every Every-th call it counts. Zero: every call.
	Every int

	// Probability fires the rule on a call with this probability, between 0 and 1. Zero means
	// always. The draw for the Nth call a rule counts depends only on the plan's seed, the rule's
	// position and N, so a plan with the same seed fires on the same calls again.
	Probability float64

	// Times limits how often the rule fires. Zero: no limit.
	Times int

	// Fault is the API error to return. At most one of Fault and Err may be set.
	Fault Fault

	// Err is an error to return as it is, for failures that are not API errors, such as a
	// connection refused.
	Err error

	// RetryAfter is the Retry-After of a ServiceUnavailable, TooManyRequests or Timeout fault.
	// Defaults to one second for the first two and to none for Timeout.
	RetryAfter time.Duration

	// Latency delays the call by this long, or until its context ends, which fails the call
	// with the context's error.
	Latency time.Duration

	// LostResponse sends the call on to the API server and returns the fault instead of its
	// response: the write happened, but the caller cannot know it. Requires Fault or Err.
	LostResponse bool
}

// Plan is a fault plan: the rules a [Client] applies to the calls it makes, and the seed of its
// random choices. The zero value injects nothing.
type Plan struct {
	// Seed seeds the random choices of rules with a Probability. Zero picks a seed from the
	// TENON_FAULTS_SEED environment variable, or else at random; [Client.Seed] returns the one
	// used, and [New] logs it when the test fails, so that the run can be replayed.
	Seed int64

	// Rules are the faults to inject, in order.
	Rules []Rule
}

// SeedEnvVar names the environment variable that sets the seed of plans whose Seed is zero:
// TENON_FAULTS_SEED=42 go test -run TestX replays a failed run of TestX that logged seed 42.
const SeedEnvVar = "TENON_FAULTS_SEED"

// validate returns an error that lists every rule that cannot work as written, or nil.
func (p Plan) validate() error {
	var errs []error
	for i := range p.Rules {
		if err := p.Rules[i].validate(); err != nil {
			errs = append(errs, fmt.Errorf("rule %d: %w", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid fault plan: %w", errors.Join(errs...))
	}
	return nil
}

func (r *Rule) validate() error {
	problems := append(r.unknownNames(), r.badEffect()...)
	if r.Nth < 0 || r.Every < 0 || r.Times < 0 {
		problems = append(problems, "Nth, Every and Times must not be negative")
	}
	if r.Probability < 0 || r.Probability > 1 {
		problems = append(problems, fmt.Sprintf("probability %v is not between 0 and 1", r.Probability))
	}
	if r.Latency < 0 || r.RetryAfter < 0 {
		problems = append(problems, "Latency and RetryAfter must not be negative")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// unknownNames lists the verbs and the fault of r that are not known.
func (r *Rule) unknownNames() []string {
	var problems []string
	for _, v := range r.Verbs {
		if !slices.Contains(allVerbs, v) {
			problems = append(problems, fmt.Sprintf("unknown verb %q", v))
		}
	}
	if r.After != "" && !slices.Contains(allVerbs, r.After) {
		problems = append(problems, fmt.Sprintf("unknown verb %q in After", r.After))
	}
	if r.Fault != "" && !slices.Contains(allFaults, r.Fault) {
		problems = append(problems, fmt.Sprintf("unknown fault %q", r.Fault))
	}
	return problems
}

// badEffect lists what is wrong with r's effect: none, or two errors at once.
func (r *Rule) badEffect() []string {
	var problems []string
	if r.Fault != "" && r.Err != nil {
		problems = append(problems, "both Fault and Err are set")
	}
	if r.Fault == "" && r.Err == nil && r.Latency == 0 {
		problems = append(problems, "no effect: set Fault, Err or Latency")
	}
	if r.LostResponse && r.Fault == "" && r.Err == nil {
		problems = append(problems, "LostResponse needs a Fault or Err to return")
	}
	return problems
}
