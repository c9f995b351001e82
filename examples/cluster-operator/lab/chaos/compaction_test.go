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
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
)

// etcdCompaction: while Clusters are created, scaled and deleted, etcd's history is compacted
// and kube-apiserver restarted, several times: every watch the operator resumes is refused with
// 410 Gone ("too old resource version") and its informers list again. Nothing may be lost,
// leaked or duplicated, deletions included.
func etcdCompaction(t *testing.T, w *world) *result {
	ctx := t.Context()
	n := w.sizes.CompactionClusters
	ns := w.namespace(t, "compaction")
	log := &writes{}
	p := w.newProxy(t, "compaction", w.user.Config(), log)
	proc := w.startOperator(t, "compaction", p)
	wc, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("failed to create a watching client: %v", err)
	}

	// The operator is up, its caches synced, before the first compaction: a manager that starts
	// while the API server is down exits, by design (its Deployment restarts it; the restart
	// scenario covers that).
	want := map[string]int32{}
	for _, name := range w.createClusters(t, ns, "warm", n, 1) {
		want[name] = 1
	}
	w.waitConverged(t, ns)
	var deleted, prev []string
	refused := 0
	var revisions []int64
	for round := range w.sizes.Compactions {
		names := w.createClusters(t, ns, fmt.Sprintf("r%d", round), n, 1)
		for _, name := range names {
			want[name] = 1
		}
		// Mid-convergence: the resourceVersion every watch of the operator has seen by now is
		// about to be compacted away.
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatalf("failed to list Clusters: %v", err)
		}
		seen := list.ResourceVersion
		// Churn while the history goes: scale the previous round's Clusters, delete one of them.
		if prev != nil {
			w.setReplicas(t, ns, prev[1:], 3)
			for _, name := range prev[1:] {
				want[name] = 3
			}
			if err := w.admin.Delete(ctx, &appsv1alpha1.Cluster{ObjectMeta: metaName(ns, prev[0])}); err != nil {
				t.Fatalf("failed to delete Cluster %s: %v", prev[0], err)
			}
			delete(want, prev[0])
			deleted = append(deleted, prev[0])
		}
		prev = names
		rev, err := env.CompactEtcd(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		revisions = append(revisions, rev)
		stopped := time.Now()
		if err := env.RestartAPIServer(ctx); err != nil {
			t.Fatalf("round %d: failed to restart kube-apiserver: %v", round, err)
		}
		// RestartAPIServer returns once RBAC authorizes again.
		w.restarting(stopped, time.Now())
		// What the operator's informers meet when they resume: a watch from before is refused.
		if gone, err := watchRefused(t, wc, ns, seen); err != nil {
			t.Fatalf("round %d: %v", round, err)
		} else if gone {
			refused++
		}
	}
	converge := w.waitConverged(t, ns)
	restarts := 0
	if !proc.running() {
		restarts++
		t.Errorf("the operator exited: %v", proc.err)
	}
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)
	if refused != w.sizes.Compactions {
		problems = append(problems, fmt.Sprintf("a watch from before the compaction was refused in %d of %d rounds: the scenario did not expire the operator's watches", refused, w.sizes.Compactions))
		lost++
	}
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	return &result{
		Operations: fmt.Sprintf("%d creates, %d scales, %d deletes during the compactions, %d after; %d API writes by the operator",
			n*(w.sizes.Compactions+1), (n-1)*(w.sizes.Compactions-1), len(deleted), n*(w.sizes.Compactions+1)-len(deleted), countWrites(log.list(), false)),
		Faults: fmt.Sprintf("%d rounds of etcd compaction at the current revision (revisions %v) followed by a kube-apiserver restart; a watch from before was refused with 410 Gone in %d of them",
			w.sizes.Compactions, revisions, refused),
		Convergence: fmt.Sprintf("converged %s after the last round, delete %s", secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + restarts + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, final.Problems),
		Details: []string{
			fmt.Sprintf("%d Clusters converge first, so that the operator is up. Then each round creates %d Clusters and, from the second on, scales the previous round's to 3 and deletes one of them; then, mid-convergence, etcd's history is compacted up to its current revision (as kube-apiserver does every 5 minutes) and kube-apiserver restarted, which empties its watch cache.", n, n),
			"A watch from the resourceVersion the operator had seen before the compaction must then be refused with 410 Gone (checked by the scenario's own watch each round): the operator's informers cannot resume and must list again.",
			"Every Cluster must converge to its last spec, the deleted ones' DNS records and directory entries must be gone, and the operator must be the same process at the end.",
		},
	}
}

// watchRefused watches Clusters in namespace from resourceVersion and reports whether the API
// server refused it as expired (410 Gone).
func watchRefused(t *testing.T, wc client.WithWatch, namespace, resourceVersion string) (bool, error) {
	t.Helper()
	w, err := wc.Watch(t.Context(), &appsv1alpha1.ClusterList{}, client.InNamespace(namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
	if err != nil {
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
	}
	defer w.Stop()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, fmt.Errorf("the watch from resourceVersion %s ended without an answer", resourceVersion)
			}
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
			}
			// Events the watch replays mean it was not refused.
			return false, nil
		case <-timer.C:
			return false, nil // quiet and open: not refused
		}
	}
}
