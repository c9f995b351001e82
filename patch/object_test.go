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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

func TestWithStatusOfTakesTheStatusOfTheAnswerAndNothingElse(t *testing.T) {
	g := NewWithT(t)
	previous := &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default", ResourceVersion: "1", Labels: map[string]string{"a": "1"}},
		Spec:       testtypes.WidgetSpec{Replicas: ptr.To[int32](1), Items: []string{"x"}},
		Status:     testtypes.WidgetStatus{Phase: "Old"},
	}
	answer := &testtypes.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "default", ResourceVersion: "2"},
		Spec:       testtypes.WidgetSpec{Replicas: ptr.To[int32](5)},
		Status: testtypes.WidgetStatus{Phase: "New", ObservedGeneration: 3, Conditions: []metav1.Condition{{
			Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0))}}},
	}
	before := previous.DeepCopy()
	m, err := objects.ToMap(answer)
	g.Expect(err).NotTo(HaveOccurred())

	got, ok := withStatusOf(previous, answer, m).(*testtypes.Widget)

	g.Expect(ok).To(BeTrue())
	want := previous.DeepCopy()
	want.Status = *answer.Status.DeepCopy()
	g.Expect(got).To(Equal(want), "the previous object with the answer's status")
	g.Expect(previous).To(Equal(before), "previous is not modified")
	got.Status.Conditions[0].Reason = "Changed"
	g.Expect(answer.Status.Conditions[0].Reason).To(Equal("Up"), "the copy shares nothing with the answer")

	// An unstructured object takes the status of the answer's JSON value.
	u := &unstructured.Unstructured{}
	u.SetUnstructuredContent(map[string]any{"apiVersion": "test.tenon.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"phase": "Old"}})
	gotU, ok := withStatusOf(u, answer, m).(*unstructured.Unstructured)
	g.Expect(ok).To(BeTrue())
	g.Expect(gotU.Object["spec"]).To(Equal(map[string]any{"replicas": int64(1)}))
	g.Expect(gotU.Object["status"]).To(Equal(m["status"]))
}
