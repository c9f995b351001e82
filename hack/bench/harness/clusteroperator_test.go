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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindClusterOperator(t *testing.T) {
	dir, err := findClusterOperator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chaos", "scale_test.go")); err != nil {
		t.Errorf("%s is not the example operator's lab: %v", dir, err)
	}
}

func TestTail(t *testing.T) {
	if got := tail([]byte("a\nb\n"), 5); got != "a\nb" {
		t.Errorf("tail = %q", got)
	}
	if got := tail([]byte(strings.Repeat("x\n", 10)+"last\n"), 2); got != "[... 9 lines before]\nx\nlast" {
		t.Errorf("tail = %q", got)
	}
}

func TestIsWrite(t *testing.T) {
	for key, want := range map[string]bool{"PATCH clusters/status": true, "POST events": true, "DELETE configmaps": true,
		"PUT leases": true, "GET secrets": false, "GET /api": false} {
		if got := IsWrite(key); got != want {
			t.Errorf("IsWrite(%q) = %t, want %t", key, got, want)
		}
	}
}
