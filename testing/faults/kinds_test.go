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

package faults_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(testtypes.AddToScheme(s))
	return s
}()

// backend gives a test a client and a namespace to work in.
type backend func(t *testing.T) (client.Client, string)

func fakeBackend(t *testing.T) (client.Client, string) {
	return fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testtypes.Widget{}).Build(), "default"
}

// statusPatchOf is the rule every fault kind below is injected with: the first status patch of
// the Widget named "w".
func statusPatchOf(name string) faults.Match {
	return faults.Match{Verbs: faults.Verbs{faults.Patch}, Kind: "Widget", Name: name, Subresource: "status"}
}

// faultKinds lists each fault a rule can inject, with what a caller must be able to tell about
// the error it gets.
var faultKinds = []struct {
	name  string
	rule  faults.Rule
	check func(g Gomega, err error)
}{
	{"Conflict is a 409 that names the object", faults.Rule{Fault: faults.Conflict}, func(g Gomega, err error) {
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(Equal(`Operation cannot be fulfilled on widgets.test.tenon.dev "w": ` +
			`the object has been modified; please apply your changes to the latest version and try again`))
	}},
	{"NotFound is a 404", faults.Rule{Fault: faults.NotFound}, func(g Gomega, err error) {
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(Equal(`widgets.test.tenon.dev "w" not found`))
	}},
	{"AlreadyExists is a 409 AlreadyExists", faults.Rule{Fault: faults.AlreadyExists}, func(g Gomega, err error) {
		g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
	}},
	{"Forbidden is a 403 that names resource and namespace", faults.Rule{Fault: faults.Forbidden}, func(g Gomega, err error) {
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(And(
			HavePrefix(`widgets.test.tenon.dev "w" is forbidden: injected by fault plan rule 0: `),
			ContainSubstring(`cannot patch resource "widgets/status" in API group "test.tenon.dev" in the namespace`)))
	}},
	{"InternalError is a 500", faults.Rule{Fault: faults.InternalError}, func(g Gomega, err error) {
		g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(Equal("Internal error occurred: injected by fault plan rule 0"))
	}},
	{"ServiceUnavailable is a 503 with the default Retry-After", faults.Rule{Fault: faults.ServiceUnavailable}, func(g Gomega, err error) {
		g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%v", err)
		g.Expect(retryAfter(err)).To(Equal(1))
	}},
	{"TooManyRequests is a 429 with the rule's Retry-After", faults.Rule{Fault: faults.TooManyRequests, RetryAfter: 3 * time.Second}, func(g Gomega, err error) {
		g.Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "%v", err)
		g.Expect(retryAfter(err)).To(Equal(3))
	}},
	{"Timeout is a 504", faults.Rule{Fault: faults.Timeout}, func(g Gomega, err error) {
		g.Expect(apierrors.IsTimeout(err)).To(BeTrue(), "%v", err)
	}},
	{"Err is returned as it is", faults.Rule{Err: fmt.Errorf("dial tcp 10.0.0.1:6443: %w", syscall.ECONNREFUSED)}, func(g Gomega, err error) {
		g.Expect(errors.Is(err, syscall.ECONNREFUSED)).To(BeTrue(), "%v", err)
	}},
}

// retryAfter returns the Retry-After seconds err suggests, or -1.
func retryAfter(err error) int {
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok {
		return seconds
	}
	return -1
}

// proveFaultKinds injects each fault kind into the first status patch of a Widget, and checks
// that the caller gets the error, that the write never reached the API server, and that the next
// patch goes through.
func proveFaultKinds(t *testing.T, newBackend backend) {
	for i, kind := range faultKinds {
		t.Run(kind.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			inner, ns := newBackend(t)
			name := "w"
			w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
			g.Expect(inner.Create(ctx, w)).To(Succeed())

			rule := kind.rule
			rule.Match, rule.Nth = statusPatchOf(name), 1
			c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{rule}})

			before := w.DeepCopy()
			w.Status.Phase = fmt.Sprintf("attempt-%d", i)
			err := c.Status().Patch(ctx, w, client.MergeFrom(before))
			kind.check(g, err)

			var latest testtypes.Widget
			g.Expect(inner.Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
			g.Expect(latest.Status.Phase).To(BeEmpty(), "the injected fault must keep the write from the API server")

			g.Expect(c.Status().Patch(ctx, w, client.MergeFrom(before))).To(Succeed(), "only the first patch is faulted")
			g.Expect(inner.Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
			g.Expect(latest.Status.Phase).To(Equal(w.Status.Phase))

			calls := c.Calls(faults.Patch, faults.Status)
			g.Expect(calls).To(HaveLen(2))
			g.Expect(calls[0].Outcome).To(Equal(faults.Injected))
			g.Expect(calls[0].Rule).To(Equal(0))
			g.Expect(calls[0].Forwarded).To(BeFalse())
			g.Expect(calls[1].Outcome).To(Equal(faults.OK))
			g.Expect(calls[1].ResourceVersion).To(Equal(latest.ResourceVersion))
		})
	}
}

