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
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"
)

// Wiring the reconciler into a manager, as cmd/main.go does: the cache holds only what the
// operator needs (its children by label, the one Secret with the DNS token), and the reconciler
// reads the token from that cache on every use.
func ExampleNewReconciler() {
	secret := client.ObjectKey{Namespace: "cluster-operator-system", Name: "dns-credentials"}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Cache:  controller.CacheOptions(secret),
		Client: controller.ClientOptions(),
	})
	if err != nil {
		panic(err)
	}
	provider := &dns.Provider{Endpoint: "https://dns.example.com", Secret: secret, Reader: mgr.GetClient()}
	r := controller.NewReconciler(mgr, provider, controller.Options{DirectoryNamespace: "cluster-directory", MaxConcurrentReconciles: 4})
	ctx := context.Background()
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		panic(err)
	}
	if err := mgr.Start(ctx); err != nil {
		panic(err)
	}
}
