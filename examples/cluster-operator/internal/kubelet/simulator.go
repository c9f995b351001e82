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

package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/requeue"
)

// Name is the simulator's controller name.
const Name = "kubelet-simulator"

// Simulator is a controller that reports the StatefulSets it selects as rolled out and ready, as
// the StatefulSet controller and the kubelets would once every pod runs. See the package
// documentation for what it does not simulate.
//
// Set Client, then register it with [Simulator.SetupWithManager]; the other fields have working
// defaults. It is safe for concurrent use.
type Simulator struct {
	// Client reads StatefulSets and writes their status. Required.
	Client client.Client

	// Selector selects the StatefulSets to simulate by their labels, such as the operator's
	// managed-by label. Defaults to every StatefulSet.
	Selector labels.Selector

	// ReplicaDelay is how long each replica of a rollout takes to become ready: after a change
	// of the StatefulSet's spec, one more replica is ready every ReplicaDelay, until all are.
	// Replicas that already ran the same pod template stay ready, so scaling up only waits for
	// the new ones. Defaults to 0: a rollout completes at once.
	ReplicaDelay time.Duration

	// Clock is the source of time for ReplicaDelay. Defaults to the real clock.
	Clock clock.PassiveClock

	mu       sync.Mutex
	rollouts map[types.NamespacedName]rollout
}

var _ reconcile.Reconciler = (*Simulator)(nil)

// rollout is a StatefulSet generation being rolled out.
type rollout struct {
	generation int64
	revision   string
	// ready is how many replicas were ready, at the revision, when the rollout started.
	ready     int32
	startedAt time.Time
}

// SetupWithManager registers the simulator with mgr, watching the StatefulSets it selects.
func (s *Simulator) SetupWithManager(mgr ctrl.Manager) error {
	selector := s.Selector
	if selector == nil {
		selector = labels.Everything()
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&appsv1.StatefulSet{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return selector.Matches(labels.Set(o.GetLabels()))
		}))).
		Complete(requeue.WithBackoff(s, requeue.BackoffOptions{Name: Name})); err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", Name, err)
	}
	return nil
}

// Reconcile writes the status the StatefulSet named by req has at this point of its rollout, and
// comes back when the next replica is due to become ready.
func (s *Simulator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sts := &appsv1.StatefulSet{}
	if err := s.Client.Get(ctx, req.NamespacedName, sts); err != nil {
		s.forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if sts.DeletionTimestamp != nil {
		return requeue.Done()
	}
	if s.Selector != nil && !s.Selector.Matches(labels.Set(sts.Labels)) {
		return requeue.Done()
	}
	revision, err := templateRevision(sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	status, next := s.status(req.NamespacedName, sts, revision)
	if !equality.Semantic.DeepEqual(sts.Status, status) {
		before := sts.DeepCopy()
		sts.Status = status
		if err := s.Client.Status().Patch(ctx, sts, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to update the status of StatefulSet %s: %w", req.NamespacedName, err)
		}
	}
	return requeue.After(next)
}

// status returns the status of sts at this point of its rollout, and how long until the next
// replica becomes ready (0 when all are).
func (s *Simulator) status(key types.NamespacedName, sts *appsv1.StatefulSet, revision string) (appsv1.StatefulSetStatus, time.Duration) {
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	now := s.now()

	s.mu.Lock()
	if s.rollouts == nil {
		s.rollouts = map[types.NamespacedName]rollout{}
	}
	r, ok := s.rollouts[key]
	if !ok || r.generation != sts.Generation {
		r = rollout{generation: sts.Generation, revision: revision, startedAt: now}
		if sts.Status.UpdateRevision == revision {
			// Same pod template, new replica count (or a restart of the simulator): the pods
			// that are ready stay ready.
			r.ready = min(sts.Status.ReadyReplicas, replicas)
		}
		s.rollouts[key] = r
	}
	s.mu.Unlock()

	ready, next := replicas, time.Duration(0)
	if s.ReplicaDelay > 0 {
		elapsed := max(now.Sub(r.startedAt), 0)
		ready = min(replicas, r.ready+int32(elapsed/s.ReplicaDelay))
		if ready < replicas {
			next = s.ReplicaDelay - elapsed%s.ReplicaDelay
		}
	}

	// Pods of the new revision are those that are ready; the others still run the old one.
	current, currentReplicas := sts.Status.CurrentRevision, replicas-ready
	if current == "" || current == revision || ready == replicas {
		current, currentReplicas = revision, ready
	}
	return appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation,
		Replicas:           replicas,
		ReadyReplicas:      ready,
		AvailableReplicas:  ready,
		UpdatedReplicas:    ready,
		CurrentReplicas:    currentReplicas,
		CurrentRevision:    current,
		UpdateRevision:     revision,
		CollisionCount:     sts.Status.CollisionCount,
		Conditions:         sts.Status.Conditions,
	}, next
}

func (s *Simulator) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rollouts, key)
}

func (s *Simulator) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// templateRevision names the revision of sts's pod template, as the StatefulSet controller
// names its ControllerRevisions: the StatefulSet's name and a hash of the template.
func templateRevision(sts *appsv1.StatefulSet) (string, error) {
	data, err := json.Marshal(sts.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("failed to hash the pod template of StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return fmt.Sprintf("%s-%08x", sts.Name, h.Sum32()), nil
}
