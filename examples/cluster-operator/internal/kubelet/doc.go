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

// Package kubelet simulates, for the operator's tests and demo only, what the StatefulSet
// controller and the kubelets of a real cluster do: it rolls StatefulSets out and reports their
// replicas ready in their status.
//
// envtest runs an API server, not a cluster: no StatefulSet controller creates pods and no
// kubelet runs them, so a StatefulSet's status never changes and an operator that waits for its
// replicas to be ready waits forever. [Simulator] is a small controller that fills in the status
// the StatefulSet controller would write once every pod is running and ready:
// observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas,
// currentReplicas, and the currentRevision and updateRevision of the pod template. With
// [Simulator.ReplicaDelay] the replicas become ready one after the other, so tests and the demo
// can watch a rollout progress.
//
// # What it does not do
//
// It creates no pods, runs no containers, and knows nothing of probes, pod disruption budgets,
// partitions or persistent volumes: a StatefulSet it selects is simply reported healthy after the
// delay. It exists to exercise the operator's handling of the status, not the workload.
//
// Never run it next to a real StatefulSet controller: the two would fight over the status.
// cmd/main.go does not import this package; only the tests do, and the demo and the reliability
// scenarios of the lab module (lab/).
package kubelet
