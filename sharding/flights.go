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

package sharding

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// flights records, for the reconcilers of one shard, the reconciles in flight of each object and
// the objects being handed over, so that a drain is acknowledged only after every controller of
// the main kind finished its reconcile of the object, and none starts one after the drain was
// seen. controller-runtime orders the reconciles of one key within one controller only.
type flights struct {
	mu sync.Mutex
	// changed is closed, and replaced, whenever a reconcile ends.
	changed  chan struct{}
	inFlight map[string]int
	// draining holds, for each object being handed over, the newest resourceVersion at which a
	// reconciler saw its drain label.
	draining map[string]string
}

func newFlights() *flights {
	return &flights{changed: make(chan struct{}), inFlight: map[string]int{}, draining: map[string]string{}}
}

// begin records a reconcile of key, which a reconciler read at resourceVersion rv ("" when it
// is gone), unless key is being handed over: then it reports false and the reconcile must not
// run. A read newer than the drain, without the drain label, ends the handover: the sharder
// withdrew the drain or gave the object back. A read as old as the drain or older comes from a
// cache that lags (another informer of the kind, such as a metadata-only one), and is skipped.
func (f *flights) begin(key, rv string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if drained, ok := f.draining[key]; ok {
		if rv != "" && !newer(rv, drained) {
			return false
		}
		delete(f.draining, key)
	}
	f.inFlight[key]++
	return true
}

// newer reports whether resourceVersion a is newer than b; false when either cannot be
// compared.
func newer(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// end records that a reconcile of key that began returned.
func (f *flights) end(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight[key]--
	if f.inFlight[key] <= 0 {
		delete(f.inFlight, key)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// drain records that key is being handed over, as seen at resourceVersion rv, and waits until
// no reconcile of it is in flight or ctx ends.
func (f *flights) drain(ctx context.Context, key, rv string) error {
	f.mu.Lock()
	if drained, ok := f.draining[key]; !ok || newer(rv, drained) {
		f.draining[key] = rv
	}
	for f.inFlight[key] > 0 {
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		f.mu.Lock()
	}
	f.mu.Unlock()
	return nil
}
