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

package observe

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

// Metrics exports the conditions of objects as the Prometheus gauge
//
//	tenon_condition{kind, namespace, name, type, status}
//
// which is 1 for each condition's current status and 0 for the two others, so that an alert
// such as `tenon_condition{type="Ready",status="False"} == 1` fires for every object that is not
// ready. Register it once, with controller-runtime's registry
// (sigs.k8s.io/controller-runtime/pkg/metrics.Registry) to serve it from the manager's metrics
// endpoint. Each object adds three series per condition type: objects × types × 3 in all, so
// record only kinds of which there are not millions. Record and Forget cost the same however
// many objects there are: Metrics remembers which condition types each object has series for.
// A Metrics is safe for concurrent use.
type Metrics struct {
	gauge *prometheus.GaugeVec

	mu sync.Mutex
	// types holds, for each object with series, the condition types they are for.
	types map[seriesOf][]string
}

// seriesOf names the object whose series are kept together.
type seriesOf struct{ kind, namespace, name string }

// NewMetrics returns unregistered condition metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tenon_condition",
			Help: "The status of a condition of an object: 1 for the current status, 0 for the others.",
		}, []string{"kind", "namespace", "name", "type", "status"}),
		types: map[seriesOf][]string{},
	}
}

// Register registers the metrics with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return reg.Register(m.gauge)
}

var statuses = [...]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// Record sets the gauge for every condition of obj (any custom resource whose type implements
// conditions.Getter), whose kind is kind, and removes the series of conditions obj no longer
// has. Call it after each reconcile. A nil Metrics records nothing.
func (m *Metrics) Record(kind string, obj interface {
	conditions.Getter
	GetName() string
	GetNamespace() string
}) {
	if m == nil {
		return
	}
	of := seriesOf{kind: kind, namespace: obj.GetNamespace(), name: obj.GetName()}
	list := obj.GetConditions()
	types := make([]string, 0, len(list))
	for i := range list {
		if !slices.Contains(types, list[i].Type) {
			types = append(types, list[i].Type)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.types[of] {
		if !slices.Contains(types, t) {
			m.delete(of, t)
		}
	}
	for i := range list {
		for _, s := range statuses {
			v := 0.0
			if list[i].Status == s {
				v = 1
			}
			m.gauge.WithLabelValues(of.kind, of.namespace, of.name, list[i].Type, string(s)).Set(v)
		}
	}
	if len(types) == 0 {
		delete(m.types, of)
		return
	}
	m.types[of] = types
}

// Forget removes every series of the object kind/namespace/name. Call it when the object is gone.
// A nil Metrics has nothing to forget.
func (m *Metrics) Forget(kind, namespace, name string) {
	if m == nil {
		return
	}
	of := seriesOf{kind: kind, namespace: namespace, name: name}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.types[of] {
		m.delete(of, t)
	}
	delete(m.types, of)
}

// delete removes the series of condition type t of the object of.
func (m *Metrics) delete(of seriesOf, t string) {
	for _, s := range statuses {
		m.gauge.DeleteLabelValues(of.kind, of.namespace, of.name, t, string(s))
	}
}
