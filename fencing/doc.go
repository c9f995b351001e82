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

// Package fencing keeps a leader that lost its lease without knowing it from writing: writes are
// refused unless this replica renewed its leader election lease recently enough that no other
// replica can have taken it over yet.
//
// # The problem
//
// client-go's leader election has no fencing. A leader that is paused — SIGSTOP, a long garbage
// collection, a frozen VM, a network partition — does not notice that time passes. Meanwhile
// the other replicas see the lease unchanged for a lease duration, take it over and start
// reconciling. When the old leader resumes, its controllers and its Event broadcaster carry on
// where they stopped, and write, until its own renewal loop finds out it lost the lease and
// controller-runtime exits: for that moment — a fraction of a second up to a retry period, and
// more when the process is starved of CPU — two leaders write at once.
//
// # How the fence works
//
// [Lock] wraps the lease lock the manager's leader election uses
// (manager.Options.LeaderElectionResourceLockInterface); [ForManager] builds it from the
// manager's options, fences the manager's rest.Config and sets that option in one call. Before
// each Create or Update that writes this replica as the holder, it reads the monotonic clock;
// when the request succeeds, that time is the start of the last renewal. [Lock.Check] allows a
// write while
//
//	now - start of the last renewal < lease duration - margin
//
// on this replica's monotonic clock, with the lease duration the renewal wrote and the
// [Margin] (default: a fifth of the lease duration). [Lock.WrapTransport] runs the check for
// every request that may write — an upgrade to a WebSocket or SPDY stream and a request to a
// subresource that acts, such as exec or proxy, included, whatever its method — as the last
// step before the request goes to the network; a refused request fails with a [*RefusedError] that names the lease, its holder and how long
// ago this replica renewed it, and that tenon's requeue.WithBackoff treats as a quiet requeue
// (requeue.ClassFenced), not as a conflict.
//
// Why this is safe: client-go's other replicas decide that the lease expired when it has not
// changed for the lease duration since they observed its last change, measured on their own
// clocks (LeaderElector.isLeaseValid). They can observe a renewal only after the API server
// accepted it, which is after this replica started it. So no replica takes the lease over
// earlier than a lease duration after the start of this replica's last renewal, and this
// replica stops writing a margin before that. The renew deadline and the retry period do not
// enter the rule: a healthy leader renews every retry period, which keeps the fence open, and
// one that cannot renew gives up after the renew deadline — or, if paused, resumes with the
// fence already closed. A release (LeaderElectionReleaseOnCancel) closes the fence before the
// release is sent; a Get that shows another holder closes it at once.
//
// # Clock assumptions
//
//   - No synchronized wall clocks: the fence and client-go compare durations, each on one
//     machine's clock, never timestamps across machines (the renewTime in the Lease is not
//     used).
//   - Monotonic clocks whose rates differ by at most a known bound: over one lease duration,
//     this replica's clock may run slow and another's fast; the margin must cover twice the
//     rate difference times the lease duration, plus the time from the check to the API
//     server receiving the request.
//   - The monotonic clock advances while the process is paused. Go's is CLOCK_MONOTONIC on
//     Linux, which does for SIGSTOP, garbage collection, CPU throttling and the cgroup freezer,
//     but not while the whole machine is suspended to RAM: a replica whose host is suspended
//     and resumed sees no time pass, and its fence stays open. Hypervisors that pause a VM
//     usually advance the guest's clock on resume; check yours.
//
// # What the fence cannot do
//
// The check runs before the request is written, and again as the transport reads the
// request's body, not when the API server receives it. A write that passed the check can still
// arrive after the fence closed:
//
//   - a pause between the last check and the bytes reaching the socket: over HTTP/2, the
//     moment between the transport's last read of the body and its write of the request's
//     final frame; a write without a body (controller-runtime's deletes send their
//     DeleteOptions as one) has only the first check, before its headers are written;
//   - over HTTP/1.1, a body the transport read whole at its first read (a small one) may be
//     written whole: the later checks find nothing left to refuse;
//   - a partition that holds bytes already written (in the kernel's send buffer, or in
//     retransmission) and delivers them after it heals; a client-side timeout does not recall
//     them.
//
// The margin covers such delays only up to its length. Nothing on the client can close this
// window; only the API server can, by refusing the write itself. One way: a
// ValidatingAdmissionPolicy whose parameter is the Lease (paramKind coordination.k8s.io/v1
// Lease, paramRef by name) and that denies writes by the operator's service account unless
// params.spec.holderIdentity starts with the pod name that the bound service-account token
// carries in request.userInfo.extra["authentication.kubernetes.io/pod-name"] (controller-runtime
// builds identities as "<hostname>_<uuid>", and a pod's hostname is its name). That rejects the
// old leader's writes once the standby's takeover is stored, however late they arrive, up to
// the delay with which the API server's admission sees the new Lease (its informer; with
// several API servers, their watch lag). tenon does not ship such a policy.
//
// An upgraded connection (exec, attach, port-forward over WebSocket or SPDY) is checked when it
// opens, as a write; what the client sends through it later is not, so a session open when the
// fence closes goes on until it ends. Bound such sessions by a context that ends with the lease.
//
// The fence also does not cover: writes through a config that was not wrapped; a lock other
// than a Lease lock for the exemption of its own requests; client-go's coordinated leader
// election (LeaderElectionConfig.Coordinated), whose renewals are decided by the
// coordination controller; and leader election that is off (the fence never opens: use it
// only with LeaderElection set).
//
// # When not to use it
//
// A controller whose writes are idempotent and conflict-checked (updates with a
// resourceVersion, server-side apply of fields only it owns) may tolerate a few seconds of two
// leaders; the fence costs a write refused whenever renewals are slow, a quiet requeue later.
// Do not use it with clients that must write on every replica (a webhook that creates
// objects): they are refused on the standbys.
package fencing
