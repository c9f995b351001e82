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
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/requeue"
)

func TestResultsMerge(t *testing.T) {
	transient := errors.New("dial tcp: connection refused")
	bad := reconcile.TerminalError(errors.New("replicas must be odd"))
	alsoBad := reconcile.TerminalError(errors.New("version unknown"))
	type step struct {
		res ctrl.Result
		err error
	}
	tests := []struct {
		name         string
		steps        []step
		wantResult   ctrl.Result
		wantErr      []error // each must be found with errors.Is
		wantTerminal bool
	}{
		{name: "no steps is done"},
		{
			name:  "all done is done",
			steps: []step{{}, {}},
		},
		{
			name:       "the lowest non-zero delay wins",
			steps:      []step{{res: ctrl.Result{RequeueAfter: time.Minute}}, {}, {res: ctrl.Result{RequeueAfter: 5 * time.Second}}, {res: ctrl.Result{RequeueAfter: time.Hour}}},
			wantResult: ctrl.Result{RequeueAfter: 5 * time.Second},
		},
		{
			name:       "a step that is done after the only delay keeps it",
			steps:      []step{{res: ctrl.Result{RequeueAfter: 5 * time.Second}}, {}},
			wantResult: ctrl.Result{RequeueAfter: 5 * time.Second},
		},
		{
			name:       "the highest priority wins",
			steps:      []step{{res: ctrl.Result{Priority: ptr.To(1)}}, {res: ctrl.Result{Priority: ptr.To(5), RequeueAfter: time.Second}}},
			wantResult: ctrl.Result{Priority: ptr.To(5), RequeueAfter: time.Second},
		},
		{
			name:    "an error drops every delay",
			steps:   []step{{res: ctrl.Result{RequeueAfter: time.Second}}, {err: transient}},
			wantErr: []error{transient},
		},
		{
			name:         "only terminal errors make a terminal error",
			steps:        []step{{err: bad}, {err: alsoBad}},
			wantErr:      []error{bad, alsoBad},
			wantTerminal: true,
		},
		{
			name:         "a terminal error plus a delay: the terminal error wins",
			steps:        []step{{err: bad}, {res: ctrl.Result{RequeueAfter: time.Second}}},
			wantErr:      []error{bad},
			wantTerminal: true,
		},
		{
			name:         "a terminal error mixed with a transient one is retried",
			steps:        []step{{err: bad}, {err: transient}},
			wantErr:      []error{transient},
			wantTerminal: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var results requeue.Results
			for _, s := range tt.steps {
				results.Add(s.res, s.err)
			}

			res, err := results.Merge()

			g.Expect(res).To(Equal(tt.wantResult))
			if len(tt.wantErr) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			for _, want := range tt.wantErr {
				g.Expect(errors.Is(err, want)).To(BeTrue(), "%v should wrap %v", err, want)
			}
			g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(Equal(tt.wantTerminal))
		})
	}
}

func TestMergedErrorsKeepTheirClass(t *testing.T) {
	g := NewWithT(t)
	var results requeue.Results
	results.Add(requeue.Terminal("InvalidSpec", errors.New("bad spec")))
	results.Add(ctrl.Result{}, apierrors.NewConflict(widgets, "w", errors.New("modified")))

	_, err := results.Merge()

	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeFalse())
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "errors.As still finds the conflict")
	g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassConflict))
	g.Expect(err.Error()).To(ContainSubstring("bad spec"))
}
