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

package harness

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tenon-dev/tenon/hack/bench/contender"
)

func TestSlugMakesEveryContenderNameAValidLabel(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a plain name stays", "floor", "floor"},
		{"a name with a dash stays", "tenon-ssa", "tenon-ssa"},
		{"spaces and parentheses become one dash each run", "tenon (default manager)", "tenon-default-manager"},
		{"upper case becomes lower case", "Cluster-API", "cluster-api"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slug(tt.in); got != tt.want {
				t.Errorf("slug(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	for _, c := range contender.All() {
		if errs := validation.IsDNS1123Label("bench-" + slug(c.Name) + "-1-abcde"); len(errs) > 0 {
			t.Errorf("the namespace of contender %q is not a valid name: %v", c.Name, errs)
		}
	}
}
