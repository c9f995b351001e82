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

package fencing

import "time"

// Option configures [NewLock]: [Margin].
type Option interface {
	applyToLock(o *lockOptions)
}

// lockOptions is what the [Option] values given to [NewLock] ask for.
type lockOptions struct {
	margin time.Duration
	// marginSet tells a Margin of 0 from none: without one, the margin is a fifth of the lease
	// duration.
	marginSet bool
}

// newLockOptions applies opts to the defaults.
func newLockOptions(opts []Option) lockOptions {
	var o lockOptions
	for _, opt := range opts {
		if opt != nil {
			opt.applyToLock(&o)
		}
	}
	return o
}

// Margin is how much earlier than the lease duration the fence closes after a renewal started:
// writes are allowed while less than lease duration minus Margin has passed, on this replica's
// monotonic clock, since the start of its last successful renewal. It must cover
//
//   - the difference of the clock rates of this replica and the others over one lease duration,
//     twice (this replica's clock may run slow while the other's runs fast), and
//   - the time from the check to the API server receiving the request: one request's latency.
//
// Default: a fifth of the lease duration (3 seconds for controller-runtime's default of 15):
// 2% rate difference over 15 seconds is 0.3 seconds, far above what quartz and NTP slewing
// (at most 0.05%) do, which leaves 2.7 seconds for the request. A margin of at least the lease
// duration less the retry period leaves the fence closed most of the time; [NewLock] refuses a
// negative one.
type Margin time.Duration

var _ Option = Margin(0)

func (m Margin) applyToLock(o *lockOptions) { o.margin, o.marginSet = time.Duration(m), true }

// defaultMarginDivisor divides the lease duration to give the default [Margin].
const defaultMarginDivisor = 5
