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

package external_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// This file is the "provider client" of the examples and tests: a simulated database service
// whose API is asynchronous, as those of cloud database services are. Creating, resizing and
// deleting an instance each start an operation, which finishes as time passes (Tick). It can
// also fail in the ways the tests need (see cloudFaults).

// Errors of the simulated service.
var (
	errNotFound      = errors.New("instance not found")
	errAlreadyExists = errors.New("an instance of that name exists")
	errBusy          = errors.New("the instance is busy with another operation")
	errTimeout       = errors.New("request timed out")
	errInvalid       = errors.New("invalid request")
)

// Instance states.
const (
	stateCreating = "CREATING"
	stateRunning  = "RUNNING"
	stateResizing = "RESIZING"
	stateDeleting = "DELETING"
)

// Instance is a database instance as the service represents it.
type Instance struct {
	ID       string
	Name     string
	Tier     string
	Password string
	State    string
	Address  string
}

// CloudOperation is an operation as the service represents it.
type CloudOperation struct {
	ID   string
	Kind string
	Done bool
	// Err is the failure of an operation that is done, wrapping errInvalid when retrying cannot
	// help.
	Err error
}

// cloudOptions are the service's guarantees.
type cloudOptions struct {
	// uniqueNames refuses an instance whose name a live instance has (errAlreadyExists).
	uniqueNames bool
	// honourRequestIDs answers a create with a request id it has seen with the first answer.
	honourRequestIDs bool
	// ticks is how many Ticks an operation takes. Zero means 1.
	ticks int
}

// cloudCall is one call to the service, as a fault hook sees it.
type cloudCall struct {
	Method string // Get, Insert, Resize, Delete, Operation
	Name   string // the instance, or the operation id
}

// cloudFault is what a fault hook decides for a call.
type cloudFault int

const (
	faultNone cloudFault = iota
	// faultTimeoutBefore: the request times out before the service acts on it.
	faultTimeoutBefore
	// faultLoseResponse: the service acts on the request, and the response is lost.
	faultLoseResponse
	// faultOperationFails: the operation the call starts fails (INTERNAL: retrying may help).
	faultOperationFails
	// faultOperationInvalid: the operation the call starts fails (INVALID_ARGUMENT: terminal).
	faultOperationInvalid
	// faultOperationHangs: the operation the call starts never finishes.
	faultOperationHangs
	// faultOperationSlow: the operation the call starts takes 20 Ticks.
	faultOperationSlow
	// faultDelayed: the request is held up in the network: the client times out, and the service
	// acts on it at the next Tick (Insert only).
	faultDelayed
	// faultCrashBefore: the controller's process dies before the request is sent.
	faultCrashBefore
	// faultCrashAfter: the service acts on the request, and the controller's process dies
	// before it reads the response.
	faultCrashAfter
)

// killed is the value a simulated crash panics with; the tests' harness recovers it and starts
// a new process.
type killed struct{ where string }

// Cloud is the simulated service. It is safe for concurrent use.
type Cloud struct {
	opts cloudOptions

	mu        sync.Mutex
	instances []*Instance // in creation order; a name may appear twice without uniqueNames
	ops       map[string]*cloudOp
	requests  map[string]string // request id → operation id
	next      int
	// fault, when set, decides the fault of each call.
	fault func(cloudCall) cloudFault
	// calls counts the calls that changed something, by method.
	calls map[string]int
	// delayed are requests held up in the network, which the next Tick delivers.
	delayed []func()
}

// cloudOp is an operation in progress.
type cloudOp struct {
	CloudOperation
	instance  *Instance
	remaining int // ticks left; negative: never finishes
	fail      error
	apply     func()
}

// NewCloud returns a service without instances.
func NewCloud(opts cloudOptions) *Cloud {
	if opts.ticks == 0 {
		opts.ticks = 1
	}
	return &Cloud{opts: opts, ops: map[string]*cloudOp{}, requests: map[string]string{}, calls: map[string]int{}}
}

