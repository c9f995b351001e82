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
	"strings"
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
// record only kinds of which there are not millions.
//
// Metrics keeps, for each object, only the status of each of its condition types (about 240
// bytes for an object with four conditions) and makes the series when the registry is scraped,
// rather than holding a series object per label set between scrapes (about 9.6 KB for the same
// object's 12 series in a prometheus.GaugeVec; BenchmarkMetricsMemory measures both). Record and Forget cost the same however many objects there are.
// A Metrics is safe for concurrent use.
type Metrics struct {
	desc *prometheus.Desc

	mu sync.Mutex
	// objects holds, for each object with series, the status of each of its condition types.
	objects map[seriesOf][]conditionStatus
	// interned holds one copy of each condition type and namespace recorded, which the
	// objects' entries share.
	interned map[string]string
}

// seriesOf names the object whose series are kept together.
type seriesOf struct{ kind, namespace, name string }

// conditionStatus is a condition type and the index of its status in statuses, or
// len(statuses) for a status that is none of them (every series 0).
type conditionStatus struct {
	typ    string
	status uint8
}

// NewMetrics returns unregistered condition metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		desc: prometheus.NewDesc("tenon_condition",
			"The status of a condition of an object: 1 for the current status, 0 for the others.",
			[]string{"kind", "namespace", "name", "type", "status"}, nil),
		objects:  map[seriesOf][]conditionStatus{},
		interned: map[string]string{},
	}
}

// Register registers the metrics with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return reg.Register(collector{m})
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
	list := obj.GetConditions()
	m.mu.Lock()
	defer m.mu.Unlock()
	of := seriesOf{kind: m.intern(kind), namespace: m.intern(obj.GetNamespace()), name: obj.GetName()}
	if len(list) == 0 {
		delete(m.objects, of)
		return
	}
	old, known := m.objects[of]
	if !known {
		// The key outlives obj: a copy of the name, not a reference into obj's memory.
		of.name = strings.Clone(of.name)
	}
	next := make([]conditionStatus, 0, len(list))
	for i := range list {
		c := conditionStatus{typ: list[i].Type, status: uint8(len(statuses))}
		if s := slices.Index(statuses[:], list[i].Status); s >= 0 {
			c.status = uint8(s)
		}
		// A type listed twice has the series of its last entry.
		if j := slices.IndexFunc(next, func(n conditionStatus) bool { return n.typ == c.typ }); j >= 0 {
			next[j].status = c.status
			continue
		}
		c.typ = m.intern(c.typ)
		next = append(next, c)
	}
	if slices.Equal(old, next) {
		return
	}
	m.objects[of] = next
}

// Forget removes every series of the object kind/namespace/name. Call it when the object is gone.
// A nil Metrics has nothing to forget.
func (m *Metrics) Forget(kind, namespace, name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, seriesOf{kind: kind, namespace: namespace, name: name})
}

// intern returns the copy of s that m keeps, storing one first. m.mu must be held. Condition
// types, kinds and namespaces are few, so one copy of each serves every object.
func (m *Metrics) intern(s string) string {
	if v, ok := m.interned[s]; ok {
		return v
	}
	v := strings.Clone(s)
	m.interned[v] = v
	return v
}

// collector makes the series of a Metrics when the registry is scraped.
type collector struct{ m *Metrics }

// Describe sends the description of tenon_condition, the one metric the collector makes.
func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.m.desc }

// Collect sends the tenon_condition series of every object the Metrics hold, made now.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	// The series are made under the lock and sent after it, so that a slow scrape does not hold
	// up the reconciles that record.
	c.m.mu.Lock()
	series := make([]prometheus.Metric, 0, len(c.m.objects)*4*len(statuses))
	for of, list := range c.m.objects {
		for _, cs := range list {
			for i, s := range statuses {
				v := 0.0
				if int(cs.status) == i {
					v = 1
				}
				series = append(series, prometheus.MustNewConstMetric(c.m.desc, prometheus.GaugeValue, v,
					of.kind, of.namespace, of.name, cs.typ, string(s)))
			}
		}
	}
	c.m.mu.Unlock()
	for _, s := range series {
		ch <- s
	}
}
