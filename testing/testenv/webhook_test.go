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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestWebhooksOfTheTestsManagerDefaultValidateAndConvert(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	g.Expect(SetupDiskWebhooks(mgr, "the test's manager")).To(Succeed())
	StartManager(t, mgr)

	// Created at v1: the mutating and validating webhooks see it at v2, converted.
	d1 := &DiskV1{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Spec: DiskV1Spec{SizeGiB: 10}}
	g.Expect(env.Client().Create(ctx, d1)).To(Succeed())
	g.Expect(d1.Spec).To(Equal(DiskV1Spec{SizeGiB: 10, Tier: "standard"}), "defaulted by the mutating webhook")
	d2 := &DiskV2{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(d1), d2)).To(Succeed())
	g.Expect(d2.Spec).To(Equal(DiskV2Spec{Size: "10Gi", Tier: "standard"}), "read at v2, converted")

	// Created at v2, read at v1 through the manager's cache: its informer lists at v1.
	logs := &DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "logs"}, Spec: DiskV2Spec{Size: "20Gi", Tier: "premium"}}
	g.Expect(env.Client().Create(ctx, logs)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var d DiskV1
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(logs), &d)).To(Succeed())
		g.Expect(d.Spec).To(Equal(DiskV1Spec{SizeGiB: 20, Tier: "premium"}))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// Refused by the validating webhook, at either version.
	bad := &DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: DiskV2Spec{Size: "1Gi", Tier: "gold"}}
	err := env.Client().Create(ctx, bad)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a webhook's denial is 403: %v", err)
	g.Expect(err).To(MatchError(ContainSubstring(`spec.tier "gold" is neither standard nor premium (webhook of the test's manager)`)))
	d1.Spec.Tier = "gold"
	g.Expect(env.Client().Update(ctx, d1)).To(MatchError(ContainSubstring(`spec.tier "gold" is neither standard nor premium`)))
}

func TestTheWebhookServerHandsARequestToTheManagerOfItsNamespace(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	names := map[string]string{}
	for _, name := range []string{"first", "second"} {
		ns := env.Namespace(t)
		mgr := env.NewManager(t, ctrl.Options{}, ns)
		g.Expect(SetupDiskWebhooks(mgr, name)).To(Succeed())
		StartManager(t, mgr)
		names[ns] = name
	}

	for ns, name := range names {
		d := &DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"}, Spec: DiskV2Spec{Tier: "gold"}}
		g.Expect(env.Client().Create(ctx, d)).To(MatchError(ContainSubstring("(webhook of "+name+")")),
			"the manager whose cache holds namespace %s answers for it", ns)
	}
}

func TestAWebhookCallFailsWhileNoManagerServesIt(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := env.Namespace(t)

	// Managers of tests that run in parallel serve Disk's webhooks meanwhile, for their own
	// namespaces only.
	d := &DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"}, Spec: DiskV2Spec{Tier: "standard"}}
	err := env.Client().Create(t.Context(), d)
	g.Expect(err).To(MatchError(ContainSubstring(`failed calling webhook "mdisk-v2.webhook.test.tenon.dev"`)), "failurePolicy: Fail")
	g.Expect(err).To(MatchError(ContainSubstring("testenv: no running manager serves the webhook path /mutate-webhook-test-tenon-dev-v2-disk for namespaces")))
}

func TestAWebhookPathThatDoesNotExistIsAnError(t *testing.T) {
	g := NewWithT(t)
	e := New(Options{WebhookDirectoryPaths: []string{"no-such-directory"}})
	err := e.Start()
	g.Expect(err).To(MatchError(ContainSubstring(`webhook path "no-such-directory"`)))
	g.Expect(err).To(MatchError(ContainSubstring("does not exist: check Options.WebhookDirectoryPaths")))
	g.Expect(e.Stop()).To(Succeed())
}
