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

// Package controller holds the Guestbook controller of tenon's getting-started guide
// (docs/getting-started.md): a kubebuilder go/v4 reconciler built from tenon's blocks.
package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"

	webappv1 "github.com/tenon-dev/tenon/examples/getting-started/api/v1"
)

// ReasonOwnedElsewhere is the reason of Stalled when the Guestbook's ConfigMap belongs to
// another owner.
const ReasonOwnedElsewhere conditions.Reason = "OwnedElsewhere"

// GuestbookReconciler reconciles a Guestbook object.
type GuestbookReconciler struct {
	client.Client
	// Applier applies the Guestbook's ConfigMap with server-side apply, and skips the applies
	// that would change nothing.
	Applier *patch.Applier
	// Writer writes each reconcile's changes to the Guestbook back, and records an Event when
	// Ready or Stalled change; one for all reconciles.
	Writer *patch.Writer
}

// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile keeps a ConfigMap with the Guestbook's message, owned by the Guestbook, and reports
// Ready.
func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	guestbook := &webappv1.Guestbook{}
	if err := r.Get(ctx, req.NamespacedName, guestbook); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// However this reconcile returns, record its outcome in the status, write what it changed to
	// the Guestbook, and nothing else, then record an Event if Ready or Stalled changed.
	h, err := r.Writer.NewHelper(guestbook)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { res, err = h.Finish(ctx, guestbook, res, err) }()

	configMap := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: guestbook.Name + "-greeting", Namespace: guestbook.Namespace},
		Data:       map[string]string{"message": guestbook.Spec.Message},
	}
	_, err = r.Applier.Apply(ctx, configMap, patch.OwnedBy(guestbook), patch.ForceConflicts(true))
	if refused := (*ownership.AdoptionError)(nil); errors.As(err, &refused) {
		return requeue.Terminal(ReasonOwnedElsewhere, err) // retrying cannot take it
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to apply the ConfigMap: %w", err)
	}
	conditions.MarkTrue(guestbook, conditions.Ready, conditions.ReasonSucceeded, "the ConfigMap holds the message")
	return ctrl.Result{}, nil
}

// SetupWithManager sets up the controller with the Manager: a change of a Guestbook, or of a
// ConfigMap it owns, reconciles the Guestbook.
func (r *GuestbookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.Guestbook{}).
		Owns(&corev1.ConfigMap{}).
		Named("guestbook").
		Complete(requeue.WithBackoff(r, requeue.BackoffOptions{Name: "guestbook"}))
}
