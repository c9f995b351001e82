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

// Package shardlabels spells the label prefixes of the sharder's protocol once, for the
// sharding package, which exports them, and the patch package, which never applies them.
package shardlabels

import "strings"

// The prefixes of the sharder's labels on sharded objects; the ring's name follows each.
const (
	// ShardPrefix begins the key of the label that names an object's shard.
	ShardPrefix = "shard.alpha.sharding.timebertt.dev/"
	// DrainPrefix begins the key of the label that asks an object's shard to let it go.
	DrainPrefix = "drain.alpha.sharding.timebertt.dev/"
)

// Is reports whether key is the key of a shard or drain label of any ring.
func Is(key string) bool {
	return strings.HasPrefix(key, ShardPrefix) || strings.HasPrefix(key, DrainPrefix)
}