// proveLostResponse checks that a LostResponse timeout lets the write through and fails the
// caller anyway: the ambiguous outcome of a real timeout.
func proveLostResponse(t *testing.T, newBackend backend) {
	g := NewWithT(t)
	ctx := t.Context()
	inner, ns := newBackend(t)
	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{{
		Match: faults.Match{Verbs: faults.Verbs{faults.Update}},
		Every: 2, Fault: faults.Timeout, LostResponse: true,
	}}})

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "lost", Namespace: ns}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	w.Spec.Size = "small"
	g.Expect(c.Update(ctx, w)).To(Succeed(), "the 1st update is not faulted")
	w.Spec.Size = "large"
	err := c.Update(ctx, w)
	g.Expect(apierrors.IsTimeout(err)).To(BeTrue(), "the 2nd update times out: %v", err)

	var latest testtypes.Widget
	g.Expect(inner.Get(ctx, client.ObjectKeyFromObject(w), &latest)).To(Succeed())
	g.Expect(latest.Spec.Size).To(Equal("large"), "the timed-out update was applied nevertheless")
	updates := c.Calls(faults.Update)
	g.Expect(updates).To(HaveLen(2))
	g.Expect(updates[1].Outcome).To(Equal(faults.Injected))
	g.Expect(updates[1].Forwarded).To(BeTrue())
	g.Expect(updates[1].String()).To(ContainSubstring("after the call went through"))
}

// proveLatency checks that latency delays a call, and that the call's context cuts it short.
func proveLatency(t *testing.T, newBackend backend) {
	g := NewWithT(t)
	inner, ns := newBackend(t)
	const latency = 50 * time.Millisecond
	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{{
		Match: faults.Match{Verbs: faults.Verbs{faults.List}}, Latency: latency,
	}}})

	start := time.Now()
	g.Expect(c.List(t.Context(), &testtypes.WidgetList{}, client.InNamespace(ns))).To(Succeed())
	g.Expect(time.Since(start)).To(BeNumerically(">=", latency))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := c.List(ctx, &testtypes.WidgetList{}, client.InNamespace(ns))
	g.Expect(err).To(MatchError(context.Canceled))
	g.Expect(err.Error()).To(HavePrefix("failed to list Widget in " + ns + ": "))

	lists := c.Calls(faults.List)
	g.Expect(lists).To(HaveLen(2))
	g.Expect(lists[0].Latency).To(Equal(latency))
	g.Expect(lists[0].Outcome).To(Equal(faults.OK))
	g.Expect(lists[1].Outcome).To(Equal(faults.Failed))
	g.Expect(lists[1].Forwarded).To(BeFalse())
}

// proveNotFoundAfterDelete checks the After condition: only the first Get after a Delete of the
// same object fails.
func proveNotFoundAfterDelete(t *testing.T, newBackend backend) {
	g := NewWithT(t)
	ctx := t.Context()
	inner, ns := newBackend(t)
	c := faults.New(t, inner, faults.Plan{Rules: []faults.Rule{{
		Match: faults.Match{Verbs: faults.Verbs{faults.Get}, Kind: "Widget"},
		After: faults.Delete, Nth: 1, Fault: faults.NotFound,
	}}})

	held := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns, Finalizers: []string{"test.tenon.dev/hold"}}}
	other := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	g.Expect(c.Create(ctx, held)).To(Succeed())
	g.Expect(c.Create(ctx, other)).To(Succeed())
	key := client.ObjectKeyFromObject(held)

	g.Expect(c.Get(ctx, key, &testtypes.Widget{})).To(Succeed(), "no Delete yet")
	g.Expect(c.Delete(ctx, held)).To(Succeed()) // held by its finalizer: it still exists
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(other), &testtypes.Widget{})).To(Succeed(), "another object is not affected")
	g.Expect(apierrors.IsNotFound(c.Get(ctx, key, &testtypes.Widget{}))).To(BeTrue(), "the first Get after the Delete")
	var latest testtypes.Widget
	g.Expect(c.Get(ctx, key, &latest)).To(Succeed(), "the second Get after the Delete")
	g.Expect(latest.DeletionTimestamp).NotTo(BeNil())

	latest.Finalizers = nil
	g.Expect(c.Update(ctx, &latest)).To(Succeed())
	g.Expect(c.Count(faults.Injected)).To(Equal(1))
}
