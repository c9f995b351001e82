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

// Package check is the test of hack/gogetcheck/run.sh, which runs it in a scratch module that
// requires tenon, as a user's module does: testenv's garbage collector (kube-controller-manager
// built by build-envtest), a defaulting and a validating webhook, and a conversion webhook, on
// the Disk fixture of testing/testenv (disk.go, testdata/webhook).
package check

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/testing/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(AddDisksToScheme(scheme))
	env = testenv.New(testenv.Options{
		CRDDirectoryPaths:     []string{DiskCRDDirectory},
		WebhookDirectoryPaths: []string{DiskWebhookDirectory},
		Scheme:                scheme,
		GarbageCollector:      true,
	})
	os.Exit(env.Run(m))
}

func TestTheGarbageCollectorDeletesTheDependentsOfADeletedOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
	}}}}
	g.Expect(env.Client().Create(ctx, child)).To(Succeed())

	g.Expect(env.Client().Delete(ctx, owner)).To(Succeed())

	g.Eventually(func() error {
		return env.Client().Get(ctx, client.ObjectKeyFromObject(child), &corev1.Secret{})
	}).WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))
}

func TestTheManagersWebhooksDefaultValidateAndConvert(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{}, ns)
	g.Expect(SetupDiskWebhooks(mgr, "the test's manager")).To(Succeed())
	testenv.StartManager(t, mgr)

	d1 := &DiskV1{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Spec: DiskV1Spec{SizeGiB: 10}}
	g.Expect(env.Client().Create(ctx, d1)).To(Succeed())
	g.Expect(d1.Spec.Tier).To(Equal("standard"), "defaulted by the mutating webhook")
	d2 := &DiskV2{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(d1), d2)).To(Succeed())
	g.Expect(d2.Spec).To(Equal(DiskV2Spec{Size: "10Gi", Tier: "standard"}), "converted by the conversion webhook")

	bad := &DiskV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: DiskV2Spec{Size: "1Gi", Tier: "gold"}}
	g.Expect(env.Client().Create(ctx, bad)).To(MatchError(ContainSubstring(`spec.tier "gold" is neither standard nor premium`)),
		"refused by the validating webhook")
}
