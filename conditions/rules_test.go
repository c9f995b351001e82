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
	"testing"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/conditionrules"
)

// TestTheSharedRulesNameTheStandardTypes: the rules patch and observe share with this package
// name its constants, so a renamed constant cannot leave them behind.
func TestTheSharedRulesNameTheStandardTypes(t *testing.T) {
	if conditions.Ready != conditionrules.Ready {
		t.Errorf("conditionrules.Ready = %q, want %q", conditionrules.Ready, conditions.Ready)
	}
	for _, typ := range []conditions.Type{conditions.Reconciling, conditions.Stalled, conditions.Deleting, conditions.Degraded} {
		if !conditionrules.NegativePolarity(typ) {
			t.Errorf("%s is not of negative polarity in conditionrules", typ)
		}
	}
	if conditionrules.NegativePolarity(conditions.Ready) {
		t.Error("Ready is of negative polarity in conditionrules")
	}
}
