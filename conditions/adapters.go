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

package conditions

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ForSlice adapts a bare slice of conditions, such as one kept in a nested status struct, so
// that every function of this package works on it. Conditions set through it observe
// generation; pass 0 to keep the ObservedGeneration of each condition as given. list must not be
// nil.
func ForSlice(list *[]metav1.Condition, generation int64) Setter {
	return sliceAdapter{list: list, generation: generation}
}

type sliceAdapter struct {
	list       *[]metav1.Condition
	generation int64
}

var _ Setter = sliceAdapter{}

// GetGeneration returns the generation given to ForSlice.
func (s sliceAdapter) GetGeneration() int64 { return s.generation }

// GetConditions returns the slice.
func (s sliceAdapter) GetConditions() []metav1.Condition { return *s.list }

// SetConditions replaces the slice.
func (s sliceAdapter) SetConditions(cs []metav1.Condition) { *s.list = cs }

// Unstructured adapts an unstructured object, whose conditions are in status.conditions, so that
// every function of this package works on it; see [FromUnstructured]. It embeds the object, so
// it is also a client.Object.
type Unstructured struct {
	*unstructured.Unstructured
	conditions []metav1.Condition
}

var (
	_ Setter = (*Unstructured)(nil)
	_ Source = (*Unstructured)(nil)
)

// FromUnstructured reads u's status.conditions and returns an adapter through which they can
// be read and changed; changes are written back into u at once. It returns an error, and
// changes nothing, when status.conditions exists but is not a list of conditions.
func FromUnstructured(u *unstructured.Unstructured) (*Unstructured, error) {
	field, found, err := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions")
	if err != nil {
		return nil, fmt.Errorf("failed to read status.conditions of %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	a := &Unstructured{Unstructured: u}
	if !found || field == nil {
		return a, nil
	}
	raw, ok := field.([]any)
	if !ok {
		return nil, fmt.Errorf("failed to read status.conditions of %s %s: a %T, not a list", u.GetKind(), u.GetName(), field)
	}
	a.conditions = make([]metav1.Condition, len(raw))
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("failed to read status.conditions[%d] of %s %s: not an object", i, u.GetKind(), u.GetName())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &a.conditions[i]); err != nil {
			return nil, fmt.Errorf("failed to read status.conditions[%d] of %s %s: %w", i, u.GetKind(), u.GetName(), err)
		}
	}
	return a, nil
}

// GetConditions returns the conditions read from status.conditions.
func (u *Unstructured) GetConditions() []metav1.Condition { return u.conditions }

// SetConditions replaces the conditions and writes them into the object's status.conditions;
// an empty list removes the field.
func (u *Unstructured) SetConditions(cs []metav1.Condition) {
	u.conditions = cs
	if len(cs) == 0 {
		unstructured.RemoveNestedField(u.Object, "status", "conditions")
		return
	}
	raw := make([]any, len(cs))
	for i := range cs {
		// metav1.Condition holds only strings, integers and a time, all of which convert.
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&cs[i])
		raw[i] = m
	}
	_ = unstructured.SetNestedSlice(u.Object, raw, "status", "conditions")
}
