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

package conditions_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/matchers"
)

// The dependents the lifecycle's reconciler summarises into Ready.
const (
	configReady conditions.Type = "ConfigReady"
	dnsReady    conditions.Type = "DNSReady"
)

// lifecycleVerdicts is what the tools and tenon say about the object in one phase.
type lifecycleVerdicts struct {
	KStatus   string // cli-utils kstatus on the object as read from the API server
	Message   string // kstatus's message
	Ready     bool   // `kubectl wait --for=condition=Ready`, checked once
	Compliant bool   // matchers.BeCompliant
}

// TestLifecycleVerdictsAgreeWithKstatusAndKubectlWait drives a Widget through every phase of its
// life on a real API server, with the status a reconciler writes with the conditions and requeue
// packages, and checks at each phase that conditions.ComputeKStatus says what cli-utils' kstatus says
// (on the typed object, and on the unstructured object as tools read it) and that
// conditions.IsReady says what `kubectl wait --for=condition=Ready` says.
func TestLifecycleVerdictsAgreeWithKstatusAndKubectlWait(t *testing.T) {
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns, Finalizers: []string{"test.tenon.dev/dns-record"}},
		Spec: testtypes.WidgetSpec{Replicas: ptr.To(int32(1))}}

	// reconcile writes the status a reconciler would: it marks the dependents the step reached,
	// summarises Ready and lets requeue.Report record the outcome (Reconciling, Stalled,
	// observedGeneration), as the deferred call of a reconciler does.
	reconcile := func(g Gomega, config, dns *metav1.Condition, res ctrl.Result, err error) {
		for _, d := range []*metav1.Condition{config, dns} {
			if d != nil {
				conditions.Set(w, *d)
			}
		}
		conditions.Set(w, conditions.Summary(w, conditions.Ready, []conditions.Type{configReady, dnsReady}))
		_ = res
		if reportErr := requeue.Report(w, err); err == nil {
			g.Expect(reportErr).NotTo(HaveOccurred())
		} else {
			g.Expect(reportErr).To(MatchError(err))
		}
		g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	}
	dependent := func(ct conditions.Type, status metav1.ConditionStatus, reason conditions.Reason, message string) *metav1.Condition {
		return &metav1.Condition{Type: string(ct), Status: status, Reason: string(reason), Message: message}
	}

	phases := []struct {
		name  string
		enter func(g Gomega)
		want  lifecycleVerdicts
	}{
		{
			name:  "created",
			enter: func(g Gomega) { g.Expect(c.Create(ctx, w)).To(Succeed()) },
			// No status yet: kstatus has nothing to go on and assumes Current.
			want: lifecycleVerdicts{KStatus: "Current", Message: "Resource is current"},
		},
		{
			name: "reconciling",
			enter: func(g Gomega) {
				reconcile(g, dependent(configReady, "True", "Applied", "config map written"),
					dependent(dnsReady, "False", "Propagating", "waiting for the record to propagate"),
					ctrl.Result{RequeueAfter: time.Second}, nil)
			},
			want: lifecycleVerdicts{KStatus: "InProgress", Message: "DNSReady: waiting for the record to propagate", Compliant: true},
		},
		{
			name: "ready",
			enter: func(g Gomega) {
				reconcile(g, nil, dependent(dnsReady, "True", "Propagated", "record served"), ctrl.Result{}, nil)
			},
			want: lifecycleVerdicts{KStatus: "Current", Message: "Resource is Ready", Ready: true, Compliant: true},
		},
		{
			name: "generation bumped",
			enter: func(g Gomega) {
				w.Spec.Replicas = ptr.To(int32(3))
				g.Expect(c.Update(ctx, w)).To(Succeed())
				g.Expect(w.Generation).To(BeEquivalentTo(2))
			},
			// Ready is still True, for generation 1: neither tool trusts it.
			want: lifecycleVerdicts{KStatus: "InProgress", Message: "Widget generation is 2, but latest observed generation is 1", Compliant: true},
		},
		{
			name: "transient error",
			enter: func(g Gomega) {
				// The config step reaches generation 2, the DNS step fails and will be retried:
				// DNSReady still describes generation 1.
				reconcile(g, dependent(configReady, "True", "Applied", "config map written"), nil,
					ctrl.Result{}, errors.New("dns api: dial tcp 10.0.0.53:443: connection refused"))
			},
			want: lifecycleVerdicts{KStatus: "InProgress", Message: "Widget generation is 2, but latest observed generation is 1", Compliant: true},
		},
		{
			name: "terminal error",
			enter: func(g Gomega) {
				_, err := requeue.Terminal("TokenRefused", errors.New("dns api: token refused"))
				reconcile(g, nil, dependent(dnsReady, "False", "TokenRefused", "dns api: token refused"), ctrl.Result{}, err)
			},
			want: lifecycleVerdicts{KStatus: "Failed", Message: "dns api: token refused", Compliant: true},
		},
		{
			name: "recovered",
			enter: func(g Gomega) {
				// The token is fixed: no spec change, the same generation reconciles.
				reconcile(g, nil, dependent(dnsReady, "True", "Propagated", "record served"), ctrl.Result{}, nil)
			},
			want: lifecycleVerdicts{KStatus: "Current", Message: "Resource is Ready", Ready: true, Compliant: true},
		},
		{
			name: "deleting",
			enter: func(g Gomega) {
				g.Expect(c.Delete(ctx, w)).To(Succeed())
				g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
				g.Expect(w.DeletionTimestamp).NotTo(BeNil())
				conditions.MarkTrue(w, conditions.Deleting, "RemovingRecord", "removing the DNS record")
				g.Expect(c.Status().Update(ctx, w)).To(Succeed())
			},
			// Setting deletionTimestamp bumps metadata.generation: Ready describes the generation
			// before it.
			want: lifecycleVerdicts{KStatus: "Terminating", Message: "Resource scheduled for deletion", Compliant: true},
		},
	}
	for _, phase := range phases {
		t.Run(phase.name, func(t *testing.T) {
			g := NewWithT(t)
			phase.enter(g)

			// The object as the tools read it.
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), u)).To(Succeed())
			var typed testtypes.Widget
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), &typed)).To(Succeed())

			ref, err := kstatus.Compute(u)
			g.Expect(err).NotTo(HaveOccurred())
			out, err := env.Kubectl(ctx, "wait", "--for=condition=Ready", "--timeout=0s", "-n", ns, "widgets.test.tenon.dev/w")
			kubectlReady := err == nil
			if !kubectlReady {
				g.Expect(string(out)).To(ContainSubstring("condition not met"), "kubectl wait checks once with --timeout=0s")
			}
			compliant, err := matchers.BeCompliant().Match(&typed)
			g.Expect(err).NotTo(HaveOccurred())
			got := lifecycleVerdicts{KStatus: string(ref.Status), Message: ref.Message, Ready: kubectlReady, Compliant: compliant}
			g.Expect(cmp.Diff(phase.want, got)).To(BeEmpty(), "what the tools say (-want +got)")

			// tenon agrees with them, on the typed and on the unstructured object.
			want := verdict{Status: string(ref.Status), Message: ref.Message}
			fromTyped, err := compute(&typed)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cmp.Diff(want, verdict{string(fromTyped.Status), fromTyped.Message})).To(BeEmpty(), "ComputeKStatus on the typed object (-kstatus +tenon)")
			fromUnstructured, err := compute(u)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cmp.Diff(want, verdict{string(fromUnstructured.Status), fromUnstructured.Message})).To(BeEmpty(), "ComputeKStatus on the unstructured object (-kstatus +tenon)")
			adapter, err := conditions.FromUnstructured(u)
			g.Expect(err).NotTo(HaveOccurred())
			kubectlSaid := strings.TrimSpace(string(out))
			g.Expect(conditions.IsReady(&typed)).To(Equal(kubectlReady), "IsReady on the typed object; kubectl wait said %q", kubectlSaid)
			g.Expect(conditions.IsReady(adapter)).To(Equal(kubectlReady), "IsReady on the unstructured object; kubectl wait said %q", kubectlSaid)
		})
	}

	g := NewWithT(t)
	controllerutil.RemoveFinalizer(w, "test.tenon.dev/dns-record")
	g.Expect(c.Update(ctx, w)).To(Succeed())
}
