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
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/tenon-dev/tenon/testing/testenv"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
	"github.com/tenon-dev/tenon/hack/bench/contender"
)

// The workloads, in the order each run performs them on the same objects.
const (
	// Converge starts the controller on N new Widgets and runs until all are in their desired
	// state.
	Converge = "converge"
	// Steady enqueues every Widget once more, with nothing to do, through a channel source: no
	// object is written to trigger it.
	Steady = "steady"
	// Contention runs concurrent writers on a set of Widgets while the controller works, then
	// checks every field they wrote.
	Contention = "contention"
	// Delete deletes every Widget and runs until all are gone: the controller removes its
	// finalizer.
	Delete = "delete"
)

// Workloads lists the workloads in the order they run.
var Workloads = []string{Converge, Steady, Contention, Delete}

// Params are the benchmark's parameters.
type Params struct {
	// Objects is N, the number of Widgets per run.
	Objects int `json:"objects"`
	// Runs is how often each contender is measured; the order of contenders alternates.
	Runs int `json:"runs"`
	// Workers is the controller's MaxConcurrentReconciles.
	Workers int `json:"workers"`
	// Writers is the number of concurrent writers in the contention workload.
	Writers int `json:"writers"`
	// HotObjects is the number of Widgets the writers edit (the first HotObjects by name).
	HotObjects int `json:"hotObjects"`
	// OpsPerWriter is the number of edits each writer makes.
	OpsPerWriter int `json:"opsPerWriter"`
	// Timeout bounds each workload.
	Timeout time.Duration `json:"timeout"`
	// Seed seeds the writers' choices; every contender of a run sees the same sequence of edits.
	Seed int64 `json:"seed"`
	// ReadYourWritesRuns is the number of extra runs, after Runs, in which every contender's
	// client has controller-runtime's read-your-writes consistency on, not only the floor's (see
	// contender.Contender.ReadYourWrites): an experiment that separates what a library writes from
	// what a lagging cache makes it write.
	ReadYourWritesRuns int `json:"readYourWritesRuns"`
}

// WorkloadResult is what one workload of one run measured.
type WorkloadResult struct {
	Workload string `json:"workload"`
	// Objects is what per-object figures divide by: N, or the hot objects for contention.
	Objects int `json:"objects"`
	// Wall is the time from the start of the workload until the system was quiet.
	Wall time.Duration `json:"wall"`
	// Requests are the manager's requests during the workload, by kind.
	Requests Counts `json:"requests"`
	// Reconcile counts the reconciles during the workload and what they returned.
	Reconcile ReconcileStats `json:"reconcile"`
	// ErrorSamples are distinct reconcile errors, most frequent first.
	ErrorSamples []string `json:"errorSamples,omitempty"`
	// Versions counts the new resourceVersions of Widgets the manager's informer saw: writes
	// that changed an object (a request that changes nothing creates none). Not measured (-1)
	// for contention, where the writers create versions too.
	Versions int `json:"versions"`
	// Writers describes the concurrent writers (contention only).
	Writers *WriterStats `json:"writers,omitempty"`
	// LostUpdates counts fields a writer set that did not hold its last value at the end
	// (contention only).
	LostUpdates int `json:"lostUpdates"`
	// LostSamples describe some of the lost updates.
	LostSamples []string `json:"lostSamples,omitempty"`
	// Audit is what the API server's audit log recorded of the manager's requests during the
	// workload, and where it disagrees with Requests; nil in measurements that predate it.
	Audit *AuditCounts `json:"audit,omitempty"`
	// Failure says why the workload did not finish, or is empty.
	Failure string `json:"failure,omitempty"`
}

// RunResult is one run of one contender: its workloads, in order.
type RunResult struct {
	Contender string `json:"contender"`
	// Run numbers the runs from 1.
	Run int `json:"run"`
	// Position is the contender's place in this run's order, from 1.
	Position int `json:"position"`
	// ReadYourWrites reports whether the contender's client read its own writes.
	ReadYourWrites bool             `json:"readYourWrites"`
	Workloads      []WorkloadResult `json:"workloads"`
}

// Workload returns the result of the named workload, or nil.
func (r *RunResult) Workload(name string) *WorkloadResult {
	for i := range r.Workloads {
		if r.Workloads[i].Workload == name {
			return &r.Workloads[i]
		}
	}
	return nil
}

