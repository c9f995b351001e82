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

package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

// Reasons of the ConfigReady and WorkloadReady conditions.
const (
	ReasonApplied        conditions.Reason = "Applied"
	ReasonRollingOut     conditions.Reason = "RollingOut"
	ReasonReplicasReady  conditions.Reason = "ReplicasReady"
	ReasonOwnedElsewhere conditions.Reason = "OwnedByAnotherObject"
	ReasonApplyFailed    conditions.Reason = "ApplyFailed"
)

// reconcileConfig applies the cluster's ConfigMap and its entry in the directory namespace, and
// sets ConfigReady.
func (r *ClusterReconciler) reconcileConfig(ctx context.Context, cluster *appsv1alpha1.Cluster) (ctrl.Result, error) {
	// The directory entry lives in another namespace, where no owner reference can point back:
	// ownership tracks it with labels, and the finalizer deletes it.
	config, entry := desired.ConfigMap(cluster), desired.DirectoryEntry(cluster, r.DirectoryNamespace)
	for _, child := range []*corev1.ConfigMap{config, entry} {
		if res, err := r.applyOwned(ctx, cluster, child, appsv1alpha1.ConfigReady); err != nil || !res.IsZero() {
			return res, err
		}
	}
	conditions.MarkTrue(cluster, appsv1alpha1.ConfigReady, ReasonApplied,
		fmt.Sprintf("config map %s and directory entry %s/%s applied", config.Name, entry.Namespace, entry.Name))
	return ctrl.Result{}, nil
}

// reconcileWorkload applies the Services and the StatefulSet, sets WorkloadReady and
// status.readyReplicas, and returns the address clients reach the cluster at.
func (r *ClusterReconciler) reconcileWorkload(ctx context.Context, cluster *appsv1alpha1.Cluster) (address string, res ctrl.Result, err error) {
	// desired.Service says why its ports name their protocol.
	svc, peers, sts := desired.Service(cluster), desired.PeerService(cluster), desired.StatefulSet(cluster)
	for _, child := range []client.Object{svc, peers, sts} {
		if res, err := r.applyOwned(ctx, cluster, child, appsv1alpha1.WorkloadReady); err != nil || !res.IsZero() {
			// svc holds the live Service once it is applied: the DNS record can still follow it.
			return svc.Spec.ClusterIP, res, err
		}
	}

	// sts now holds the live StatefulSet, with its status: the StatefulSet controller reports the
	// rollout there, as `kubectl rollout status` reads it.
	cluster.Status.ReadyReplicas = sts.Status.ReadyReplicas
	replicas, status := cluster.Spec.Replicas, sts.Status
	var message string
	switch {
	case status.ObservedGeneration < sts.Generation:
		message = fmt.Sprintf("waiting for the StatefulSet controller to observe generation %d", sts.Generation)
	case status.UpdatedReplicas < replicas || status.CurrentRevision != status.UpdateRevision:
		message = fmt.Sprintf("rolling out version %s: %d of %d replicas updated", cluster.Spec.Version, status.UpdatedReplicas, replicas)
	case status.Replicas > replicas:
		message = fmt.Sprintf("scaling down from %d to %d replicas", status.Replicas, replicas)
	case status.ReadyReplicas < replicas:
		message = fmt.Sprintf("%d of %d replicas ready", status.ReadyReplicas, replicas)
	default:
		conditions.MarkTrue(cluster, appsv1alpha1.WorkloadReady, ReasonReplicasReady,
			fmt.Sprintf("%d of %d replicas ready", status.ReadyReplicas, replicas))
		return svc.Spec.ClusterIP, ctrl.Result{}, nil
	}
	conditions.MarkFalse(cluster, appsv1alpha1.WorkloadReady, ReasonRollingOut, message)
	// The StatefulSet's status changes wake this controller up (Owns): no need to poll. The Cluster
	// stays Reconciling meanwhile (see Reconcile).
	return svc.Spec.ClusterIP, ctrl.Result{}, nil
}

// applyOwned makes cluster the owner of child and applies child with server-side apply, in one
// call. A child another object controls is not taken: the condition t says so, and the reconcile
// stops with a terminal error (the Cluster is Stalled) until a person resolves the clash and
// touches the Cluster (no event reaches it when the other owner lets go of the child).
func (r *ClusterReconciler) applyOwned(ctx context.Context, cluster *appsv1alpha1.Cluster, child client.Object, t conditions.Type) (ctrl.Result, error) {
	_, err := r.Applier.Apply(ctx, child, patch.OwnedBy(cluster), patch.ForceConflicts(true))
	if refused := (*ownership.AdoptionError)(nil); errors.As(err, &refused) {
		conditions.MarkFalse(cluster, t, ReasonOwnedElsewhere, err.Error())
		return requeue.Terminal(ReasonOwnedElsewhere, fmt.Errorf("child owned by another object: %w", err))
	}
	if err != nil {
		// The error names the child already. A conflict, throttling or a transient failure of the
		// API server says nothing about the child: it is retried (conflicts quietly, by
		// requeue.WithBackoff) and the condition keeps its status, so that Ready does not flap
		// under load. Any other failure (an invalid object, a missing permission) is reported.
		switch requeue.Classify(err) {
		case requeue.ClassConflict, requeue.ClassAlreadyExists, requeue.ClassGone, requeue.ClassThrottled, requeue.ClassTransient:
		default:
			conditions.MarkFalse(cluster, t, ReasonApplyFailed, err.Error())
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
