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

// Package observe makes an object's conditions visible outside the object: Kubernetes Events
// when a condition that matters to people changes its status, and a Prometheus gauge with every
// condition's status, for alerts and dashboards. [RecordEvents] records the Events and [Metrics]
// exports the gauge.
//
// It is a package of its own so that the conditions package, which API types import for its
// interfaces, depends on apimachinery only; this one brings client-go's events and Prometheus.
//
// patch.Helper.Finish calls both after it wrote the status, when the controller's patch.Writer
// has a Recorder and Metrics (patch.WriterOptions). Without it, call them after the status was
// written, in the same deferred function as the patch:
//
//	defer func() {
//		err = errors.Join(err, helper.Patch(ctx, cluster, patch.OwnedConditions{conditions.Ready}))
//		if err == nil {
//			// The conditions the write was made on: not always the ones read (see RecordEvents).
//			previous := helper.Previous().(*v1alpha1.Cluster)
//			observe.RecordEvents(r.Recorder, cluster, previous.Status.Conditions, cluster.Status.Conditions)
//			r.Metrics.Record("Cluster", cluster)
//		}
//	}()
//
// # When not to use it
//
// Events are for people, not for controllers: do not build logic on them. And the gauge costs
// three series per condition type per object; for a kind with very many objects, export
// aggregates of your own instead.
package observe
