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
	"errors"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// maxErrorSamples bounds the distinct error messages kept per workload, for the report.
const maxErrorSamples = 5

// Instrument wraps a reconciler and records what its reconciles return. It is safe for
// concurrent use, as controller-runtime's workers call it concurrently.
type Instrument struct {
	next reconcile.Reconciler

	mu       sync.Mutex
	inflight int
	// pending holds the objects whose last reconcile asked to come back (an error or a
	// RequeueAfter): controller-runtime holds them in its queue's waiting set until then.
	pending map[types.NamespacedName]bool
	// reconciled holds the objects reconciled since the last Mark.
	reconciled map[types.NamespacedName]bool
	stats      ReconcileStats
	samples    map[string]int
}

var _ reconcile.Reconciler = (*Instrument)(nil)

// ReconcileStats counts reconciles and their outcomes.
type ReconcileStats struct {
	// Reconciles counts completed calls of Reconcile.
	Reconciles int `json:"reconciles"`
	// Errors counts reconciles that returned an error: what controller-runtime logs and counts
	// in controller_runtime_reconcile_errors_total.
	Errors int `json:"errors"`
	// ConflictErrors counts the Errors that are, or wrap, a 409 Conflict from the API server.
	ConflictErrors int `json:"conflictErrors"`
	// Requeues counts reconciles that returned no error and a RequeueAfter: for tenon, the
	// quiet requeues that requeue.WithBackoff returns after a conflict the reconciler could not resolve.
	Requeues int `json:"requeues"`
}

// NewInstrument returns an Instrument around next.
func NewInstrument(next reconcile.Reconciler) *Instrument {
	return &Instrument{
		next:       next,
		pending:    map[types.NamespacedName]bool{},
		reconciled: map[types.NamespacedName]bool{},
		samples:    map[string]int{},
	}
}

// Reconcile implements reconcile.Reconciler.
func (in *Instrument) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	in.mu.Lock()
	in.inflight++
	in.mu.Unlock()

	res, err := in.next.Reconcile(ctx, req)

	in.mu.Lock()
	defer in.mu.Unlock()
	in.inflight--
	in.stats.Reconciles++
	in.reconciled[req.NamespacedName] = true
	switch {
	case err != nil:
		in.stats.Errors++
		if isConflict(err) {
			in.stats.ConflictErrors++
		}
		in.sample(err)
	case res.RequeueAfter > 0:
		in.stats.Requeues++
	}
	// A terminal error is not retried; everything else that is not a clean result is.
	if (err != nil && !errors.Is(err, reconcile.TerminalError(nil))) || res.RequeueAfter > 0 {
		in.pending[req.NamespacedName] = true
	} else {
		delete(in.pending, req.NamespacedName)
	}
	return res, err
}

// sample keeps the first maxErrorSamples distinct error messages and counts each.
func (in *Instrument) sample(err error) {
	msg := err.Error()
	if _, ok := in.samples[msg]; ok || len(in.samples) < maxErrorSamples {
		in.samples[msg]++
	}
}

// Stats returns the counts so far.
func (in *Instrument) Stats() ReconcileStats {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stats
}

// Busy reports whether a reconcile is running or an object waits for a requeue or a retry.
func (in *Instrument) Busy() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.inflight > 0 || len(in.pending) > 0
}

// Mark forgets which objects were reconciled and the error samples, to start a workload.
func (in *Instrument) Mark() {
	in.mu.Lock()
	defer in.mu.Unlock()
	clear(in.reconciled)
	clear(in.samples)
}

// ReconciledSinceMark returns how many distinct objects were reconciled since Mark.
func (in *Instrument) ReconciledSinceMark() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.reconciled)
}

// ErrorSamples returns the distinct error messages seen since Mark, with counts, most frequent
// first, as "12× message".
func (in *Instrument) ErrorSamples() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	type sample struct {
		msg string
		n   int
	}
	var list []sample
	for m, n := range in.samples {
		list = append(list, sample{m, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].msg < list[j].msg
	})
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, fmt.Sprintf("%d× %s", s.n, s.msg))
	}
	return out
}

// isConflict reports whether err is, or wraps, a 409 Conflict, looking through the aggregates
// cluster-api's and Flux's patch helpers return.
func isConflict(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsConflict(err) {
		return true
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if isConflict(e) {
				return true
			}
		}
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			if isConflict(e) {
				return true
			}
		}
	}
	if next := errors.Unwrap(err); next != nil {
		return isConflict(next)
	}
	return false
}
