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
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenon-dev/tenon/conditions"
)

// kstatusResult is what conditions.ComputeKStatus returns, as one value that tests compare.
type kstatusResult struct {
	Status  conditions.KStatus
	Message string
}

func compute(obj runtime.Object) (kstatusResult, error) {
	status, message, err := conditions.ComputeKStatus(obj)
	return kstatusResult{Status: status, Message: message}, err
}
