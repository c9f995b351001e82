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

package fencing_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/fencing"
)

func TestForManagerRefusesWhatItCannotFenceAndChangesNothing(t *testing.T) {
	tests := []struct {
		name    string
		cfg     *rest.Config
		opts    *ctrl.Options
		wantErr string
	}{
		{"a nil config", nil, &ctrl.Options{LeaderElection: true, LeaderElectionID: "id", LeaderElectionNamespace: "ns"}, "the rest.Config is nil"},
		{"nil options", &rest.Config{Host: "https://k.invalid"}, nil, "the manager.Options is nil"},
		{"leader election off", &rest.Config{Host: "https://k.invalid"}, &ctrl.Options{LeaderElectionID: "id", LeaderElectionNamespace: "ns"}, "leader election is off"},
		{"a lock of the caller's", &rest.Config{Host: "https://k.invalid"}, &ctrl.Options{LeaderElection: true, LeaderElectionID: "id", LeaderElectionNamespace: "ns", LeaderElectionResourceLockInterface: &memoryLock{}}, "wrap that lock with fencing.NewLock"},
		{"a lock other than a lease", &rest.Config{Host: "https://k.invalid"}, &ctrl.Options{LeaderElection: true, LeaderElectionID: "id", LeaderElectionNamespace: "ns", LeaderElectionResourceLock: "configmapsleases"}, `the fence needs a "leases" lock`},
		{"no leader election ID", &rest.Config{Host: "https://k.invalid"}, &ctrl.Options{LeaderElection: true, LeaderElectionNamespace: "ns"}, "LeaderElectionID must be configured"},
	}
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err != nil {
		tests = append(tests, struct {
			name    string
			cfg     *rest.Config
			opts    *ctrl.Options
			wantErr string
		}{"no namespace outside a cluster", &rest.Config{Host: "https://k.invalid"}, &ctrl.Options{LeaderElection: true, LeaderElectionID: "id"}, "please specify LeaderElectionNamespace"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var cfgBefore *rest.Config
			if tt.cfg != nil {
				cfgBefore = rest.CopyConfig(tt.cfg)
			}
			var optsBefore ctrl.Options
			if tt.opts != nil {
				optsBefore = *tt.opts
			}
			lock, err := fencing.ForManager(tt.cfg, tt.opts)
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
			g.Expect(lock).To(BeNil())
			if tt.cfg != nil {
				g.Expect(tt.cfg.WrapTransport).To(BeNil(), "the config must not be fenced")
				g.Expect(tt.cfg.Host).To(Equal(cfgBefore.Host))
			}
			if tt.opts != nil {
				g.Expect(tt.opts.LeaderElectionResourceLockInterface == optsBefore.LeaderElectionResourceLockInterface).To(BeTrue(),
					"the options' lock must stay what it was")
			}
		})
	}
}

// A manager fenced by ForManager alone is refused writes until it is elected, then writes, and
// holds the Lease named by its options under the identity of its lock.
func TestForManagerFencesAManagerBuiltFromItsOptions(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	cfg := env.Config()
	ld, rd, rp := leaseDuration, renewDeadline, retryPeriod
	opts := ctrl.Options{
		Scheme:                        env.Scheme(),
		Metrics:                       metricsOff,
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "for-manager",
		LeaderElectionNamespace:       ns,
		LeaderElectionLabels:          map[string]string{"app": "cluster-operator"},
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &ld,
		RenewDeadline:                 &rd,
		RetryPeriod:                   &rp,
	}
	fence, err := fencing.ForManager(cfg, &opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fence.Describe()).To(Equal(ns + "/for-manager"))
	hostname, err := os.Hostname()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.HasPrefix(fence.Identity(), hostname+"_")).To(BeTrue(), "controller-runtime's identity: hostname_uuid, got %q", fence.Identity())

	c, err := client.New(cfg, client.Options{Scheme: env.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	write := func(name string) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	var refused *fencing.RefusedError
	g.Expect(errors.As(write("before"), &refused)).To(BeTrue(), "a write before the election is refused")

	mgr, err := ctrl.NewManager(cfg, opts)
	g.Expect(err).NotTo(HaveOccurred())
	mgrCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager stopped with an error: %v", err)
		}
	})
	g.Eventually(func() bool { return elected(mgr) }).WithTimeout(30 * time.Second).Should(BeTrue())
	g.Expect(write("after")).To(Succeed(), "the leader writes")
	g.Expect(mgr.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-manager"}})).To(Succeed())

	var lease coordinationv1.Lease
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "for-manager"}, &lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal(fence.Identity())))
	g.Expect(lease.Labels).To(HaveKeyWithValue("app", "cluster-operator"))

	// Released on cancel: the fence closes before the release is sent.
	cancel()
	g.Expect(<-done).To(Succeed())
	done <- nil
	g.Expect(errors.As(write("released"), &refused)).To(BeTrue(), "a write after the release is refused")
}
