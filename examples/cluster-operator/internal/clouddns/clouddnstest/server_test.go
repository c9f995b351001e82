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

package clouddnstest_test

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
)

func start(t *testing.T, opts clouddnstest.Options) (*clouddnstest.Server, *clouddns.Client) {
	t.Helper()
	s := clouddnstest.NewServer(opts)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, &clouddns.Client{BaseURL: hs.URL, Token: "secret"}
}

func TestRecordLifecycleWithPropagation(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	s, c := start(t, clouddnstest.Options{Token: "secret", PropagationDelay: 10 * time.Second, Clock: clock})
	rec := clouddns.Record{Name: "demo.example.com", Type: "A", Value: "10.0.0.1", TTL: 60, Owner: "uid-1"}

	created, err := c.Create(ctx, rec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created.Status).To(Equal(clouddns.StatusPending))

	_, err = c.Create(ctx, rec)
	g.Expect(errors.Is(err, clouddns.ErrConflict)).To(BeTrue(), "got %v", err)

	clock.SetTime(clock.Now().Add(10 * time.Second))
	got, err := c.Get(ctx, rec.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Status).To(Equal(clouddns.StatusInSync))
	g.Expect(got.Owner).To(Equal("uid-1"))

	// Put with the same content changes nothing; a new value goes back to PENDING.
	same, err := c.Put(ctx, rec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same.Revision).To(Equal(got.Revision))
	rec.Value = "10.0.0.2"
	changed, err := c.Put(ctx, rec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed.Status).To(Equal(clouddns.StatusPending))
	g.Expect(changed.Revision).To(BeNumerically(">", got.Revision))

	deleting, err := c.Delete(ctx, rec.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deleting.Status).To(Equal(clouddns.StatusDeleting))
	again, err := c.Delete(ctx, rec.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Revision).To(Equal(deleting.Revision), "deleting a record being deleted changes nothing")
	g.Expect(s.Records()).To(HaveLen(1), "still withdrawing")
	clock.SetTime(clock.Now().Add(10 * time.Second))
	_, err = c.Get(ctx, rec.Name)
	g.Expect(errors.Is(err, clouddns.ErrNotFound)).To(BeTrue(), "got %v", err)
	g.Expect(s.Records()).To(BeEmpty())
	_, err = c.Delete(ctx, rec.Name)
	g.Expect(errors.Is(err, clouddns.ErrNotFound)).To(BeTrue())

	g.Expect(s.Writes()).To(Equal(map[string]clouddnstest.Writes{rec.Name: {Requests: 7, Changes: 3}}),
		"created, changed and deleted once each; the refused create, the same put and the deletes after the first changed nothing")
}

func TestAuthenticationAndFaults(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s, c := start(t, clouddnstest.Options{Token: "secret", Seed: 1})

	bad := *c
	bad.Token = "wrong"
	_, err := bad.List(ctx)
	g.Expect(errors.Is(err, clouddns.ErrUnauthorized)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).NotTo(ContainSubstring("wrong"), "the token never appears in errors")

	s.SetFaults(clouddnstest.Faults{Down: true})
	_, err = c.List(ctx)
	g.Expect(errors.Is(err, clouddns.ErrUnavailable)).To(BeTrue(), "got %v", err)

	s.SetFaults(clouddnstest.Faults{ErrorRate: 0.5})
	failures := 0
	for range 200 {
		if _, err := c.List(ctx); err != nil {
			g.Expect(errors.Is(err, clouddns.ErrUnavailable)).To(BeTrue())
			failures++
		}
	}
	g.Expect(failures).To(BeNumerically("~", 100, 30))

	s.SetFaults(clouddnstest.Faults{})
	_, err = c.List(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Requests()["GET"]).To(BeNumerically(">=", 203))
}

func TestAnUnreachableServerIsUnavailable(t *testing.T) {
	g := NewWithT(t)
	hs := httptest.NewServer(clouddnstest.NewServer(clouddnstest.Options{}))
	c := &clouddns.Client{BaseURL: hs.URL, Token: "token"}
	hs.Close()

	_, err := c.Get(t.Context(), "x")

	g.Expect(errors.Is(err, clouddns.ErrUnavailable)).To(BeTrue(), "got %v", err)
}
