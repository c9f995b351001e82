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

package observe_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func ExampleRecordEvents() {
	recorder := events.NewFakeRecorder(10) // in a controller: mgr.GetEventRecorder("widget-controller")
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 1}}
	conditions.MarkFalse(w, conditions.Ready, "Provisioning", "waiting for the volume")

	before := slices.Clone(w.Status.Conditions)
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "all replicas ready")
	// ... the status is written here ...
	observe.RecordEvents(recorder, w, before, w.Status.Conditions)

	fmt.Println(<-recorder.Events)
	// Output:
	// Normal Succeeded Ready changed from False to True: all replicas ready
}

func ExampleMetrics() {
	reg := prometheus.NewRegistry() // in a controller: sigs.k8s.io/controller-runtime/pkg/metrics.Registry
	m := observe.NewMetrics()
	if err := m.Register(reg); err != nil {
		panic(err)
	}
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 1}}
	conditions.MarkFalse(w, conditions.Ready, "Provisioning", "")
	m.Record("Widget", w)

	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tenon_condition The status of a condition of an object: 1 for the current status, 0 for the others.
# TYPE tenon_condition gauge
tenon_condition{kind="Widget",name="demo",namespace="default",status="False",type="Ready"} 1
tenon_condition{kind="Widget",name="demo",namespace="default",status="True",type="Ready"} 0
tenon_condition{kind="Widget",name="demo",namespace="default",status="Unknown",type="Ready"} 0
`), "tenon_condition")
	fmt.Println("series as expected:", err == nil)
	// Output:
	// series as expected: true
}
