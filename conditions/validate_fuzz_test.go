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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzValidAgreesWithTheAPIServer checks that the allocation-free validation accepts exactly the
// conditions apimachinery's ValidateCondition (the API server's rules for built-in kinds)
// accepts with a type of at most 316 characters (a custom resource's schema's limit, which
// TestValidateAgreesWithTheAPIServerAtEveryLimit checks against the API server).
func FuzzValidAgreesWithTheAPIServer(f *testing.F) {
	f.Add("Ready", "Succeeded", "True", 0, int64(1), false)
	f.Add("example.com/Ready", "A,B:C_", "False", 10, int64(0), false)
	f.Add("a/b/c", "9Lives", "Maybe", 32769, int64(-1), true)
	f.Add("-x", "Fail:", "Unknown", 0, int64(0), false)
	f.Add("Example.com/x", "x_", "True", 0, int64(0), false)
	f.Add(strings.Repeat("a", 64), strings.Repeat("R", 1025), "", 0, int64(0), false)
	f.Add("x.y./z", "A", "True", 0, int64(0), false)
	f.Add("a..b/c", "A", "True", 0, int64(0), false)
	f.Add(strings.Repeat("a", 253)+"/"+strings.Repeat("b", 63), "A", "True", 0, int64(0), false)
	f.Fuzz(func(t *testing.T, ctype, reason, status string, messageLen int, gen int64, zeroTime bool) {
		if messageLen < 0 || messageLen > 40000 {
			return
		}
		c := metav1.Condition{
			Type: ctype, Reason: reason, Status: metav1.ConditionStatus(status),
			Message: strings.Repeat("m", messageLen), ObservedGeneration: gen,
		}
		if !zeroTime {
			c.LastTransitionTime = metav1.NewTime(time.Unix(1700000000, 0))
		}
		want := len(metav1validation.ValidateCondition(c, field.NewPath("c"))) == 0 && len(ctype) <= 316
		if got := valid(&c); got != want {
			t.Fatalf("valid(%+v) = %v, the API server's validation says %v", c, got, want)
		}
	})
}
