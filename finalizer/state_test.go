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

package finalizer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tenon-dev/tenon/internal/testtypes"
)

func TestTheStateOfAnObjectNotRunForLongIsForgotten(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	l := &Lifecycle[*testtypes.Widget]{Finalizer: "a.example.com/cleanup", Clock: clock}
	widget := func(uid string) *testtypes.Widget {
		return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	}
	l.state(widget("in-progress")) // a step in progress that asked for no delay: no next run
	l.state(widget("waiting")).next = clock.Now().Add(time.Hour)
	l.state(widget("failing")).next = clock.Now().Add(time.Minute)

	// Twice the stalled retry interval (10 minutes) later, less a second: all are kept.
	clock.SetTime(clock.Now().Add(20*time.Minute - time.Second))
	l.state(widget("recent"))
	for _, uid := range []types.UID{"in-progress", "waiting", "failing", "recent"} {
		if _, ok := l.cleanup[uid]; !ok {
			t.Errorf("the state of %s was forgotten before twice the stalled retry interval", uid)
		}
	}

	// Twice the interval after the failing step's retry: the states not run since, whose next
	// run is not later, are forgotten.
	clock.SetTime(clock.Now().Add(time.Minute + 2*time.Second))
	l.state(widget("other"))
	for uid, want := range map[types.UID]bool{"in-progress": false, "failing": false, "waiting": true, "recent": true, "other": true} {
		if _, ok := l.cleanup[uid]; ok != want {
			t.Errorf("the state of %s is kept: %v, want %v", uid, ok, want)
		}
	}
}
