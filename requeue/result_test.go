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

package requeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/requeue"
)

func TestDoneAndAfter(t *testing.T) {
	g := NewWithT(t)

	res, err := requeue.Done()
	g.Expect(res).To(Equal(ctrl.Result{}))
	g.Expect(err).NotTo(HaveOccurred())

	res, err = requeue.After(3 * time.Second)
	g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: 3 * time.Second}))
	g.Expect(err).NotTo(HaveOccurred())

	res, _ = requeue.After(0)
	g.Expect(res.IsZero()).To(BeTrue())
	res, _ = requeue.After(-time.Second)
	g.Expect(res.IsZero()).To(BeTrue())
}

func TestPollJitterStaysWithinItsBounds(t *testing.T) {
	g := NewWithT(t)
	const interval = 10 * time.Second
	lo, hi := interval, time.Duration(float64(interval)*(1+requeue.PollJitter))
	var minSeen, maxSeen time.Duration = hi, 0
	var below, above int

	for range 10000 {
		res, err := requeue.Poll(interval)
		g.Expect(err).NotTo(HaveOccurred())
		d := res.RequeueAfter
		if d < lo {
			below++
		}
		if d >= hi {
			above++
		}
		minSeen, maxSeen = min(minSeen, d), max(maxSeen, d)
	}

	g.Expect(below).To(BeZero(), "never sooner than the interval")
	g.Expect(above).To(BeZero(), "never later than interval×(1+PollJitter)")
	// The draws spread over the range rather than sitting at one end.
	g.Expect(minSeen).To(BeNumerically("<", lo+(hi-lo)/10))
	g.Expect(maxSeen).To(BeNumerically(">", hi-(hi-lo)/10))

	res, _ := requeue.Poll(0)
	g.Expect(res.IsZero()).To(BeTrue())
}

func TestJitter(t *testing.T) {
	g := NewWithT(t)
	for range 10000 {
		d := requeue.Jitter(time.Second, 0.5)
		g.Expect(d).To(BeNumerically(">=", time.Second))
		g.Expect(d).To(BeNumerically("<", 1500*time.Millisecond))
	}
	g.Expect(requeue.Jitter(0, 1)).To(BeZero())
}

func TestTerminal(t *testing.T) {
	g := NewWithT(t)
	cause := errors.New("replicas must be odd")

	res, err := requeue.Terminal(cause)
	g.Expect(res.IsZero()).To(BeTrue())
	g.Expect(requeue.IsTerminal(err)).To(BeTrue())
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue(), "controller-runtime recognises it")
	g.Expect(errors.Is(err, cause)).To(BeTrue())

	_, again := requeue.Terminal(err)
	g.Expect(again).To(BeIdenticalTo(err), "an error already terminal is not wrapped twice")

	_, err = requeue.Terminal(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(requeue.IsTerminal(nil)).To(BeFalse())
	g.Expect(requeue.IsTerminal(cause)).To(BeFalse())
}

func TestRetryWithoutTheWrapperUsesAJitteredFixedDelay(t *testing.T) {
	g := NewWithT(t)
	res, err := requeue.Retry(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically(">=", requeue.RetryDelay))
	g.Expect(res.RequeueAfter).To(BeNumerically("<", time.Duration(float64(requeue.RetryDelay)*(1+requeue.PollJitter))))
}