// Get returns the live instance called name: the first one, when there are several.
func (c *Cloud) Get(_ context.Context, name string) (Instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.faultOf("Get", name); f == faultTimeoutBefore || f == faultLoseResponse {
		return Instance{}, errTimeout
	}
	for _, in := range c.instances {
		if in.Name == name {
			return *in, nil
		}
	}
	return Instance{}, fmt.Errorf("%w: %s", errNotFound, name)
}

// Insert starts creating an instance and returns its operation. requestID makes the call
// idempotent when the service honours request ids.
func (c *Cloud) Insert(_ context.Context, in Instance, requestID string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.faultOf("Insert", in.Name)
	switch f {
	case faultTimeoutBefore:
		return "", errTimeout
	case faultDelayed:
		c.delayed = append(c.delayed, func() { _, _ = c.insert(in, requestID, faultNone) })
		return "", errTimeout
	}
	op, err := c.insert(in, requestID, f)
	return c.respond(f, op, err)
}

func (c *Cloud) insert(in Instance, requestID string, f cloudFault) (string, error) {
	if in.Tier == "" {
		return "", fmt.Errorf("%w: no tier", errInvalid)
	}
	if op, ok := c.requests[requestID]; ok && c.opts.honourRequestIDs {
		return op, nil
	}
	if c.opts.uniqueNames && c.live(in.Name) != nil {
		return "", fmt.Errorf("%w: %s", errAlreadyExists, in.Name)
	}
	c.next++
	created := in
	created.ID, created.State, created.Address = fmt.Sprintf("i-%d", c.next), stateCreating, fmt.Sprintf("10.0.0.%d", c.next)
	c.instances = append(c.instances, &created)
	c.calls["Insert"]++
	op := c.start("create", &created, f, func() { created.State = stateRunning })
	c.requests[requestID] = op
	return op, nil
}

// Deliver makes the service act on the requests held up in the network now.
func (c *Cloud) Deliver() {
	c.mu.Lock()
	defer c.mu.Unlock()
	delayed := c.delayed
	c.delayed = nil
	for _, f := range delayed {
		f()
	}
}

// Resize starts changing an instance's tier.
func (c *Cloud) Resize(_ context.Context, name, tier string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.faultOf("Resize", name)
	if f == faultTimeoutBefore {
		return "", errTimeout
	}
	in := c.live(name)
	switch {
	case in == nil:
		return c.respond(f, "", fmt.Errorf("%w: %s", errNotFound, name))
	case in.State != stateRunning:
		return c.respond(f, "", fmt.Errorf("%w: %s is %s", errBusy, name, in.State))
	}
	in.State = stateResizing
	c.calls["Resize"]++
	return c.respond(f, c.start("resize", in, f, func() { in.Tier, in.State = tier, stateRunning }))
}

// Delete starts deleting an instance.
func (c *Cloud) Delete(_ context.Context, name string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.faultOf("Delete", name)
	if f == faultTimeoutBefore {
		return "", errTimeout
	}
	in := c.live(name)
	switch {
	case in == nil:
		return c.respond(f, "", fmt.Errorf("%w: %s", errNotFound, name))
	case in.State == stateDeleting:
		return c.respond(f, c.opOf(in, "delete"))
	case in.State != stateRunning:
		return c.respond(f, "", fmt.Errorf("%w: %s is %s", errBusy, name, in.State))
	}
	in.State = stateDeleting
	c.calls["Delete"]++
	return c.respond(f, c.start("delete", in, f, func() { c.remove(in) }))
}

// Operation returns an operation.
func (c *Cloud) Operation(_ context.Context, id string) (CloudOperation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.faultOf("Operation", id); f == faultTimeoutBefore || f == faultLoseResponse {
		return CloudOperation{}, errTimeout
	}
	op, ok := c.ops[id]
	if !ok {
		return CloudOperation{}, fmt.Errorf("operation %s not found", id)
	}
	return op.CloudOperation, nil
}

