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

package pause_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/pause"
)

func TestForWaitsOrEndsWithItsContext(t *testing.T) {
	start := time.Now()
	if err := pause.For(t.Context(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 10*time.Millisecond {
		t.Fatalf("waited %v, want at least 10ms", waited)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := pause.For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled at once", err)
	}
}
