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

package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAuditLogRecordsEveryRequestOfAUser sends a known set of requests as one user and checks
// that the log between two marks holds exactly those, with their verbs, names and status codes,
// also across an API server restart.
func TestAuditLogRecordsEveryRequestOfAUser(t *testing.T) {
	e := startOwnEnvironment(t, Options{Scheme: testScheme(), AuditLog: true})
	g := NewWithT(t)
	ctx := t.Context()
	log := e.AuditLog()
	g.Expect(log).NotTo(BeNil())

	ns := e.Namespace(t)
	u := e.NewUser(t, "audited", Roles{&rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}}},
	}}, RoleNamespace(ns))
	c := u.Client()

	// requests sends create, get, update, merge patch, apply, a create that conflicts, a get of
	// something missing and a delete: 8 requests, 5 of them writes.
	requests := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"a": "1"}}
		g.Expect(c.Create(ctx, cm)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
		cm.Data["b"] = "2"
		g.Expect(c.Update(ctx, cm)).To(Succeed())
		g.Expect(c.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"c":"3"}}`)))).To(Succeed())
		applied := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data:       map[string]string{"d": "4"},
		}
		g.Expect(c.Patch(ctx, applied, client.Apply, client.FieldOwner("audited"))).To(Succeed()) //nolint:staticcheck // the audit log must see a plain apply patch
		err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
		g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "create of an existing ConfigMap: %v", err)
		err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-missing"}, &corev1.ConfigMap{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "get of a missing ConfigMap: %v", err)
		g.Expect(c.Delete(ctx, cm)).To(Succeed())
	}
	want := func(name string) map[string]int {
		return map[string]int{
			"create " + name + " 201":      1,
			"get " + name + " 200":         1,
			"update " + name + " 200":      1,
			"patch " + name + " 200":       2,
			"create " + name + " 409":      1,
			"get " + name + "-missing 404": 1,
			"delete " + name + " 200":      1,
		}
	}
	key := func(ev AuditEvent) string { return fmt.Sprintf("%s %s %d", ev.Verb, ev.Name, ev.Code) }

	check := func(from, to AuditMark, name string) {
		t.Helper()
		events, err := log.Between(from, to)
		g.Expect(err).NotTo(HaveOccurred())
		mine := events.ByUser(u.Name())
		g.Expect(mine.Count(key)).To(Equal(want(name)))
		g.Expect(mine.Writes()).To(HaveLen(6), "create, update, two patches, the conflicting create and the delete")
		for _, ev := range mine {
			g.Expect(ev.Resource).To(Equal("configmaps"))
			g.Expect(ev.Namespace).To(Equal(ns))
			g.Expect(ev.Received.IsZero()).To(BeFalse())
			g.Expect(ev.Completed.Before(ev.Received)).To(BeFalse())
			g.Expect(ev.Completed.After(to.Time())).To(BeFalse())
			g.Expect(ev.Completed.Before(from.Time())).To(BeFalse())
		}
		for _, ev := range events {
			g.Expect(ev.Name).NotTo(HavePrefix(auditMarkPrefix), "marks are left out")
		}
	}

	before, err := log.Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	requests("first")
	after, err := log.Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	check(before, after, "first")
	_, err = log.Between(after, before)
	g.Expect(err).To(MatchError(ContainSubstring("is before mark")))

	// A restarted API server writes on into the same log.
	g.Expect(e.RestartAPIServer(ctx)).To(Succeed())
	restarted, err := log.Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	requests("second")
	events, err := log.Since(restarted)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events.ByUser(u.Name()).Count(key)).To(Equal(want("second")))

	// From the start of the log, both rounds are there, after NewUser's access reviews.
	all, err := log.Since(AuditMark{})
	g.Expect(err).NotTo(HaveOccurred())
	byResource := all.ByUser(u.Name()).Writes().Count(func(ev AuditEvent) string { return ev.Resource })
	g.Expect(byResource).To(HaveKeyWithValue("configmaps", 12))
	g.Expect(byResource).To(HaveKey("selfsubjectaccessreviews"))
	g.Expect(byResource).To(HaveLen(2))
}

// abandonedBody is a request body that fails when read: the client gives up on the request
// after its headers went out, as a fenced transport does for a write whose fence closed.
type abandonedBody struct{}

func (abandonedBody) Read([]byte) (int, error) { return 0, errors.New("abandoned") }
func (abandonedBody) Close() error             { return nil }

// TestAuditLogTellsARequestTheClientAbandonedFromOneThatFailed sends a patch whose body the
// client abandons after its headers, and requests that fail on the API server's side, and checks
// that only the first is Abandoned, with the API server's message, and that it changed nothing.
func TestAuditLogTellsARequestTheClientAbandonedFromOneThatFailed(t *testing.T) {
	e := startOwnEnvironment(t, Options{Scheme: testScheme(), AuditLog: true})
	g := NewWithT(t)
	ctx := t.Context()
	ns := e.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "abandoned", Namespace: ns}, Data: map[string]string{"a": "1"}}
	g.Expect(e.Client().Create(ctx, cm)).To(Succeed())
	before, err := e.AuditLog().Mark(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	hc, err := rest.HTTPClientFor(e.Config())
	g.Expect(err).NotTo(HaveOccurred())
	uri := "/api/v1/namespaces/" + ns + "/configmaps/abandoned"
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, strings.TrimSuffix(e.Config().Host, "/")+uri, abandonedBody{})
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.ContentLength = int64(len(`{"data":{"a":"2"}}`))
	_, err = hc.Do(req)
	g.Expect(err).To(MatchError(ContainSubstring("abandoned")))
	err = e.Client().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "abandoned", Namespace: ns}})
	g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "a create of an existing ConfigMap: %v", err)
	err = e.Client().Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"a":1}}`)))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a patch the API server refuses: %v", err)

	// The API server completes the abandoned request when it notices the reset.
	var abandoned, failed AuditEvents
	g.Eventually(func(g Gomega) {
		events, err := e.AuditLog().Since(before)
		g.Expect(err).NotTo(HaveOccurred())
		mine := events.Filter(func(ev AuditEvent) bool { return ev.Name == "abandoned" && ev.IsWrite() })
		abandoned = mine.Filter(AuditEvent.Abandoned)
		failed = mine.Filter(func(ev AuditEvent) bool { return !ev.Abandoned() })
		g.Expect(abandoned).To(HaveLen(1))
	}).Should(Succeed())
	g.Expect(abandoned[0].URI).To(Equal(uri))
	g.Expect(abandoned[0].Code).To(Equal(http.StatusInternalServerError))
	g.Expect(abandoned[0].Message).To(ContainSubstring("CANCEL"))
	g.Expect(failed.Count(func(ev AuditEvent) string { return fmt.Sprintf("%s %d", ev.Verb, ev.Code) })).To(Equal(map[string]int{"create 409": 1, "patch 422": 1}))
	for _, ev := range failed {
		g.Expect(ev.Message).NotTo(BeEmpty(), "a failure carries the API server's message")
	}
	g.Expect(e.Client().Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	g.Expect(cm.Data).To(Equal(map[string]string{"a": "1"}), "the abandoned patch changed nothing")
}

func TestAuditLogIsNilWhenOff(t *testing.T) {
	if env.AuditLog() != nil {
		t.Fatal("the shared environment does not ask for an audit log, but AuditLog() is not nil")
	}
}
