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

package sharder

// The label keys of the protocol, as the reference sharder spells them.
const (
	// RingLabel is the label of a shard's Lease whose value names the ring the shard belongs to.
	RingLabel = "alpha.sharding.timebertt.dev/controllerring"

	shardLabelPrefix = "shard.alpha.sharding.timebertt.dev/"
	drainLabelPrefix = "drain.alpha.sharding.timebertt.dev/"
)

// ShardLabel returns the key of the label that assigns a sharded object to a shard of ring: its
// value is the shard's name. A shard watches only the objects that carry its name in this label.
func ShardLabel(ring string) string { return shardLabelPrefix + ring }

// DrainLabel returns the key of the label that asks the shard of an object to let go of it: the
// shard stops reconciling the object and removes this label and [ShardLabel] in one write, after
// which the sharder assigns the object to its new shard. The label's value has no meaning.
func DrainLabel(ring string) string { return drainLabelPrefix + ring }
