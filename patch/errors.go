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
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrPartiallyWritten is wrapped by the error of a [Helper.Patch] that wrote the metadata and
// spec (its first request) but not the status (its second). Without it, a failed Patch wrote
// nothing.
var ErrPartiallyWritten = errors.New("the metadata and spec were written, the status was not")

// ConflictError is returned by [Helper.Patch] when another writer changed what this reconcile
// changed too and the change cannot be merged (the same list, or the same condition of a type
// that is not owned), or when another writer kept changing the object for longer than the
// retries. Nothing of the conflicting part was written; the next reconcile, reading the latest
// object, decides again.
//
// It is a 409 Conflict as far as the API machinery is concerned: apierrors.IsConflict reports
// true for it, so requeue.Classify treats it as a quiet requeue.
type ConflictError struct {
	// Object names the object, as "Kind namespace/name".
	Object string
	// Fields are the parts both changed, as JSON pointers (a condition as
	// /status/conditions[Type]); empty when the retries ran out.
	Fields []string

	attempts int
	err      error
	// why replaces "another writer changed ... since it was read" when the conflict is of
	// another kind.
	why string
}

var _ apierrors.APIStatus = (*ConflictError)(nil)

func newConflictError(object string, fields []string, attempts int, err error) *ConflictError {
	return &ConflictError{Object: object, Fields: fields, attempts: attempts, err: err}
}

// Error implements error.
func (e *ConflictError) Error() string {
	if e.why != "" {
		return fmt.Sprintf("failed to patch %s: %s", e.Object, e.why)
	}
	if len(e.Fields) > 0 {
		return fmt.Sprintf("failed to patch %s: another writer changed %s since it was read", e.Object, strings.Join(e.Fields, ", "))
	}
	return fmt.Sprintf("failed to patch %s after %d attempts: another writer kept changing it: %v", e.Object, e.attempts, e.err)
}

// Unwrap returns the last error the API server answered, if any.
func (e *ConflictError) Unwrap() error { return e.err }

// Status implements apierrors.APIStatus: a 409 Conflict.
func (e *ConflictError) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusConflict,
		Reason:  metav1.StatusReasonConflict,
		Message: e.Error(),
	}
}
