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

package sharder

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Move is one change the sharder made to the labels of a sharded object.
type Move struct {
	// Kind is the object's kind.
	Kind schema.GroupVersionKind
	// Object is the object's namespace and name.
	Object client.ObjectKey
	// Controlled reports whether Kind is a controlled kind, sharded by its controller.
	Controlled bool
	// From is the object's shard before the change; empty for an object that had none.
	From string
	// FromState is the state of From in the pass that made the change; empty when From is.
	FromState ShardState
	// To is the shard the ring wants the object on.
	To string
	// Drain reports whether the change was a drain: the sharder added the drain label and the
	// object stays on From until that shard lets go of it. Otherwise the sharder set the
	// shard label to To and removed any drain label.
	Drain bool
}

// Moves returns the changes the sharder made to the labels of sharded objects, oldest first:
// every write the API server accepted. Tests check the protocol's invariants with it. The
// sharder keeps them all, for as long as it lives.
//
// A label a test reads from the API server is in Moves called after that read: Moves waits
// for the writes in flight to be recorded.
func (s *Sharder) Moves() []Move {
	s.writing.Lock()
	defer s.writing.Unlock()
	s.movesMu.Lock()
	defer s.movesMu.Unlock()
	return slices.Clone(s.moves)
}

// record appends m to the moves.
func (s *Sharder) record(m Move) {
	s.movesMu.Lock()
	defer s.movesMu.Unlock()
	s.moves = append(s.moves, m)
}

// String returns a line such as "drain ConfigMap default/web: shard-a (ready) -> shard-b".
func (m Move) String() string {
	verb := "move"
	switch {
	case m.Drain:
		verb = "drain"
	case m.From == "":
		verb = "assign"
	}
	from := "unassigned"
	if m.From != "" {
		from = fmt.Sprintf("%s (%s)", m.From, m.FromState)
	}
	return fmt.Sprintf("%s %s %s: %s -> %s", verb, m.Kind.Kind, m.Object, from, m.To)
}
