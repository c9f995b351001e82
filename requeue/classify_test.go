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

package requeue_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

var widgets = schema.GroupResource{Group: "test.tenon.dev", Resource: "widgets"}

// notFenced is an error with a Fenced method that reports false.
type notFenced struct{}

func (notFenced) Error() string { return "not fenced" }
func (notFenced) Fenced() bool  { return false }

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want requeue.Class
	}{
		{"nil", nil, requeue.ClassNone},
		{"a conflict", apierrors.NewConflict(widgets, "w", errors.New("the object has been modified")), requeue.ClassConflict},
		{"a wrapped conflict", fmt.Errorf("failed to update status: %w", apierrors.NewConflict(widgets, "w", errors.New("x"))), requeue.ClassConflict},
		{"a patch conflict", &patch.ConflictError{Object: "Widget ns/w", Fields: []string{"/status/conditions[Ready]"}}, requeue.ClassConflict},
		{"a retry", func() error { _, err := requeue.Retry("waiting"); return err }(), requeue.ClassRetry},
		{"a conflict joined with a 403", errors.Join(apierrors.NewConflict(widgets, "w", errors.New("x")), apierrors.NewForbidden(widgets, "w", errors.New("RBAC"))), requeue.ClassAuth},
		{"conflicts joined", errors.Join(apierrors.NewConflict(widgets, "w", errors.New("x")), apierrors.NewAlreadyExists(widgets, "w")), requeue.ClassConflict},
		{"a server-side apply refused over another manager's field", fieldConflict(), requeue.ClassFieldConflict},
		{"a field conflict wrapped as the Applier returns it", fmt.Errorf("failed to apply ConfigMap ns/c: %w", fieldConflict()), requeue.ClassFieldConflict},
		{"a conflict joined with a field conflict", errors.Join(apierrors.NewConflict(widgets, "w", errors.New("x")), fieldConflict()), requeue.ClassFieldConflict},
		{"an apply refused for its resourceVersion is a conflict", apierrors.NewConflict(widgets, "w", errors.New(registryOptimisticLockMsg)), requeue.ClassConflict},
		{"a terminal field conflict is terminal", reconcile.TerminalError(fieldConflict()), requeue.ClassTerminal},
		{"already exists", apierrors.NewAlreadyExists(widgets, "w"), requeue.ClassAlreadyExists},
		{"an expired resource version", apierrors.NewResourceExpired("expired"), requeue.ClassGone},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 3), requeue.ClassThrottled},
		{"a server timeout with retry-after", apierrors.NewServerTimeout(widgets, "get", 2), requeue.ClassThrottled},
		{"not found", apierrors.NewNotFound(widgets, "w"), requeue.ClassNotFound},
		{"forbidden", apierrors.NewForbidden(widgets, "w", errors.New("no RBAC")), requeue.ClassAuth},
		{"unauthorized", apierrors.NewUnauthorized("who are you"), requeue.ClassAuth},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "test.tenon.dev", Kind: "Widget"}, "w", nil), requeue.ClassInvalid},
		{"bad request", apierrors.NewBadRequest("nope"), requeue.ClassInvalid},
		{"request entity too large", apierrors.NewRequestEntityTooLargeError("big"), requeue.ClassInvalid},
		{"a write refused for an invalid condition", fmt.Errorf("failed to patch Widget ns/w: %w", conditions.Validate(metav1.Condition{
			Type: "Ready", Status: metav1.ConditionTrue, Reason: "not valid", LastTransitionTime: metav1.Now(),
		})), requeue.ClassInvalid},
		{"an invalid condition joined with a conflict", errors.Join(apierrors.NewConflict(widgets, "w", errors.New("x")), fmt.Errorf("failed to patch: %w", conditions.ErrInvalid)), requeue.ClassInvalid},
		{"an internal error", apierrors.NewInternalError(errors.New("etcd")), requeue.ClassTransient},
		{"service unavailable", apierrors.NewServiceUnavailable("later"), requeue.ClassTransient},
		{"a timeout", apierrors.NewTimeoutError("slow", 0), requeue.ClassTransient},
		{"a context deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), requeue.ClassTransient},
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, requeue.ClassTransient},
		{"a terminal error", reconcile.TerminalError(errors.New("bad spec")), requeue.ClassTerminal},
		{"a terminal conflict is terminal", reconcile.TerminalError(apierrors.NewConflict(widgets, "w", errors.New("x"))), requeue.ClassTerminal},
		{"a write refused by the fence", &fencing.RefusedError{Lease: "ns/lease"}, requeue.ClassFenced},
		{"a fenced write as the HTTP client returns it", &url.Error{Op: "Patch", URL: "https://api/x", Err: &fencing.RefusedError{Lease: "ns/lease"}}, requeue.ClassFenced},
		{"a fenced write joined with a 403", errors.Join(&fencing.RefusedError{}, apierrors.NewForbidden(widgets, "w", errors.New("RBAC"))), requeue.ClassAuth},
		{"a fenced write joined with a conflict", errors.Join(&fencing.RefusedError{}, apierrors.NewConflict(widgets, "w", errors.New("x"))), requeue.ClassFenced},
		{"an error whose Fenced says false", notFenced{}, requeue.ClassOther},
		{"anything else", errors.New("boom"), requeue.ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(requeue.Classify(tt.err)).To(Equal(tt.want), "class %s", requeue.Classify(tt.err))
		})
	}
}

