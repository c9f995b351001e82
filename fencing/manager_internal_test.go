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

package fencing

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// TestForManagerGivesTheLocksClientHalfTheRenewDeadline checks the timeout of the lock's
// client, as controller-runtime sets it for its own lock: half the RenewDeadline, so that one
// hung request cannot cost the lease; controller-runtime's default RenewDeadline when unset.
func TestForManagerGivesTheLocksClientHalfTheRenewDeadline(t *testing.T) {
	eight := 8 * time.Second
	for _, tt := range []struct {
		name          string
		renewDeadline *time.Duration
		want          time.Duration
	}{
		{"unset: controller-runtime's default, 10 s", nil, 5 * time.Second},
		{"set", &eight, 4 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := &manager.Options{LeaderElection: true, LeaderElectionID: "x", LeaderElectionNamespace: "ns", RenewDeadline: tt.renewDeadline}
			l, err := ForManager(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			lease, ok := l.inner.(*resourcelock.LeaseLock)
			if !ok {
				t.Fatalf("the lock is a %T, not a Lease lock", l.inner)
			}
			coordination, ok := lease.Client.(*coordinationv1.CoordinationV1Client)
			if !ok {
				t.Fatalf("the lock's client is a %T", lease.Client)
			}
			restClient, ok := coordination.RESTClient().(*rest.RESTClient)
			if !ok {
				t.Fatalf("the lock's REST client is a %T", coordination.RESTClient())
			}
			if got := restClient.Client.Timeout; got != tt.want {
				t.Errorf("the lock's client times out after %v, want %v", got, tt.want)
			}
		})
	}
}
