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

package conditions_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// FuzzComputeAgreesWithKstatus goes where the exhaustive matrix does not: duplicated types,
// statuses the API server would reject ("", "true"), conditions of other types, no
// metadata.generation, and a status.observedGeneration ahead of it. Each input byte picks one
// choice; conditions.ComputeKStatus must return what kstatus returns, or fail where it fails.
func FuzzComputeAgreesWithKstatus(f *testing.F) {
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{1, 1, 3, 2, 0, 1, 1, 1, 0, 0}) // Ready False, then Ready True
	f.Add([]byte{1, 2, 3, 1, 2, 0, 2, 1, 1, 1}) // Reconciling False, Reconciling True
	f.Add([]byte{1, 3, 3, 1, 4, 1, 2, 0, 3, 0}) // Ready "" before Ready True
	f.Add([]byte{0, 2, 4, 3, 3, 0, 1, 3, 0, 2, 2})
	f.Add([]byte{2, 1, 2, 2, 1, 3, 1, 0, 2, 0})
	f.Fuzz(func(t *testing.T, program []byte) {
		next := func(n int) int {
			if len(program) == 0 {
				return 0
			}
			v := int(program[0]) % n
			program = program[1:]
			return v
		}
		const gen = 5
		metadata := map[string]any{"name": "w", "namespace": "ns"}
		status := map[string]any{}
		switch next(3) {
		case 0:
			metadata["generation"] = int64(gen)
		case 1:
			metadata["generation"] = int64(gen)
			metadata["deletionTimestamp"] = "2026-11-29T12:00:00Z"
		}
		switch next(4) {
		case 1:
			status["observedGeneration"] = int64(gen)
		case 2:
			status["observedGeneration"] = int64(gen - 1)
		case 3:
			status["observedGeneration"] = int64(gen + 1)
		}
		types := []string{"Ready", "Reconciling", "Stalled", "Available"}
		statuses := []string{"True", "False", "Unknown", "", "true"}
		var list []any
		for i, n := 0, next(7); i < n; i++ {
			list = append(list, map[string]any{
				"type": types[next(len(types))], "status": statuses[next(len(statuses))],
				"reason": "Because", "message": fmt.Sprintf("condition %d", i),
			})
		}
		if list != nil {
			status["conditions"] = list
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "test.tenon.dev/v1", "kind": "Widget", "metadata": metadata, "status": status,
		}}

		want, wantErr := kstatus.Compute(u.DeepCopy())
		got, gotErr := compute(u.DeepCopy())
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("kstatus error %v, conditions.ComputeKStatus error %v, for %v", wantErr, gotErr, u.Object)
		}
		if wantErr != nil {
			return
		}
		if diff := cmp.Diff(verdict{string(want.Status), want.Message}, verdict{string(got.Status), got.Message}); diff != "" {
			t.Fatalf("for %v (-kstatus +tenon):\n%s", u.Object, diff)
		}
	})
}
