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
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
)

// Option configures one call of [Helper.Patch]: [OwnedConditions]. What every call of one
// controller shares (the API reader, the History) is set once, in [WriterOptions].
type Option interface {
	applyToHelper(*helperOptions)
}

type helperOptions struct {
	ownedConditions []conditions.Type
	latestFrom      client.Reader
	history         *History
	// wait, set by Finish with a progress interval, makes Patch send nothing when it returns
	// true for the snapshot and the object to write.
	wait func(before, after map[string]any) bool
}

// newHelperOptions applies the options of w, when not nil, then opts.
func newHelperOptions(w *Writer, opts []Option) *helperOptions {
	o := &helperOptions{}
	if w != nil {
		o.latestFrom, o.history = w.opts.APIReader, w.opts.History
		o.ownedConditions = append(o.ownedConditions, w.opts.OwnedConditions...)
	}
	for _, opt := range opts {
		if opt != nil {
			opt.applyToHelper(o)
		}
	}
	return o
}

// retryBackoff paces the retries after conflicts: 5 retries starting at 10ms, doubling, each
// stretched by up to 100% at random, capped at 1s: at most about 0.6s of waiting.
func retryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: time.Second}
}
