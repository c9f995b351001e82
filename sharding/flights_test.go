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

package sharding

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// A drain waits for the reconciles of the object in flight in every controller, and no
// reconcile starts once it was seen, until a read newer than the drain shows it over.
func TestFlightsOrderTheDrainAfterEveryReconcileInFlight(t *testing.T) {
	g := NewWithT(t)
	f := newFlights()
	g.Expect(f.begin("k", "10")).To(BeTrue(), "another controller's reconcile")
	g.Expect(f.begin("other", "10")).To(BeTrue())

	drained := make(chan error, 1)
	go func() { drained <- f.drain(context.Background(), "k", "11") }()
	g.Consistently(drained).WithTimeout(100*time.Millisecond).ShouldNot(Receive(), "the drain did not wait for the reconcile in flight")
	f.end("other")
	g.Consistently(drained).WithTimeout(50*time.Millisecond).ShouldNot(Receive(), "another object's reconcile ended the wait")
	f.end("k")
	g.Eventually(drained).Should(Receive(BeNil()))

	g.Expect(f.begin("k", "11")).To(BeFalse(), "a read as old as the drain")
	g.Expect(f.begin("k", "9")).To(BeFalse(), "a read from a cache that lags")
	g.Expect(f.begin("k", "12")).To(BeTrue(), "a read newer than the drain, without the drain label")
	f.end("k")
	g.Expect(f.drain(context.Background(), "k", "13")).To(Succeed())
	g.Expect(f.begin("k", "")).To(BeTrue(), "the object gone: the reconciler forgets it")
	f.end("k")
	g.Expect(f.inFlight).To(BeEmpty())
	g.Expect(f.draining).To(BeEmpty())
}

func TestFlightsDrainEndsWithItsContext(t *testing.T) {
	g := NewWithT(t)
	f := newFlights()
	g.Expect(f.begin("k", "1")).To(BeTrue())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Expect(f.drain(ctx, "k", "2")).To(MatchError(context.Canceled))
}
