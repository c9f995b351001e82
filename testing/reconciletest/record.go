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

package reconciletest

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Recorder is a reconcile.Reconciler that passes every request to the reconciler it wraps and
// records what that returned, for tests of a controller that runs in a manager: what the
// controller gave controller-runtime (errors, terminal errors, requeues) is otherwise seen only
// in logs and in the process-wide metrics. Make one with [Record].
//
// It records one [Step] per reconcile, numbered from 1 in the order the reconciles returned;
// the steps have no Calls. The result matchers of package testing/matchers (BeDone, BeRequeued,
// BeRequeuedAfter, BeTerminal, HaveFailed) apply to them. A Recorder is safe for concurrent use, as a controller with
// several workers needs; it keeps every step until the test ends.
type Recorder struct {
	reconciler reconcile.Reconciler

	mu    sync.Mutex
	steps []Step
}

var _ reconcile.Reconciler = (*Recorder)(nil)

// Record returns a Recorder that wraps r. Register the Recorder with the controller instead of
// r:
//
//	rec := reconciletest.Record(&ClusterReconciler{Client: mgr.GetClient()})
//	err := ctrl.NewControllerManagedBy(mgr).For(&v1.Cluster{}).Complete(rec)
//	// ...
//	g.Eventually(rec.Last).WithArguments(req).Should(matchers.BeRequeuedAfter(5 * time.Minute))
//	g.Expect(rec.Steps()).NotTo(ContainElement(matchers.HaveFailed()))
func Record(r reconcile.Reconciler) *Recorder {
	return &Recorder{reconciler: r}
}

// Reconcile calls the wrapped reconciler and records what it returned. A panic is recorded and
// returned as an error, as controller-runtime turns it into one.
func (r *Recorder) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = reconcile.Result{}, fmt.Errorf("panic: %v [recovered]\n%s", p, debug.Stack())
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.steps = append(r.steps, Step{Number: len(r.steps) + 1, Request: req, Result: res, Err: err, recorded: true})
	}()
	return r.reconciler.Reconcile(ctx, req)
}

// Steps returns every reconcile recorded so far, in the order they returned.
func (r *Recorder) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.steps)
}

// Last returns the latest reconcile of req recorded so far, or nil when there is none yet.
// With Eventually it polls until the controller's latest reconcile of req matches:
//
//	g.Eventually(rec.Last).WithArguments(req).Should(matchers.BeDone())
//
// A nil step fails every step matcher, so Eventually keeps polling until there is one.
func (r *Recorder) Last(req reconcile.Request) *Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.steps) - 1; i >= 0; i-- {
		if r.steps[i].Request == req {
			s := r.steps[i]
			return &s
		}
	}
	return nil
}
