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

// Option configures one call of [Helper.Patch]: [OwnedConditions], [ReadLatestFrom] or a
// [*History].
type Option interface {
	applyToHelper(*helperOptions)
}

type helperOptions struct {
	ownedConditions []conditions.Type
	latestFrom      client.Reader
	history         *History
}

func newHelperOptions(opts []Option) *helperOptions {
	o := &helperOptions{}
	for _, opt := range opts {
		opt.applyToHelper(o)
	}
	return o
}

// retryBackoff paces the retries after conflicts: 5 retries starting at 10ms, doubling, each
// stretched by up to 100% at random, capped at 1s: at most about 0.6s of waiting.
func retryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: time.Second}
}

// ReadLatestFrom makes [Helper.Patch] read the latest object from this reader after a conflict,
// instead of from the Helper's client. A manager's client reads from its cache, which may not
// have caught up with the write that caused the conflict yet, so a retry can conflict again; the
// retries usually outlast the lag, but a reader that goes to the API server
// (mgr.GetAPIReader()) never lags.
type ReadLatestFrom struct {
	client.Reader
}

var _ Option = ReadLatestFrom{}

func (r ReadLatestFrom) applyToHelper(o *helperOptions) {
	o.latestFrom = r.Reader
}
