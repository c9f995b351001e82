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

package requeue

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// reconcileMetrics are the metrics of WithBackoff, shared by the controllers of one registry and
// told apart by their controller label.
type reconcileMetrics struct {
	quietConflicts *prometheus.CounterVec
	terminalErrors *prometheus.CounterVec
	requeues       *prometheus.CounterVec
}

// registerMetrics registers the metrics with reg, or returns the ones a WithBackoff registered
// with it before. On error the metrics returned work, unregistered.
func registerMetrics(reg prometheus.Registerer) (*reconcileMetrics, error) {
	m := &reconcileMetrics{
		quietConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tenon_reconcile_quiet_conflicts_total",
			Help: "Conflicts (409 Conflict or AlreadyExists, 410 Gone) turned into quiet requeues instead of reconcile errors, by controller and class.",
		}, []string{"controller", "class"}),
		terminalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tenon_reconcile_terminal_errors_total",
			Help: "Reconciles that ended with a terminal error, which is not retried, by controller.",
		}, []string{"controller"}),
		requeues: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tenon_reconcile_requeues_total",
			Help: "Reconciles that ended with a requeue after a delay, by controller and reason: retry, fenced, conflict, already_exists, gone, throttled or after.",
		}, []string{"controller", "reason"}),
	}
	for _, c := range []**prometheus.CounterVec{&m.quietConflicts, &m.terminalErrors, &m.requeues} {
		err := reg.Register(*c)
		if err == nil {
			continue
		}
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return m, err
		}
		existing, ok := already.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return m, err
		}
		*c = existing
	}
	return m, nil
}
