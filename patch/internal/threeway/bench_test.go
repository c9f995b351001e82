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

package threeway

import (
	"encoding/json"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenon-dev/tenon/conditions"
)

// BenchmarkCompute measures what Patch computes before it sends anything, for an unstructured
// Widget with three conditions whose Ready condition changes: the three-way merge and the
// JSON Patch of both requests, encoded.
func BenchmarkCompute(b *testing.B) {
	now := metav1.Unix(1_700_000_000, 0)
	before := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.tenon.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "bench", "namespace": "default", "resourceVersion": "7",
			"labels": map[string]any{"app": "bench"}, "finalizers": []any{"tenon.dev/bench"}},
		"spec": map[string]any{"size": "small", "items": []any{"a", "b"}},
	}}
	cs, _ := conditions.FromUnstructured(before)
	for _, t := range []string{"Ready", "Available", "Synced"} {
		conditions.Set(cs, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t, LastTransitionTime: now})
	}
	var afters []*unstructured.Unstructured
	for i := range 2 {
		after := before.DeepCopy()
		cs, _ := conditions.FromUnstructured(after)
		conditions.MarkTrue(cs, conditions.Ready, "Ready", strconv.Itoa(i))
		afters = append(afters, after)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		after := afters[i%2]
		m := &Merger{}
		d := &Differ{Exact: true, Guarded: OwnedGuard(nil)}
		main := d.DiffMain(before.Object, m.MergeMain(before.Object, after.Object, before.Object, false), false)
		status := d.DiffStatus(before.Object, m.MergeStatus(before.Object, after.Object, before.Object))
		if !main.Empty() || status.Empty() || len(m.Conflicts) > 0 {
			b.Fatal("want a status request only")
		}
		if _, err := json.Marshal(status.Finish(before.Object, false)); err != nil {
			b.Fatal(err)
		}
	}
}
