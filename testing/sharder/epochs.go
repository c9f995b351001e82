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
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An Epoch is a span of time during which one shard held one main object: the object's writes,
// and those of the objects that belong to it (its children, its tracked objects), are that
// shard's to send.
type Epoch struct {
	// Shard is the shard that held the object.
	Shard string
	// Start is when the witness received the sharder's write that assigned the object to Shard.
	Start time.Time
	// End is when the witness received the sharder's next assignment of the object; zero when
	// the window ended first.
	End time.Time
}

// Covers reports whether a write by shard that the witness received at t falls inside the
// epoch: after its start and before its end.
func (e Epoch) Covers(shard string, t time.Time) bool {
	return e.Shard == shard && e.Start.Before(t) && (e.End.IsZero() || t.Before(e.End))
}

// String returns a line such as "shard-a 10:04:05.123–10:04:07.456".
func (e Epoch) String() string {
	end := "…"
	if !e.End.IsZero() {
		end = e.End.Format("15:04:05.000")
	}
	return fmt.Sprintf("%s %s–%s", e.Shard, e.Start.Format("15:04:05.000"), end)
}

// Epochs returns, for each object of the main kind the sharder moved, the epochs during which
// its shards held it: the invariant of a sharded operator is that every successful write to the
// object, or to an object that belongs to it, comes from a shard with an epoch of the object
// that covers the write ([Covered]).
//
// The epochs are cut from moves ([Sharder.Moves]) and from when a witness that sees every
// request, such as the API server's audit log, received the sharder's writes: received holds,
// for each object, the reception times of the sharder's successful writes to it, oldest first,
// one for each of its moves, from a window that opens before the sharder's first write. Times come from the witness, not from the sharder, whose clock a
// test may skew, so that they compare with the receptions of the shards' writes. A drain starts
// no epoch: the object stays on its shard until that shard acknowledges it, and the next
// assignment ends the epoch. When the window of received ends while the sharder's last moves of
// an object are in flight, the witness holds fewer writes than moves: the moves it did not see
// are after everything it saw, and are left out. A witness that holds more writes of an object
// than moves is not the sharder's record of this run: Epochs returns an error naming the object.
//
// An epoch ends when the next assignment is received, not when the old shard acknowledged the
// drain: the acknowledgement is the old shard's own write, and the sharder assigns the object
// within one pass of it.
func Epochs(moves []Move, kind schema.GroupKind, received map[client.ObjectKey][]time.Time) (map[client.ObjectKey][]Epoch, error) {
	byObject := map[client.ObjectKey][]Move{}
	for _, m := range moves {
		if !m.Controlled && m.Kind.GroupKind() == kind {
			byObject[m.Object] = append(byObject[m.Object], m)
		}
	}
	epochs := make(map[client.ObjectKey][]Epoch, len(byObject))
	for key, ms := range byObject {
		times := received[key]
		if len(times) > len(ms) {
			return nil, fmt.Errorf("the witness holds %d writes of the sharder to %s %s and the sharder recorded %d moves of it",
				len(times), kind.Kind, key, len(ms))
		}
		for i, m := range ms[:len(times)] {
			if m.Drain {
				continue
			}
			es := epochs[key]
			if n := len(es); n > 0 {
				es[n-1].End = times[i]
			}
			epochs[key] = append(es, Epoch{Shard: m.To, Start: times[i]})
		}
	}
	for key, times := range received {
		if _, ok := byObject[key]; !ok && len(times) > 0 {
			return nil, fmt.Errorf("the witness holds %d writes of the sharder to %s %s and the sharder recorded no move of it",
				len(times), kind.Kind, key)
		}
	}
	return epochs, nil
}

// Covered reports whether one of epochs covers a write by shard that the witness received at
// t.
func Covered(epochs []Epoch, shard string, t time.Time) bool {
	return slices.ContainsFunc(epochs, func(e Epoch) bool { return e.Covers(shard, t) })
}
