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
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
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
	lo, hi := interval, time.Duration(float64(interval)*(1+0.1))
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
	g.Expect(above).To(BeZero(), "never later than interval×1.1")
	// The draws spread over the range rather than sitting at one end.
	g.Expect(minSeen).To(BeNumerically("<", lo+(hi-lo)/10))
	g.Expect(maxSeen).To(BeNumerically(">", hi-(hi-lo)/10))

	res, _ := requeue.Poll(0)
	g.Expect(res.IsZero()).To(BeTrue())
}

func TestTerminal(t *testing.T) {
	g := NewWithT(t)
	cause := errors.New("spec.replicas must be odd")

	res, err := requeue.Terminal("InvalidSpec", cause)

	g.Expect(res).To(Equal(ctrl.Result{}))
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue())
	g.Expect(errors.Is(err, cause)).To(BeTrue(), "the cause stays reachable")
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))

	_, err = requeue.Terminal("InvalidSpec", nil)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestTerminalErrorCarriesItsReasonThroughWrapping(t *testing.T) {
	g := NewWithT(t)
	cause := errors.New("the provider refused the token")

	err := fmt.Errorf("failed to observe the record: %w", requeue.TerminalError("InvalidCredentials", cause))

	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue())
	g.Expect(errors.Is(err, cause)).To(BeTrue(), "the cause stays reachable")
	g.Expect(err).To(MatchError("failed to observe the record: terminal error: the provider refused the token"))
	reason, ok := requeue.TerminalReason(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(reason).To(Equal(conditions.Reason("InvalidCredentials")))

	// The outermost reason wins: a caller that stalls with a reason of its own says so.
	_, outer := requeue.Terminal("CreateFailed", err)
	reason, _ = requeue.TerminalReason(outer)
	g.Expect(reason).To(Equal(conditions.Reason("CreateFailed")))

	// A plain terminal error, or one that is not terminal, has none.
	for _, err := range []error{reconcile.TerminalError(cause), cause, nil} {
		_, ok := requeue.TerminalReason(err)
		g.Expect(ok).To(BeFalse(), "%v", err)
	}
	g.Expect(requeue.TerminalError("InvalidCredentials", nil)).To(Succeed())
}

func TestATerminalErrorWithoutAValidReasonHasOneThatTheAPIServerAccepts(t *testing.T) {
	g := NewWithT(t)
	cause := errors.New("the provider refused the token")

	// No reason given: none is claimed, so a caller falls back to its own.
	_, ok := requeue.TerminalReason(requeue.TerminalError("", cause))
	g.Expect(ok).To(BeFalse(), "an empty reason is no reason")

	// An empty outer reason keeps the inner one.
	inner := requeue.TerminalError("InvalidCredentials", cause)
	reason, ok := requeue.TerminalReason(requeue.TerminalError("", inner))
	g.Expect(ok).To(BeTrue())
	g.Expect(reason).To(Equal(conditions.Reason("InvalidCredentials")))

	// A reason the API server would refuse is made one it accepts.
	for given, want := range map[conditions.Reason]conditions.Reason{
		"invalid credentials": "InvalidCredentials",
		"9Lives":              "Error9Lives",
		"Name:":               "Name",
		"Quota_Exceeded,Hard": "Quota_Exceeded,Hard", // valid as it is: unchanged
	} {
		reason, ok := requeue.TerminalReason(requeue.TerminalError(given, cause))
		g.Expect(ok).To(BeTrue(), "%q", given)
		g.Expect(reason).To(Equal(want), "%q", given)
	}

	// Nothing to make a reason of is no reason.
	for _, given := range []conditions.Reason{"!!!", " ", ": quota"} {
		_, ok := requeue.TerminalReason(requeue.TerminalError(given, cause))
		g.Expect(ok).To(BeFalse(), "%q", given)
	}

	// A Retry made terminal is terminal, for Classify as for controller-runtime.
	_, retry := requeue.Retry("waiting")
	g.Expect(requeue.Classify(requeue.TerminalError("Gave up", retry))).To(Equal(requeue.ClassTerminal))

	// Terminal twice is one terminal error: the message says so once.
	err := requeue.TerminalError("CreateFailed", inner)
	g.Expect(err).To(MatchError("terminal error: the provider refused the token"))
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue())
}

func TestRetryIsAnErrorOnlyWithoutTheWrapper(t *testing.T) {
	g := NewWithT(t)
	_, err := requeue.Retry("waiting for the database")
	g.Expect(err).To(MatchError("not done yet, retrying: waiting for the database"))
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassRetry))
}
