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

package sharder

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestStateOf(t *testing.T) {
	renewed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lease := func(holder *string, renew *time.Time, seconds *int32) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "shard-a"}}
		l.Spec.HolderIdentity = holder
		if renew != nil {
			l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(*renew))
		}
		l.Spec.LeaseDurationSeconds = seconds
		return l
	}
	held := lease(ptr.To("shard-a"), &renewed, ptr.To[int32](10))
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		after time.Duration
		want  ShardState
	}{
		{name: "a Lease renewed just now is ready", lease: held, want: Ready},
		{name: "a Lease is ready until its duration has passed", lease: held, after: 10*time.Second - time.Microsecond, want: Ready},
		{name: "a Lease is expired once its duration has passed", lease: held, after: 10 * time.Second, want: Expired},
		{name: "a Lease is expired until twice its duration has passed", lease: held, after: 20*time.Second - time.Microsecond, want: Expired},
		{name: "a Lease is uncertain once twice its duration has passed", lease: held, after: 20 * time.Second, want: Uncertain},
		{name: "an uncertain Lease stays uncertain", lease: held, after: time.Hour, want: Uncertain},
		{name: "a Lease renewed in the sharder's future is ready", lease: held, after: -time.Hour, want: Ready},
		{name: "a released Lease is dead", lease: lease(ptr.To(""), &renewed, ptr.To[int32](10)), want: Dead},
		{name: "a Lease without a holder is dead", lease: lease(nil, &renewed, ptr.To[int32](10)), want: Dead},
		{name: "a Lease held by another identity is dead", lease: lease(ptr.To("shardlease-controller"), &renewed, ptr.To[int32](10)), want: Dead},
		{name: "a dead Lease is dead until a minute after it expired", lease: lease(ptr.To(""), &renewed, ptr.To[int32](10)),
			after: 70*time.Second - time.Microsecond, want: Dead},
		{name: "a dead Lease is orphaned a minute after it expired", lease: lease(ptr.To(""), &renewed, ptr.To[int32](10)),
			after: 70 * time.Second, want: Orphaned},
		{name: "a held Lease without renewTime is expired", lease: lease(ptr.To("shard-a"), nil, ptr.To[int32](10)), after: time.Hour, want: Expired},
		{name: "a held Lease without a duration is expired", lease: lease(ptr.To("shard-a"), &renewed, nil), after: time.Hour, want: Expired},
		{name: "a released Lease without renewTime is never orphaned", lease: lease(ptr.To(""), nil, nil), after: time.Hour, want: Dead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(stateOf(tc.lease, renewed.Add(tc.after))).To(Equal(tc.want))
		})
	}
}

func TestAvailableStates(t *testing.T) {
	g := NewWithT(t)
	var available []ShardState
	for _, s := range []ShardState{Ready, Expired, Uncertain, Dead, Orphaned, Unknown, ""} {
		if s.Available() {
			available = append(available, s)
		}
	}
	g.Expect(available).To(Equal([]ShardState{Ready, Expired, Uncertain}))
}
