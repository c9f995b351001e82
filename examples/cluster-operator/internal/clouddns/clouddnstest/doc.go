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

// Package clouddnstest serves the DNS API of package clouddns over HTTP, in memory, for the
// operator's tests: a test double, not part of the operator. Like a real provider, it needs a
// bearer token and lets changes propagate for a while; it can inject latency and a share of 503
// errors, or be switched off entirely, to test how the operator copes with a flaky or
// unreachable provider.
package clouddnstest
