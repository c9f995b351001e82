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

package faults

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// faultError returns the error rule r injects into call: its Err, or its Fault built as the API
// server builds that error for the call's resource and name. Messages the API server words freely
// say which rule injected them, so a test log points at the plan.
func (c *Client) faultError(r *Rule, index int, call Call) error {
	if r.Err != nil {
		return r.Err
	}
	// Like the API server, errors name the resource without the subresource, except Forbidden's
	// reason, which names what RBAC checked.
	gr := c.resourceFor(call.GVK)
	resource := gr.Resource
	if call.Subresource != "" {
		resource += "/" + call.Subresource
	}
	name := call.Key.Name
	by := fmt.Sprintf("injected by fault plan rule %d", index)
	retryAfter := r.RetryAfter
	if retryAfter == 0 && r.Fault != Timeout {
		retryAfter = defaultRetryAfter
	}
	retryAfterSeconds := int(math.Ceil(retryAfter.Seconds())) // the header has whole seconds
	switch r.Fault {
	case Conflict:
		return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	case NotFound:
		return apierrors.NewNotFound(gr, name)
	case AlreadyExists:
		return apierrors.NewAlreadyExists(gr, name)
	case Forbidden:
		where := ""
		if call.Key.Namespace != "" {
			where = fmt.Sprintf(" in the namespace %q", call.Key.Namespace)
		}
		return apierrors.NewForbidden(gr, name, fmt.Errorf("%s: cannot %s resource %q in API group %q%s",
			by, rbacVerb(call.Verb), resource, gr.Group, where))
	case InternalError:
		return apierrors.NewInternalError(errors.New(by))
	case ServiceUnavailable:
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusServiceUnavailable,
			Reason:  metav1.StatusReasonServiceUnavailable,
			Message: "the server is currently unable to handle the request (" + by + ")",
			Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name, RetryAfterSeconds: int32(retryAfterSeconds)},
		}}
	case TooManyRequests:
		return apierrors.NewTooManyRequests("too many requests, please try again later ("+by+")", retryAfterSeconds)
	case Timeout:
		return apierrors.NewTimeoutError("request did not complete within requested timeout ("+by+")", retryAfterSeconds)
	}
	return fmt.Errorf("unknown fault %q (%s)", r.Fault, by) // unreachable: Wrap refuses it
}

// resourceFor returns the resource of gvk from the wrapped client's REST mapper, or a guess.
func (c *Client) resourceFor(gvk schema.GroupVersionKind) schema.GroupResource {
	if mapper := c.inner.RESTMapper(); mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource.GroupResource()
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

func rbacVerb(v Verb) string {
	if v == Apply {
		return string(Patch)
	}
	return string(v)
}
