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

package patch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// TestRealKindsSteadyStateSendsNothing reconciles one object of every real kind twice, as a
// controller does when nothing changed, and counts the second reconcile's writes in the API
// server's audit log: there must be none, whatever the API server defaulted or normalised after
// the first. Two reconcilers: one applies the kind's seed (its spec with Applier.Apply, its status
// with Applier.ApplyStatus), typed for Kubernetes' own kinds; one reads the object and patches
// labels and annotations with a Helper, as a controller of the object does. A reconcile after a
// restart, with an Applier that remembers nothing, must send nothing either.
func TestRealKindsSteadyStateSendsNothing(t *testing.T) {
	kinds := loadRealKinds(t)
	ns := env.Namespace(t)
	audit := env.AuditLog()
	if audit == nil {
		t.Fatal("the test environment has no audit log")
	}
	for _, k := range kinds {
		t.Run(k.Family+"/"+k.GVK.Kind, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			agent := "steady-" + strings.ToLower(k.GVK.Kind)
			c := clientWithAgent(t, agent)
			name := "steady"
			if !k.Namespaced {
				name = ns + "-steady"
			}
			a := patch.NewApplier(c, "steady-applier", patch.ApplierOptions{})
			applied := func() client.Object {
				u := realkinds.Object(k.Kind, ns, name)
				delete(u.Object, "status")
				return asTyped(g, k, u)
			}
			status := func() client.Object { return asTyped(g, k, realkinds.Object(k.Kind, ns, name)) }
			_, hasStatus := k.Seed()["status"]
			reconcile := func() {
				_, err := a.Apply(ctx, applied())
				g.Expect(err).NotTo(HaveOccurred())
				if hasStatus && !k.NoStatus {
					_, err = a.ApplyStatus(ctx, status())
					g.Expect(err).NotTo(HaveOccurred())
				}
				obj := asTyped(g, k, realkinds.Object(k.Kind, ns, name))
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				h, err := patch.NewHelper(obj, c)
				g.Expect(err).NotTo(HaveOccurred())
				obj.SetLabels(withEntry(obj.GetLabels(), "example.com/reconciled", "yes"))
				obj.SetAnnotations(withEntry(obj.GetAnnotations(), "example.com/note", "steady"))
				g.Expect(h.Patch(ctx, obj)).To(Succeed())
			}
			t.Cleanup(func() {
				u := realkinds.Object(k.Kind, ns, name)
				_ = client.IgnoreNotFound(env.Client().Delete(context.Background(), u))
			})

			writesOf := func() testenv.AuditEvents {
				mark, err := audit.Mark(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				reconcile()
				events, err := audit.Since(mark)
				g.Expect(err).NotTo(HaveOccurred())
				return events.Filter(func(e testenv.AuditEvent) bool { return e.UserAgent == agent }).Writes()
			}

			reconcile()
			second := writesOf()
			if k.GVK.Kind == "Node" {
				// The API server's admission adds a not-ready taint to a Node it creates, in the
				// list of taints the manager owns as a whole: the second apply removes it, once.
				g.Expect(describeEvents(second)).To(ConsistOf(HavePrefix("patch nodes/ ")), "the second reconcile removes the admission's taint")
			} else {
				g.Expect(second).To(BeEmpty(), "the second reconcile's writes: %v", describeEvents(second))
			}
			third := writesOf()
			g.Expect(third).To(BeEmpty(), "the third reconcile's writes: %v", describeEvents(third))

			// After a restart: an Applier that remembers nothing proves the same from
			// managedFields.
			a = patch.NewApplier(c, "steady-applier", patch.ApplierOptions{})
			restarted := writesOf()
			g.Expect(restarted).To(BeEmpty(), "the writes after a restart: %v", describeEvents(restarted))
		})
	}
}

// clientWithAgent returns a client of the test environment that sends agent as its User-Agent.
func clientWithAgent(t *testing.T, agent string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config())
	cfg.UserAgent = agent
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to create a client: %v", err)
	}
	return c
}

// asTyped returns u as k's Go type for a built-in kind, or u itself.
func asTyped(g Gomega, k *realKind, u *unstructured.Unstructured) client.Object {
	if !k.Builtin() {
		return u
	}
	obj := k.New()
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)).To(Succeed())
	obj.GetObjectKind().SetGroupVersionKind(k.GVK)
	return obj
}

func withEntry(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func describeEvents(es testenv.AuditEvents) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s %s/%s %s %s: %d", e.Verb, e.Resource, e.Subresource, e.Namespace, e.Name, e.Code))
	}
	return out
}
