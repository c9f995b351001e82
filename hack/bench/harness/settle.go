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

package harness

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// PollInterval is how often settle looks at the system: the resolution of the wall times.
const PollInterval = 100 * time.Millisecond

// settle waits until the system is quiet and returns when it first was (see the package
// documentation): no reconcile running, queued or scheduled; objectsOK true for the Widgets read
// from the API server; the manager's cache at the same resourceVersions; extra, when not nil,
// true; and all of it again on the next poll with no reconcile in between. It fails after the
// workload timeout, saying what was still wrong.
func (s *runState) settle(ctx context.Context, objectsOK func([]benchv1.Widget) (bool, string), extra func() bool) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.params.Timeout)
	defer cancel()
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()

	var quietSince time.Time
	var reconcilesThen int
	why := "not polled yet"
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("workload did not settle within %s: %s", s.params.Timeout, why)
		case <-ticker.C:
		}
		now := time.Now()
		ok, reason, err := s.quiet(ctx, objectsOK, extra)
		if err != nil {
			return time.Time{}, err
		}
		if !ok {
			why, quietSince = reason, time.Time{}
			continue
		}
		reconciles := s.inst.Stats().Reconciles
		if quietSince.IsZero() || reconciles != reconcilesThen {
			quietSince, reconcilesThen = now, reconciles
			why = "quiet once, waiting for the next poll"
			continue
		}
		return quietSince, nil
	}
}

// quiet reports whether the system is quiet at this moment, or why not.
func (s *runState) quiet(ctx context.Context, objectsOK func([]benchv1.Widget) (bool, string), extra func() bool) (bool, string, error) {
	if s.inst.Busy() {
		return false, "reconciles running or scheduled", nil
	}
	depth, err := queueDepth(s.ctrlName)
	if err != nil {
		return false, "", err
	}
	if depth > 0 {
		return false, fmt.Sprintf("%d objects queued", int(depth)), nil
	}
	if extra != nil && !extra() {
		return false, fmt.Sprintf("%d of %d widgets reconciled", s.inst.ReconciledSinceMark(), s.params.Objects), nil
	}
	live := &benchv1.WidgetList{}
	if err := s.env.direct.List(ctx, live, client.InNamespace(s.namespace)); err != nil {
		return false, "", fmt.Errorf("failed to list widgets: %w", err)
	}
	if ok, why := objectsOK(live.Items); !ok {
		return false, why, nil
	}
	cached := &benchv1.WidgetList{}
	if err := s.mgr.GetCache().List(ctx, cached, client.InNamespace(s.namespace)); err != nil {
		return false, "", fmt.Errorf("failed to list widgets from the cache: %w", err)
	}
	if len(cached.Items) != len(live.Items) {
		return false, fmt.Sprintf("cache holds %d widgets, API server %d", len(cached.Items), len(live.Items)), nil
	}
	versions := make(map[string]string, len(live.Items))
	for _, w := range live.Items {
		versions[w.Name] = w.ResourceVersion
	}
	for _, w := range cached.Items {
		if versions[w.Name] != w.ResourceVersion {
			return false, "cache behind the API server for " + w.Name, nil
		}
	}
	return true, "", nil
}

// queueDepth returns the number of objects ready in the named controller's work queue, from
// controller-runtime's workqueue_depth gauge. Objects waiting for a RequeueAfter or a retry are
// not in it: the Instrument tracks those.
func queueDepth(controllerName string) (float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("failed to gather metrics: %w", err)
	}
	var depth float64
	for _, f := range families {
		if f.GetName() != "workqueue_depth" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == controllerName {
					depth += m.GetGauge().GetValue()
				}
			}
		}
	}
	return depth, nil
}