// registryOptimisticLockMsg is the message of the API server's 409 for a write (an update, or an
// apply with metadata.resourceVersion) whose resourceVersion is not the object's.
const registryOptimisticLockMsg = "the object has been modified; please apply your changes to the latest version and try again"

// fieldConflict is the error the API server answers a server-side apply that sets a field
// another field manager owns (newConflictError in k8s.io/apimachinery's managedfields, through
// apierrors.NewApplyConflict).
func fieldConflict() error {
	return apierrors.NewApplyConflict([]metav1.StatusCause{{
		Type:    metav1.CauseTypeFieldManagerConflict,
		Message: `conflict with "kubectl-client-side-apply" using v1`,
		Field:   ".data.replicas",
	}}, `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.replicas`)
}

func TestWithBackoffTreatsEachClassOfError(t *testing.T) {
	ctx := context.Background()
	other := errors.New("boom")
	isTerminal := func(err error) bool { return errors.Is(err, reconcile.TerminalError(nil)) }
	tests := []struct {
		name         string
		err          error
		wantErr      func(error) bool
		wantMinDelay time.Duration
		wantMaxDelay time.Duration
	}{
		{name: "nil is done", err: nil, wantErr: isNil},
		{name: "a conflict is a quiet short requeue", err: apierrors.NewConflict(widgets, "w", errors.New("modified")), wantErr: isNil, wantMinDelay: 100 * time.Millisecond, wantMaxDelay: 200 * time.Millisecond},
		{name: "already exists is a quiet short requeue", err: apierrors.NewAlreadyExists(widgets, "w"), wantErr: isNil, wantMinDelay: 100 * time.Millisecond, wantMaxDelay: 200 * time.Millisecond},
		{name: "throttling waits as long as the server says", err: apierrors.NewTooManyRequests("slow down", 7), wantErr: isNil, wantMinDelay: 7 * time.Second, wantMaxDelay: 7 * time.Second},
		{name: "throttling without a delay waits a second", err: apierrors.NewTooManyRequests("slow down", 0), wantErr: isNil, wantMinDelay: time.Second, wantMaxDelay: time.Second},
		{name: "an invalid request becomes terminal", err: apierrors.NewBadRequest("nope"), wantErr: isTerminal},
		{name: "a field conflict is returned, not quiet", err: fieldConflict(), wantErr: func(err error) bool { return apierrors.IsConflict(err) && !isTerminal(err) }},
		{name: "not found is returned", err: apierrors.NewNotFound(widgets, "w"), wantErr: apierrors.IsNotFound},
		{name: "other errors are returned", err: other, wantErr: func(err error) bool { return errors.Is(err, other) && !isTerminal(err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			inner := &scripted{steps: []func(context.Context) (ctrl.Result, error){
				func(context.Context) (ctrl.Result, error) { return ctrl.Result{}, tt.err },
			}}
			res, err := requeue.WithBackoff(inner, requeue.BackoffOptions{Name: "classes"}).Reconcile(ctx, request("a"))
			g.Expect(tt.wantErr(err)).To(BeTrue(), "error %v", err)
			if tt.wantMaxDelay == 0 {
				g.Expect(res).To(Equal(ctrl.Result{}))
				return
			}
			g.Expect(res.RequeueAfter).To(BeNumerically(">=", tt.wantMinDelay))
			g.Expect(res.RequeueAfter).To(BeNumerically("<=", tt.wantMaxDelay))
		})
	}
}

func isNil(err error) bool { return err == nil }

func TestClassNames(t *testing.T) {
	g := NewWithT(t)
	g.Expect(requeue.ClassConflict.String()).To(Equal("conflict"))
	g.Expect(requeue.ClassOther.String()).To(Equal("other"))
	g.Expect(requeue.Class(99).String()).To(Equal("unknown"))
	g.Expect(requeue.ClassNone.String()).To(Equal("none"), "the first class")
	g.Expect(requeue.ClassFieldConflict.String()).To(Equal("field_conflict"), "the last class")
	g.Expect(requeue.Class(int(requeue.ClassFieldConflict)+1).String()).To(Equal("unknown"), "one past the last")
	g.Expect(requeue.Class(-1).String()).To(Equal("unknown"))
}
