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

package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"

	"github.com/tenon-dev/tenon/conditions"
)

// A Cluster exposes its conditions and observedGeneration to tenon's conditions package, which
// stamps the generation, keeps the order of ConditionOrder and summarises Ready.
func ExampleCluster() {
	cluster := &appsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", Generation: 2},
		Spec:       appsv1alpha1.ClusterSpec{Replicas: 3, Version: "1.4.2", DNSName: "demo.clusters.example.com"},
	}
	conditions.MarkTrue(cluster, appsv1alpha1.ConfigReady, "Applied", "config map applied")
	conditions.MarkTrue(cluster, appsv1alpha1.WorkloadReady, "ReplicasReady", "3 of 3 replicas ready")
	conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, "RecordPropagating", "record is propagating")
	conditions.Set(cluster, conditions.Summary(cluster, conditions.Ready, appsv1alpha1.DependentConditions()))

	for _, c := range cluster.Status.Conditions {
		fmt.Printf("%s=%s %s (generation %d)\n", c.Type, c.Status, c.Reason, c.ObservedGeneration)
	}
	// Output:
	// Ready=False RecordPropagating (generation 2)
	// ConfigReady=True Applied (generation 2)
	// WorkloadReady=True ReplicasReady (generation 2)
	// DNSReady=False RecordPropagating (generation 2)
}