// Tick lets time pass: the requests held up in the network arrive, then every operation moves
// one step; those that finish take effect.
func (c *Cloud) Tick() {
	c.Deliver()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range c.sortedOps() {
		op := c.ops[id]
		if op.Done || op.remaining < 0 {
			continue
		}
		op.remaining--
		if op.remaining > 0 {
			continue
		}
		op.Done = true
		if op.fail != nil {
			op.Err = op.fail
			if op.Kind == "create" {
				c.remove(op.instance)
			} else {
				op.instance.State = stateRunning
			}
			continue
		}
		op.apply()
	}
}

// Instances returns copies of every instance, in creation order.
func (c *Cloud) Instances() []Instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Instance, len(c.instances))
	for i, in := range c.instances {
		out[i] = *in
	}
	return out
}

// DeleteBehindTheBack removes the instance called name at once, as a person with the cloud's
// console would, and reports whether there was one.
func (c *Cloud) DeleteBehindTheBack(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.live(name)
	if in == nil || in.State == stateDeleting {
		return false
	}
	c.remove(in)
	return true
}

// ResizeBehindTheBack changes the tier of the instance called name at once, and reports whether
// there was one to change.
func (c *Cloud) ResizeBehindTheBack(name, tier string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.live(name)
	if in == nil || in.State != stateRunning {
		return false
	}
	in.Tier = tier
	return true
}

func (c *Cloud) faultOf(method, name string) cloudFault {
	if c.fault == nil {
		return faultNone
	}
	f := c.fault(cloudCall{Method: method, Name: name})
	if f == faultCrashBefore || f == faultCrashAfter && (method == "Get" || method == "Operation") {
		panic(killed{where: "before a cloud call"})
	}
	return f
}

// respond returns the answer to a call that acted, loses it, or dies before reading it.
func (c *Cloud) respond(f cloudFault, op string, err ...error) (string, error) {
	switch f {
	case faultLoseResponse:
		return "", errTimeout
	case faultCrashAfter:
		panic(killed{where: "after a cloud call"})
	}
	return op, errors.Join(err...)
}

// start starts an operation on in that applies apply when it finishes.
func (c *Cloud) start(kind string, in *Instance, f cloudFault, apply func()) string {
	c.next++
	op := &cloudOp{CloudOperation: CloudOperation{ID: fmt.Sprintf("op-%d", c.next), Kind: kind}, instance: in, remaining: c.opts.ticks, apply: apply}
	switch f {
	case faultOperationFails:
		op.fail = errors.New("INTERNAL: the operation failed")
	case faultOperationInvalid:
		op.fail = fmt.Errorf("%w: the tier is not available in this region", errInvalid)
	case faultOperationHangs:
		op.remaining = -1
	case faultOperationSlow:
		op.remaining = 20
	}
	c.ops[op.ID] = op
	return op.ID
}

// opOf returns the pending operation of kind on in.
func (c *Cloud) opOf(in *Instance, kind string) string {
	for _, id := range c.sortedOps() {
		if op := c.ops[id]; op.instance == in && op.Kind == kind && !op.Done {
			return id
		}
	}
	return ""
}

func (c *Cloud) live(name string) *Instance {
	for _, in := range c.instances {
		if in.Name == name {
			return in
		}
	}
	return nil
}

func (c *Cloud) remove(in *Instance) {
	c.instances = slices.DeleteFunc(c.instances, func(x *Instance) bool { return x == in })
}

func (c *Cloud) sortedOps() []string {
	ids := make([]string, 0, len(c.ops))
	for id := range c.ops {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		var x, y int
		_, _ = fmt.Sscanf(a, "op-%d", &x)
		_, _ = fmt.Sscanf(b, "op-%d", &y)
		return x - y
	})
	return ids
}
