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

package sharder_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/testing/sharder"
)

var (
	configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secretKind    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	web           = client.ObjectKey{Namespace: "default", Name: "web"}
	queue         = client.ObjectKey{Namespace: "default", Name: "queue"}
	t0            = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func TestEpochsAreCutAtTheAssignmentsTheWitnessReceived(t *testing.T) {
	g := NewWithT(t)
	moves := []sharder.Move{
		{Kind: configMapKind, Object: web, To: "shard-a"},
		{Kind: secretKind, Object: client.ObjectKey{Namespace: "default", Name: "web-tls"}, Controlled: true, To: "shard-a"},
		{Kind: configMapKind, Object: queue, To: "shard-b"},
		{Kind: configMapKind, Object: web, From: "shard-a", To: "shard-b", Drain: true},
		{Kind: configMapKind, Object: web, To: "shard-b"},
		{Kind: configMapKind, Object: web, From: "shard-b", To: "shard-c"},
		// In flight at the end of the window: the witness has not seen it.
		{Kind: configMapKind, Object: queue, From: "shard-b", To: "shard-a"},
	}
	received := map[client.ObjectKey][]time.Time{
		web:   {at(1), at(5), at(6), at(9)},
		queue: {at(2)},
	}
	epochs, err := sharder.Epochs(moves, configMapKind.GroupKind(), received)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(epochs).To(Equal(map[client.ObjectKey][]sharder.Epoch{
		// The drain at 5 s starts nothing: shard-a holds web until the assignment at 6 s.
		web:   {{Shard: "shard-a", Start: at(1), End: at(6)}, {Shard: "shard-b", Start: at(6), End: at(9)}, {Shard: "shard-c", Start: at(9)}},
		queue: {{Shard: "shard-b", Start: at(2)}},
	}))

	for _, tc := range []struct {
		shard string
		at    time.Time
		want  bool
	}{
		{"shard-a", at(3), true},
		{"shard-a", at(1), false}, // received with the assignment: not after it
		{"shard-a", at(6), false}, // the next assignment ends the epoch
		{"shard-b", at(3), false},
		{"shard-b", at(7), true},
		{"shard-c", at(100), true}, // the last epoch is open
		{"shard-a", at(100), false},
	} {
		g.Expect(sharder.Covered(epochs[web], tc.shard, tc.at)).To(Equal(tc.want), "a write to web by %s at %s", tc.shard, tc.at.Format(time.TimeOnly))
	}
}

func TestEpochsRefusesAWitnessThatIsNotTheSharderRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		received map[client.ObjectKey][]time.Time
		want     string
	}{
		{"more writes than moves", map[client.ObjectKey][]time.Time{web: {at(1), at(2)}}, "holds 2 writes of the sharder to ConfigMap default/web and the sharder recorded 1 moves"},
		{"writes to an object never moved", map[client.ObjectKey][]time.Time{web: {at(1)}, queue: {at(2)}}, "ConfigMap default/queue and the sharder recorded no move"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := sharder.Epochs([]sharder.Move{{Kind: configMapKind, Object: web, To: "shard-a"}}, configMapKind.GroupKind(), tc.received)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestAnEpochReadsAsItsShardAndSpan(t *testing.T) {
	g := NewWithT(t)
	g.Expect(sharder.Epoch{Shard: "shard-a", Start: at(1), End: at(2)}.String()).To(Equal("shard-a 12:00:01.000–12:00:02.000"))
	g.Expect(strings.HasSuffix(sharder.Epoch{Shard: "shard-a", Start: at(1)}.String(), "–…")).To(BeTrue())
}
