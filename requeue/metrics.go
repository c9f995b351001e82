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
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metrics of this package, registered with controller-runtime's registry so that a manager
// serves them next to controller_runtime_*. Their controller label is [BackoffOptions.Name], or
// empty for results computed outside [WithBackoff].
var (
	quietConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_reconcile_quiet_conflicts_total",
		Help: "Conflicts (409 Conflict or AlreadyExists, 410 Gone) turned into quiet requeues instead of reconcile errors, by controller and class.",
	}, []string{"controller", "class"})

	terminalErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_reconcile_terminal_errors_total",
		Help: "Reconciles that ended with a terminal error, which is not retried, by controller.",
	}, []string{"controller"})

	requeues = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenon_reconcile_requeues_total",
		Help: "Reconciles that ended with a requeue after a delay, by controller and reason: retry, conflict, already_exists, gone, throttled or after.",
	}, []string{"controller", "reason"})
)

func init() {
	metrics.Registry.MustRegister(quietConflicts, terminalErrors, requeues)
}

func recordQuietConflict(s *state, class Class) {
	quietConflicts.WithLabelValues(s.name(), class.String()).Inc()
	recordRequeue(s, class.String())
}

func recordRequeue(s *state, reason string) {
	if s != nil {
		s.mu.Lock()
		s.counted = true
		s.mu.Unlock()
	}
	requeues.WithLabelValues(s.name(), reason).Inc()
}
