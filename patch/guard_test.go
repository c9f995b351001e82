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

package patch

import (
	"errors"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestIsGuardFailure(t *testing.T) {
	widget := schema.GroupKind{Group: "test.tenon.dev", Kind: "Widget"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{
			name: "the API server's answer to a JSON Patch whose test failed",
			err:  apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "testing value /metadata/finalizers failed: test failed", 0, false),
			want: true,
		},
		{
			name: "a validation error of the patched object",
			err:  apierrors.NewInvalid(widget, "w", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "bad value", "must be a valid label")}),
			want: false,
		},
		{
			name: "an admission policy's denial",
			err: func() error {
				err := apierrors.NewForbidden(schema.GroupResource{Group: "test.tenon.dev", Resource: "widgets"}, "w", errors.New("ValidatingAdmissionPolicy 'p' denied request"))
				err.ErrStatus.Code, err.ErrStatus.Reason = http.StatusUnprocessableEntity, "Invalid"
				err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: "denied"})
				return err
			}(),
			want: false,
		},
		{name: "a plain error, as a fake client's failed test is", err: errors.New("testing value /status/conditions/0/type failed: test failed"), want: false},
		{name: "a conflict", err: apierrors.NewConflict(schema.GroupResource{Resource: "widgets"}, "w", errors.New("modified")), want: false},
		{name: "any other error", err: errors.New("connection refused"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(isGuardFailure(tt.err)).To(Equal(tt.want))
		})
	}
}