// runState is what one run of one contender works with.
type runState struct {
	env       *Env
	params    Params
	name      string
	namespace string
	mgr       manager.Manager
	counter   *Counter
	inst      *Instrument
	events    chan event.GenericEvent
	versions  atomic.Int64
	ctrlName  string
	run       int
	ryw       bool
}

// Run measures contender c once, as the run-th run, at position in the run's order, with
// read-your-writes consistency when ryw or c.ReadYourWrites is set: it creates
// a namespace and N Widgets, starts a manager with c's reconciler, runs every workload, stops
// the manager and deletes the namespace. A workload that fails is recorded in its result and
// ends the run; an error is returned only when the run could not be set up or torn down.
func (e *Env) Run(ctx context.Context, c contender.Contender, p Params, run, position int, ryw bool) (RunResult, error) {
	result := RunResult{Contender: c.Name, Run: run, Position: position, ReadYourWrites: ryw || c.ReadYourWrites}
	// Garbage from the previous run must not be collected during this one.
	runtime.GC()

	s := &runState{env: e, params: p, name: c.Name, counter: NewCounter(), run: run, ryw: result.ReadYourWrites,
		namespace: fmt.Sprintf("bench-%s-%d", slug(c.Name), run),
		ctrlName:  fmt.Sprintf("widget-%s-%d", slug(c.Name), run),
		events:    make(chan event.GenericEvent, p.Objects)}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: s.namespace + "-"}}
	if err := e.direct.Create(ctx, ns); err != nil {
		return result, fmt.Errorf("failed to create namespace: %w", err)
	}
	s.namespace = ns.Name
	defer func() {
		// Without a namespace controller the namespace stays Terminating; it is empty by then.
		_ = e.direct.Delete(context.WithoutCancel(ctx), ns)
	}()

	if err := s.createWidgets(ctx); err != nil {
		return result, err
	}
	if err := s.setupManager(c); err != nil {
		return result, err
	}

	// The converge workload starts before the manager does, so that the audit log and the
	// counter both see the manager's first request.
	first, err := s.begin(ctx)
	if err != nil {
		return result, err
	}
	mctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mgrErr error
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		mgrErr = s.mgr.Start(mctx)
	}()

	for _, w := range []func(context.Context, *phase, time.Time) WorkloadResult{s.converge, s.steady, s.contention, s.delete} {
		r := w(ctx, first, start)
		result.Workloads = append(result.Workloads, r)
		if r.Failure != "" {
			break
		}
		first, start = nil, time.Time{}
	}

	stop()
	wg.Wait()
	if mgrErr != nil {
		return result, fmt.Errorf("failed to run manager: %w", mgrErr)
	}
	if last := result.Workloads[len(result.Workloads)-1]; last.Failure != "" {
		// Leave nothing behind for the next run: remove the finalizers the controller did not.
		if err := s.forceDelete(ctx); err != nil {
			return result, err
		}
	}
	return result, nil
}

// createWidgets creates N Widgets through the benchmark's client, before the manager starts:
// sizes and replicas set, and a color on nine in ten, so one in ten is not Ready.
func (s *runState) createWidgets(ctx context.Context) error {
	const parallel = 8
	names := make(chan int)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				w := newWidget(s.namespace, i)
				if err := s.env.direct.Create(ctx, w); err != nil {
					errs <- fmt.Errorf("failed to create widget %s: %w", w.Name, err)
					return
				}
			}
		}()
	}
	var err error
loop:
	for i := range s.params.Objects {
		select {
		case names <- i:
		case err = <-errs:
			break loop
		}
	}
	close(names)
	wg.Wait()
	close(errs)
	return errors.Join(err, <-errs)
}

// WidgetName returns the name of the i-th Widget of a run.
func WidgetName(i int) string { return fmt.Sprintf("widget-%05d", i) }

func newWidget(namespace string, i int) *benchv1.Widget {
	w := &benchv1.Widget{ObjectMeta: metav1.ObjectMeta{Name: WidgetName(i), Namespace: namespace}}
	w.Spec.Size = "m"
	w.Spec.Replicas = ptr.To[int32](1)
	if i%10 != 9 {
		w.Spec.Color = "blue"
	}
	return w
}

