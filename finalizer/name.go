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

package finalizer

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/internal/names"
)

// ErrInvalidName is wrapped by the errors returned for a finalizer name the API server would
// reject or that is not domain-qualified.
var ErrInvalidName = errors.New("invalid finalizer name")

// validate reports why name cannot be a controller's finalizer, or nil. The API server requires a
// qualified name (an optional DNS subdomain prefix and a slash, then at most 63 characters of
// alphanumerics, '-', '_' and '.'). tenon also requires the prefix, as the API server recommends
// (it warns about names without one): a finalizer such as "cleanup" collides with any other
// controller's "cleanup", and one controller would then remove the other's.
//
// The prefix is required to add a finalizer ([Ensure], [Lifecycle]); [Remove] accepts any name
// the API server accepts, so that a controller migrating from a name without a prefix can
// remove its old finalizer.
func validate(name string) error {
	if err := validateForRemoval(name); err != nil {
		return err
	}
	if !strings.Contains(name, "/") {
		return fmt.Errorf("%w %q: use a domain-qualified name such as \"example.com/%s\" so that it cannot collide with another controller's finalizer", ErrInvalidName, name, name)
	}
	return nil
}

// validateForRemoval applies only the API server's rule: a qualified name.
func validateForRemoval(name string) error {
	if names.IsQualifiedName(name) {
		return nil
	}
	if errs := validation.ValidateFinalizerName(name, field.NewPath("metadata", "finalizers")); len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidName, errs.ToAggregate())
	}
	return nil
}

// has reports whether obj has the finalizer name.
func has(obj client.Object, name string) bool {
	return controllerutil.ContainsFinalizer(obj, name)
}
