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

import "github.com/tenon-dev/tenon/sharding"

// shardLabel returns the key of the label that assigns a sharded object to a shard of ring
// (sharding.Shard.ShardLabel): its value is the shard's name.
func shardLabel(ring string) string { return sharding.ShardLabelPrefix + ring }

// drainLabel returns the key of the label that asks the shard of an object to let go of it
// (sharding.Shard.DrainLabel): the shard removes it and the shard label in one write, after
// which the sharder assigns the object to its new shard.
func drainLabel(ring string) string { return sharding.DrainLabelPrefix + ring }