// setupManager builds the manager and the controller: the manager's requests go through the
// counter, its cache holds only the run's namespace, and the controller watches Widgets plus the
// channel the steady workload enqueues through.
func (s *runState) setupManager(c contender.Contender) error {
	cfg := s.env.config()
	cfg.WrapTransport = s.counter.Wrap
	cfg.UserAgent = UserAgent(RoleController, s.name, s.run)
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                 s.env.scheme,
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{s.namespace: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Client: client.Options{Cache: &client.CacheOptions{
			EnableReadYourWritesConsistency: ptr.To(s.ryw),
		}},
	})
	if err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	s.mgr = mgr
	s.inst = NewInstrument(c.New(mgr.GetClient(), "bench-"+slug(c.Name)))
	err = ctrl.NewControllerManagedBy(mgr).
		Named(s.ctrlName).
		For(&benchv1.Widget{}).
		WatchesRawSource(source.Channel(s.events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: s.params.Workers}).
		Complete(s.inst)
	if err != nil {
		return fmt.Errorf("failed to create controller: %w", err)
	}

	// Count the versions the informer sees: each is a write that changed a Widget.
	inf, err := mgr.GetCache().GetInformer(context.Background(), &benchv1.Widget{})
	if err != nil {
		return fmt.Errorf("failed to get informer: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(client.Object)
			n, ok2 := newObj.(client.Object)
			if ok1 && ok2 && o.GetResourceVersion() != n.GetResourceVersion() {
				s.versions.Add(1)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("failed to add event handler: %w", err)
	}
	return nil
}

// phase is where a workload starts: the counters' values and a mark in the audit log.
type phase struct {
	counts   Counts
	stats    ReconcileStats
	versions int64
	mark     testenv.AuditMark
}

// begin takes the counters' values and marks the audit log.
func (s *runState) begin(ctx context.Context) (*phase, error) {
	mark, err := s.env.audit.Mark(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to mark the audit log: %w", err)
	}
	return &phase{counts: s.counter.Snapshot(), stats: s.inst.Stats(), versions: s.versions.Load(), mark: mark}, nil
}

// measure runs body as the workload name and fills in what the counters and the audit log saw.
// from is where the workload began (nil: now), start when (zero: now).
func (s *runState) measure(ctx context.Context, name string, objects int, from *phase, start time.Time, body func(r *WorkloadResult) (end time.Time, err error)) WorkloadResult {
	r := WorkloadResult{Workload: name, Objects: objects, Versions: -1}
	if from == nil {
		var err error
		if from, err = s.begin(ctx); err != nil {
			r.Failure = err.Error()
			return r
		}
	}
	s.inst.Mark()
	if start.IsZero() {
		start = time.Now()
	}
	end, err := body(&r)
	if err != nil {
		r.Failure = err.Error()
		end = time.Now()
	}
	r.Wall = end.Sub(start)
	// The counter first: a request that completes in between is in the audit log's count of this
	// workload and the counter's of the next, and CompareAudit reports it. The system is quiet
	// here, so none should.
	r.Requests = s.counter.Snapshot().Sub(from.counts)
	to, markErr := s.env.audit.Mark(context.WithoutCancel(ctx))
	after := s.inst.Stats()
	r.Reconcile = ReconcileStats{
		Reconciles:     after.Reconciles - from.stats.Reconciles,
		Errors:         after.Errors - from.stats.Errors,
		ConflictErrors: after.ConflictErrors - from.stats.ConflictErrors,
		Requeues:       after.Requeues - from.stats.Requeues,
	}
	r.ErrorSamples = s.inst.ErrorSamples()
	if name != Contention {
		r.Versions = int(s.versions.Load() - from.versions)
	}
	if markErr == nil {
		r.Audit, markErr = s.auditWorkload(from.mark, to, r.Requests)
	}
	if markErr != nil && r.Failure == "" {
		r.Failure = fmt.Sprintf("failed to read the audit log: %v", markErr)
	}
	return r
}

func (s *runState) converge(ctx context.Context, from *phase, start time.Time) WorkloadResult {
	return s.measure(ctx, Converge, s.params.Objects, from, start, func(*WorkloadResult) (time.Time, error) {
		return s.settle(ctx, allConverged(s.params.Objects), nil)
	})
}

func (s *runState) steady(ctx context.Context, from *phase, _ time.Time) WorkloadResult {
	return s.measure(ctx, Steady, s.params.Objects, from, time.Time{}, func(*WorkloadResult) (time.Time, error) {
		list := &benchv1.WidgetList{}
		if err := s.env.direct.List(ctx, list, client.InNamespace(s.namespace)); err != nil {
			return time.Time{}, fmt.Errorf("failed to list widgets: %w", err)
		}
		for i := range list.Items {
			select {
			case s.events <- event.GenericEvent{Object: &list.Items[i]}:
			case <-ctx.Done():
				return time.Time{}, ctx.Err()
			}
		}
		everyOne := func() bool { return s.inst.ReconciledSinceMark() >= s.params.Objects }
		return s.settle(ctx, allConverged(s.params.Objects), everyOne)
	})
}

func (s *runState) contention(ctx context.Context, from *phase, _ time.Time) WorkloadResult {
	hot := min(s.params.HotObjects, s.params.Objects)
	return s.measure(ctx, Contention, hot, from, time.Time{}, func(r *WorkloadResult) (time.Time, error) {
		names := make([]string, hot)
		for i := range names {
			names[i] = WidgetName(i)
		}
		ws, logs := runWriters(ctx, s.env.writers, s.namespace, names, s.params, s.run)
		r.Writers = &ws
		end, err := s.settle(ctx, allConverged(s.params.Objects), nil)
		if err != nil {
			return end, err
		}
		r.LostUpdates, r.LostSamples, err = s.verifyWriters(ctx, logs)
		return end, err
	})
}

func (s *runState) delete(ctx context.Context, from *phase, _ time.Time) WorkloadResult {
	return s.measure(ctx, Delete, s.params.Objects, from, time.Time{}, func(*WorkloadResult) (time.Time, error) {
		if err := s.env.direct.DeleteAllOf(ctx, &benchv1.Widget{}, client.InNamespace(s.namespace)); err != nil {
			return time.Time{}, fmt.Errorf("failed to delete widgets: %w", err)
		}
		return s.settle(ctx, func(items []benchv1.Widget) (bool, string) {
			if len(items) > 0 {
				return false, fmt.Sprintf("%d widgets left, such as %s", len(items), items[0].Name)
			}
			return true, ""
		}, nil)
	})
}

// forceDelete removes every Widget of the run, finalizers and all, after a failed workload.
func (s *runState) forceDelete(ctx context.Context) error {
	list := &benchv1.WidgetList{}
	if err := s.env.direct.List(ctx, list, client.InNamespace(s.namespace)); err != nil {
		return fmt.Errorf("failed to list widgets: %w", err)
	}
	for i := range list.Items {
		w := &list.Items[i]
		if len(w.Finalizers) > 0 {
			base := w.DeepCopy()
			w.Finalizers = nil
			if err := client.IgnoreNotFound(s.env.direct.Patch(ctx, w, client.MergeFrom(base))); err != nil {
				return fmt.Errorf("failed to remove finalizers of %s: %w", w.Name, err)
			}
		}
		if err := client.IgnoreNotFound(s.env.direct.Delete(ctx, w)); err != nil {
			return fmt.Errorf("failed to delete %s: %w", w.Name, err)
		}
	}
	return nil
}

// allConverged returns a check that n Widgets exist and each is in its desired state.
func allConverged(n int) func([]benchv1.Widget) (bool, string) {
	return func(items []benchv1.Widget) (bool, string) {
		if len(items) != n {
			return false, fmt.Sprintf("%d widgets, want %d", len(items), n)
		}
		bad, first := 0, ""
		for i := range items {
			if ok, why := contender.Converged(&items[i]); !ok {
				if bad == 0 {
					first = items[i].Name + ": " + why
				}
				bad++
			}
		}
		if bad > 0 {
			return false, fmt.Sprintf("%d widgets not converged, such as %s", bad, first)
		}
		return true, ""
	}
}

// slug returns name fit for Kubernetes names and field managers: lower case, every run of other
// characters than letters and digits one "-", none at the ends ("tenon (default manager)":
// "tenon-default-manager").
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
