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
	"os"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/requeue"
)

var widgets = schema.GroupResource{Group: "test.tenon.dev", Resource: "widgets"}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want requeue.Class
	}{
		{"nil", nil, requeue.ClassNone},
		{"a conflict", apierrors.NewConflict(widgets, "w", errors.New("the object has been modified")), requeue.ClassConflict},
		{"a wrapped conflict", fmt.Errorf("failed to update status: %w", apierrors.NewConflict(widgets, "w", errors.New("x"))), requeue.ClassConflict},
		{"a condition conflict", &conditions.ConflictError{Types: []conditions.Type{"Ready"}}, requeue.ClassConflict},
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
		{"an internal error", apierrors.NewInternalError(errors.New("etcd")), requeue.ClassTransient},
		{"service unavailable", apierrors.NewServiceUnavailable("later"), requeue.ClassTransient},
		{"a timeout", apierrors.NewTimeoutError("slow", 0), requeue.ClassTransient},
		{"a context deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), requeue.ClassTransient},
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, requeue.ClassTransient},
		{"a terminal error", reconcile.TerminalError(errors.New("bad spec")), requeue.ClassTerminal},
		{"a terminal conflict is terminal", reconcile.TerminalError(apierrors.NewConflict(widgets, "w", errors.New("x"))), requeue.ClassTerminal},
		{"anything else", errors.New("boom"), requeue.ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(requeue.Classify(tt.err)).To(Equal(tt.want), "class %s", requeue.Classify(tt.err))
		})
	}
}

func TestOnError(t *testing.T) {
	ctx := context.Background()
	conflict := apierrors.NewConflict(widgets, "w", errors.New("modified"))
	other := errors.New("boom")
	tests := []struct {
		name         string
		err          error
		wantErr      func(error) bool
		wantMinDelay time.Duration
		wantMaxDelay time.Duration
	}{
		{name: "nil is done", err: nil, wantErr: isNil},
		{name: "a conflict is a quiet short requeue", err: conflict, wantErr: isNil, wantMinDelay: requeue.ConflictDelay, wantMaxDelay: 2 * requeue.ConflictDelay},
		{name: "already exists is a quiet short requeue", err: apierrors.NewAlreadyExists(widgets, "w"), wantErr: isNil, wantMinDelay: requeue.ConflictDelay, wantMaxDelay: 2 * requeue.ConflictDelay},
		{name: "throttling waits as long as the server says", err: apierrors.NewTooManyRequests("slow down", 7), wantErr: isNil, wantMinDelay: 7 * time.Second, wantMaxDelay: 7 * time.Second},
		{name: "throttling without a delay waits a second", err: apierrors.NewTooManyRequests("slow down", 0), wantErr: isNil, wantMinDelay: time.Second, wantMaxDelay: time.Second},
		{name: "an invalid request becomes terminal", err: apierrors.NewBadRequest("nope"), wantErr: requeue.IsTerminal},
		{name: "not found is returned", err: apierrors.NewNotFound(widgets, "w"), wantErr: apierrors.IsNotFound},
		{name: "other errors are returned", err: other, wantErr: func(err error) bool { return errors.Is(err, other) && !requeue.IsTerminal(err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res, err := requeue.OnError(ctx, tt.err)
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
}
