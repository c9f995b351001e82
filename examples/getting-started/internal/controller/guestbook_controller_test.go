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

package controller_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/testenv"

	webappv1 "github.com/tenon-dev/tenon/examples/getting-started/api/v1"
)

var _ = Describe("Guestbook controller", func() {
	It("keeps a ConfigMap with the message, owned by the Guestbook, and reports Ready", func(ctx SpecContext) {
		ns := env.Namespace(GinkgoT())
		mgr := env.NewManager(GinkgoT(), ctrl.Options{}, ns)
		Expect(newReconciler(mgr, mgr.GetClient()).SetupWithManager(mgr)).To(Succeed())
		testenv.StartManager(GinkgoT(), mgr)

		guestbook := &webappv1.Guestbook{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
			Spec:       webappv1.GuestbookSpec{Message: "Hello, world"},
		}
		Expect(env.Client().Create(ctx, guestbook)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(guestbook), guestbook)).To(Succeed())
			g.Expect(guestbook).To(matchers.BeReady())
		}).Should(Succeed())
		configMap := &corev1.ConfigMap{}
		Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-greeting"}, configMap)).To(Succeed())
		Expect(configMap.Data).To(HaveKeyWithValue("message", "Hello, world"))
		Expect(configMap).To(matchers.BeControlledBy(guestbook))
	})
})
