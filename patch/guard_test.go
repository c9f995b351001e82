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
		{name: "the fake client's failed test", err: errors.New("testing value /status/conditions/0/type failed: test failed"), want: true},
		{name: "the fake client's missing path", err: errors.New("test operation does not apply: is missing path: /status/conditions/3"), want: true},
		{name: "a conflict", err: apierrors.NewConflict(schema.GroupResource{Resource: "widgets"}, "w", errors.New("modified")), want: false},
		{name: "any other error", err: errors.New("connection refused"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(isGuardFailure(tt.err)).To(Equal(tt.want))
		})
	}
}
