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
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(testtypes.AddToScheme(scheme))
	env = testenv.New(testenv.Options{CRDDirectoryPaths: []string{testtypes.CRDDirectory()}, Scheme: scheme})
	os.Exit(env.Run(m))
}

// reconcileStatus sets the status a controller would for w's current generation.
func reconcileStatus(g Gomega, w *testtypes.Widget) {
	conditions.MarkTrue(w, "ConfigReady", "Applied", "config map written")
	conditions.MarkFalse(w, conditions.Degraded, "AsExpected", "héllo <world> & \"quotes\"")
	conditions.Set(w, conditions.Summary(w, conditions.Ready, []conditions.Type{"ConfigReady", conditions.Degraded}))
	_, err := conditions.SetObservedGeneration(w)
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkReconciled(w)
}

func TestConditionsRoundTripThroughTheAPIServerUnchanged(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: env.Namespace(t)}}
	g.Expect(c.Create(ctx, w)).To(Succeed())

	reconcileStatus(g, w)
	written := w.Status.DeepCopy()
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())

	var back testtypes.Widget
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), &back)).To(Succeed())

	// Byte-identical serialisation, and equal Go values (times included, with their location).
	wantJSON, err := json.Marshal(written)
	g.Expect(err).NotTo(HaveOccurred())
	gotJSON, err := json.Marshal(back.Status)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(gotJSON)).To(Equal(string(wantJSON)))
	g.Expect(cmp.Diff(*written, back.Status)).To(BeEmpty())

	// The next reconcile of the object read back computes the same status: nothing to write.
	again := back.DeepCopy()
	reconcileStatus(g, again)
	g.Expect(cmp.Diff(back.Status, again.Status)).To(BeEmpty(), "a second reconcile must not change the status")
}

func TestTheAPIServerAcceptsEverythingValidateAccepts(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: env.Namespace(t)}}
	g.Expect(c.Create(ctx, w)).To(Succeed())

	// The longest type, reason and message Validate accepts.
	longType := conditions.Type("a.example.com/" + strings.Repeat("T", 63))
	longReason := conditions.Reason(strings.Repeat("R", 1024))
	conditions.MarkFalse(w, longType, longReason, strings.Repeat("m", 32768))
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonFrom("dial tcp: connection refused"), "ok")
	for _, c := range w.Status.Conditions {
		g.Expect(conditions.Validate(c)).To(Succeed())
	}

	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
}

func TestKubectlWaitAgreesWithIsReady(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "waited", Namespace: ns}, Spec: testtypes.WidgetSpec{Replicas: ptr.To(int32(1))}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	kubectlWait := func(timeout string) error {
		_, err := env.Kubectl(ctx, "wait", "--for=condition=Ready", "--timeout="+timeout, "-n", ns, "widgets.test.tenon.dev/waited")
		return err
	}

	// Ready True for the current generation: both say ready.
	reconcileStatus(g, w)
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	g.Expect(conditions.IsReady(w)).To(BeTrue())
	g.Expect(kubectlWait("30s")).To(Succeed())

	// The spec changes; the controller has not caught up: Ready is still True, but for an older
	// generation. Neither kubectl wait nor IsReady trusts it.
	w.Spec.Replicas = ptr.To(int32(2))
	g.Expect(c.Update(ctx, w)).To(Succeed())
	g.Expect(w.Generation).To(BeEquivalentTo(2))
	g.Expect(conditions.IsTrue(w, conditions.Ready)).To(BeTrue())
	g.Expect(conditions.IsReady(w)).To(BeFalse())
	g.Expect(kubectlWait("2s")).To(MatchError(ContainSubstring("timed out waiting for the condition")))
	res, err := compute(w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Status).To(Equal(conditions.KStatusInProgress))

	// The controller reconciles the new generation.
	reconcileStatus(g, w)
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	g.Expect(conditions.IsReady(w)).To(BeTrue())
	g.Expect(kubectlWait("30s")).To(Succeed())
	res, err = compute(w)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Status).To(Equal(conditions.KStatusCurrent))
}
