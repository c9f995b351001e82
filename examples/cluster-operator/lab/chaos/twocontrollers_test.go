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

package chaos

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"

	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// holder is a controller that keeps a finalizer of its own on Clusters, as a storage or a backup
// controller would beside the operator: its one cleanup step waits (Waiting(after)) until hold
// has passed since the deletion began. It records when the step ran, per Cluster.
type holder struct {
	name        string
	finalizer   string
	after, hold time.Duration
	user        *testenv.User

	mu   sync.Mutex
	runs map[types.UID][]time.Time
	// retired records the Clusters whose cleanup this holder finished while another finalizer
	// still held them: its Lifecycle then removes its progress lines, one more status write.
	retired map[string]bool
}

// step is the holder's cleanup step.
func (h *holder) step(_ context.Context, c *appsv1alpha1.Cluster) (finalizer.Progress, error) {
	now := time.Now()
	h.mu.Lock()
	h.runs[c.UID] = append(h.runs[c.UID], now)
	h.mu.Unlock()
	if now.Sub(c.DeletionTimestamp.Time) >= h.hold {
		if len(c.Finalizers) > 1 {
			h.mu.Lock()
			h.retired[c.Name] = true
			h.mu.Unlock()
		}
		return finalizer.Finished(), nil
	}
	return finalizer.Waiting(h.after, "waiting for the final snapshot"), nil
}

// start runs the holder's controller as its own user, with its own manager, and returns when the
// manager runs.
func (h *holder) start(t *testing.T) {
	t.Helper()
	h.runs = map[types.UID][]time.Time{}
	h.retired = map[string]bool{}
	h.user = env.NewUser(t, h.name, testenv.Roles{&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: h.name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{appsv1alpha1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{appsv1alpha1.GroupVersion.Group}, Resources: []string{"clusters/status"}, Verbs: []string{"get", "patch", "update"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}})
	mgr := h.user.NewManager(t, ctrl.Options{})
	lifecycle := &finalizer.Lifecycle[*appsv1alpha1.Cluster]{
		Finalizer: h.finalizer,
		Client:    mgr.GetClient(),
		Recorder:  mgr.GetEventRecorder(h.name),
		Steps:     []finalizer.Step[*appsv1alpha1.Cluster]{{Name: "final-snapshot", Run: h.step}},
	}
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var c appsv1alpha1.Cluster
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, &c); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		_, res, err := lifecycle.Reconcile(ctx, &c)
		return res, err
	})
	// Every event of a Cluster wakes it, the other controller's writes included: that is what
	// would make two Lifecycles take turns.
	if err := ctrl.NewControllerManagedBy(mgr).Named(h.name).For(&appsv1alpha1.Cluster{}).
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: h.name})); err != nil {
		t.Fatalf("failed to set up %s: %v", h.name, err)
	}
	testenv.StartManager(t, mgr)
}

// twoControllers deletes Clusters that two controllers, each with its own finalizer and
// Lifecycle, clean up at once, and checks from the audit log that neither takes turns with the
// other: each waiting step runs at most ceil(elapsed/after)+1 times, and each controller writes
// a Cluster's status only when its own progress line changes (once: its message never changes),
// and once more to remove that line when it finished while the other's finalizer remained.
func twoControllers(t *testing.T, w *world) *result {
	ctx := t.Context()
	n := w.sizes.TwoControllerClusters
	ns := w.namespace(t, "shared")
	holders := []*holder{
		{name: "storage-controller", finalizer: "storage.example.com/cleanup", after: 2 * time.Second, hold: 5 * time.Second},
		{name: "backup-controller", finalizer: "backup.example.com/cleanup", after: 3 * time.Second, hold: 7 * time.Second},
	}
	for _, h := range holders {
		h.start(t)
	}
	names := w.createClusters(t, ns, "c", n, 1)
	if err := poll(ctx, w.sizes.Timeout, func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		held := 0
		for _, c := range list.Items {
			if len(c.Finalizers) == len(holders) {
				held++
			}
		}
		return held == n, nil
	}); err != nil {
		t.Fatalf("the controllers did not add their finalizers to %d Clusters: %v", n, err)
	}

	from := w.mark(t)
	w.deleteAll(t, ns)
	gone := w.waitGone(t, ns)
	to := w.mark(t)

	events, err := env.AuditLog().Between(from, to)
	if err != nil {
		t.Fatalf("failed to read the audit log: %v", err)
	}
	r := &result{
		Operations:  fmt.Sprintf("%d Clusters held by 2 finalizers of 2 controllers, deleted at once", n),
		Faults:      "none: the two controllers' writes wake each other",
		Convergence: fmt.Sprintf("all gone %s after the deletion", secs(gone)),
	}
	for _, h := range holders {
		// A write the API server refused (a conflict with the other controller's write at the
		// same moment) changed nothing; the one that follows it is the write, not a second one.
		writes := events.ByUser(h.user.Name()).Writes().Filter(func(e testenv.AuditEvent) bool {
			return e.Resource == "clusters" && e.Subresource == "status"
		})
		refused := len(writes.Filter(func(e testenv.AuditEvent) bool { return e.Code >= 300 }))
		statusWrites := writes.Filter(func(e testenv.AuditEvent) bool { return e.Code < 300 }).
			Count(func(e testenv.AuditEvent) string { return e.Name })
		extraRuns, extraWrites, maxRuns, maxWrites := 0, 0, 0, 0
		h.mu.Lock()
		for _, name := range names {
			// Its progress line never changes: one write, and one more to remove it when it
			// finished while the other controller's finalizer still held the Cluster.
			limit := 1
			if h.retired[name] {
				limit = 2
			}
			if s := statusWrites[name]; s > limit {
				extraWrites += s - limit
				r.Problems = append(r.Problems, fmt.Sprintf("%s wrote the status of %s %d times; its progress line never changes, so %d is all", h.name, name, s, limit))
			}
			maxWrites = max(maxWrites, statusWrites[name])
		}
		for uid, runs := range h.runs {
			elapsed := runs[len(runs)-1].Sub(runs[0])
			limit := int(math.Ceil(elapsed.Seconds()/h.after.Seconds())) + 1
			if len(runs) > limit {
				extraRuns += len(runs) - limit
				r.Problems = append(r.Problems, fmt.Sprintf("%s ran its step %d times on Cluster %s in %s; at most %d at one run per %s", h.name, len(runs), uid, elapsed, limit, h.after))
			}
			maxRuns = max(maxRuns, len(runs))
		}
		h.mu.Unlock()
		r.Duplicated += extraRuns + extraWrites
		r.Details = append(r.Details, fmt.Sprintf("%s (Waiting(%s) for %s after the deletion): at most %d step runs and %d status writes per Cluster (audit log; %d more refused as conflicts); %d runs and %d writes beyond the bounds.",
			h.name, h.after, h.hold, maxRuns, maxWrites, refused, extraRuns, extraWrites))
	}
	if len(r.Problems) > 10 {
		r.Problems = append(r.Problems[:10], fmt.Sprintf("… and %d more", len(r.Problems)-10))
	}
	return r
}
