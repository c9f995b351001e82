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

package external

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/fencing"
)

// Provider is what a controller implements against the API that holds its external resources:
// a cloud's database service, a DNS provider, an identity system. [Resource] calls it; each
// method gets the object being reconciled and the external name [Resource] keeps for it.
//
// Errors: return the provider's error as it is, wrapped with context. Wrap it in
// reconcile.TerminalError when retrying cannot help until the object changes (the provider
// refused the request as invalid, the credentials are wrong): the object is then
// Stalled with the reason of the call that failed ([ReasonCreateFailed] and so on), or with a
// reason of the provider's own when the error is (or wraps) one of requeue.TerminalError, such
// as "InvalidCredentials", which tells a person what to fix. Any other
// error is retried with backoff, and for Create it means that the outcome is unknown (see
// [Resource.IdempotentCreate]).
type Provider[T client.Object] interface {
	// Observe reads the external resource called name and reports what it found. It must not
	// change anything at the provider. It may record what it reads in obj's status (an address,
	// a revision), which the caller writes with the rest of the status.
	//
	// Observe must see what an earlier call did (read-after-write consistency for the name): a
	// resource created or deleted by a call that returned, or by an operation that finished,
	// must be reported so. A provider whose reads lag behind its writes makes a resource look
	// deleted behind the controller's back, and it is created again.
	//
	// A resource called name that is not obj's (another owner's tag, the resource of an earlier
	// object of the same name) is an error wrapping [ErrNameTaken]: [Resource] adopts whatever
	// Observe reports as existing, and never touches a name taken.
	Observe(ctx context.Context, obj T, name string) (Observation, error)

	// Create starts creating the resource called name, as obj's spec says. key is the same for
	// every call of one attempt, across restarts and replicas, and new for each attempt after one
	// known to have failed: give it to the provider as the request's idempotency key (a client
	// token, a request id) where it takes one. It is a random UUID, stored in the object before
	// Create is called.
	//
	// Return the operation to poll, or "" when the resource was created when Create returns.
	// When the provider answers that a resource called name exists already, and its names are
	// unique, return "" and no error: the next Observe reports it (and refuses it if it is not
	// obj's). A terminal error must mean that nothing was created.
	Create(ctx context.Context, obj T, name, key string) (Operation, error)

	// Update starts changing the resource called name to match obj's spec, after Observe
	// reported it ready and not up to date. Return the operation to poll, or "" when the change
	// is made when Update returns. Update must be safe to repeat: after a crash it may be sent
	// again.
	Update(ctx context.Context, obj T, name string) (Operation, error)

	// Delete starts deleting the resource called name, after Observe reported that it exists.
	// Return the operation to poll, or "" when the deletion is under way or done when Delete
	// returns: [Resource] observes until the resource is gone. An error for a resource that
	// vanished in between needs no special case: it is retried, and the retry observes the
	// resource gone.
	Delete(ctx context.Context, obj T, name string) (Operation, error)
}

// Operation identifies work that a provider does asynchronously: the id of the operation that
// Create, Update or Delete started, which [Resource] persists in the object and polls with
// [Operations]. The empty Operation means that there is nothing to poll.
type Operation string

// Operations is implemented by a [Provider] whose Create, Update or Delete return operations.
type Operations[T client.Object] interface {
	// OperationDone reports whether the operation op has finished. When it has, err is the
	// operation's failure, or nil when it succeeded; wrap a failure in reconcile.TerminalError
	// when retrying cannot help. When it has not, err is the failure to ask, retried with
	// backoff. An operation the provider no longer knows (operations that expire) is done:
	// return true and an error that says so, not terminal; [Resource] then observes the
	// resource and goes on from what it finds.
	OperationDone(ctx context.Context, obj T, op Operation) (done bool, err error)
}

// Observation is what [Provider.Observe] found.
type Observation struct {
	// Exists reports whether the resource exists at the provider, whatever its state (also while
	// it is being created, changed or deleted).
	Exists bool

	// Ready reports whether the resource is usable: created, and not in the middle of a change.
	// [Resource] polls a resource that exists and is not ready, and changes it only once it is.
	Ready bool

	// UpToDate reports whether the resource matches the object's spec. When it exists, is ready
	// and is not up to date, [Resource] calls Update.
	UpToDate bool

	// Message says what Observe found, for the condition [Resource] sets, such as "instance
	// db-1 is RUNNABLE at 10.0.0.7". Keep it stable while nothing changes: a message that
	// changes on every call makes a status write on every poll.
	Message string
}

// Fence refuses calls to the provider once this replica may no longer act as the leader: Check
// returns nil when it may, and an error otherwise. A *fencing.Lock is one. Calls to a provider
// do not go through the API server, so the fence of a wrapped rest.Config does not see them.
type Fence interface {
	Check() error
}

var _ Fence = (*fencing.Lock)(nil)
