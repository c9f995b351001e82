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

package controller_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
)

// The API server rejects invalid Clusters itself, from the OpenAPI and CEL rules of the CRD, with
// a message that says what is wrong: the operator never sees them.
func TestTheAPIServerRejectsInvalidClusters(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	valid := func() *appsv1alpha1.Cluster {
		return &appsv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "invalid-", Namespace: ns},
			Spec:       appsv1alpha1.ClusterSpec{Replicas: 3, Version: "1.4.2", DNSName: "valid.clusters.example.com"},
		}
	}
	bigConfig := map[string]string{}
	for i := range 33 {
		bigConfig[fmt.Sprintf("key-%02d", i)] = "value"
	}

	for _, tc := range []struct {
		name    string
		mutate  func(*appsv1alpha1.Cluster)
		message string
	}{
		{"an even number of replicas has no quorum", func(c *appsv1alpha1.Cluster) { c.Spec.Replicas = 4 },
			`spec.replicas: Invalid value: 4: replicas must be odd (1, 3, 5, 7 or 9) so that a quorum exists`},
		{"more than nine replicas are too many", func(c *appsv1alpha1.Cluster) { c.Spec.Replicas = 11 },
			`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 9`},
		{"a negative number of replicas is invalid", func(c *appsv1alpha1.Cluster) { c.Spec.Replicas = -1 },
			`spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 1`},
		{"a version is MAJOR.MINOR.PATCH", func(c *appsv1alpha1.Cluster) { c.Spec.Version = "latest" },
			`spec.version: Invalid value: "latest": spec.version in body should match '^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}$'`},
		{"a version is required", func(c *appsv1alpha1.Cluster) { c.Spec.Version = "" },
			`spec.version: Invalid value: "": spec.version in body should match`},
		{"a DNS name is lower case", func(c *appsv1alpha1.Cluster) { c.Spec.DNSName = "Demo.Clusters.Example.com" },
			`spec.dnsName: Invalid value: "Demo.Clusters.Example.com": dnsName must be a lower-case, fully qualified DNS name such as demo.clusters.example.com`},
		{"a DNS name is fully qualified", func(c *appsv1alpha1.Cluster) { c.Spec.DNSName = "localhost" },
			`spec.dnsName: Invalid value: "localhost": dnsName must be a lower-case, fully qualified DNS name such as demo.clusters.example.com`},
		{"a DNS name has no underscores or injected text", func(c *appsv1alpha1.Cluster) { c.Spec.DNSName = "a_b.example.com; rm -rf /" },
			`spec.dnsName: Invalid value: "a_b.example.com; rm -rf /": dnsName must be a lower-case, fully qualified DNS name such as demo.clusters.example.com`},
		{"a DNS name is at most 253 characters", func(c *appsv1alpha1.Cluster) { c.Spec.DNSName = strings.Repeat("a.", 127) + "com" },
			`spec.dnsName: Too long: may not be more than 253 bytes`},
		{"a config value is at most 1024 characters", func(c *appsv1alpha1.Cluster) {
			c.Spec.Config = map[string]string{"motd": strings.Repeat("x", 1025)}
		}, `spec.config: Invalid value: config keys may be at most 64 and values at most 1024 characters long`},
		{"a config key is at most 64 characters", func(c *appsv1alpha1.Cluster) {
			c.Spec.Config = map[string]string{strings.Repeat("k", 65): "v"}
		}, `spec.config: Invalid value: config keys may be at most 64 and values at most 1024 characters long`},
		{"a config has at most 32 entries", func(c *appsv1alpha1.Cluster) { c.Spec.Config = bigConfig },
			`spec.config: Too many: 33: must have at most 32 items`},
		{"the deletion policy is Delete or Retain", func(c *appsv1alpha1.Cluster) { c.Spec.DeletionPolicy = "Orphan" },
			`spec.deletionPolicy: Unsupported value: "Orphan": supported values: "Delete", "Retain"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := valid()
			tc.mutate(cluster)

			err := env.Client().Create(t.Context(), cluster)

			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}

	t.Run("a valid cluster is accepted, with defaults", func(t *testing.T) {
		g := NewWithT(t)
		cluster := valid()
		cluster.Spec.Replicas = 0 // omitted: defaulted

		g.Expect(env.Client().Create(t.Context(), cluster)).To(Succeed())

		g.Expect(cluster.Spec.Replicas).To(Equal(int32(3)))
		g.Expect(cluster.Spec.DeletionPolicy).To(Equal(appsv1alpha1.DeletionPolicyDelete))
	})

	t.Run("the DNS name cannot change", func(t *testing.T) {
		g := NewWithT(t)
		cluster := valid()
		g.Expect(env.Client().Create(t.Context(), cluster)).To(Succeed())
		before := cluster.DeepCopy()
		cluster.Spec.DNSName = "moved.clusters.example.com"

		err := env.Client().Patch(t.Context(), cluster, client.MergeFrom(before))

		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(`spec.dnsName: Invalid value: "moved.clusters.example.com": dnsName is immutable; create a new Cluster to change it`))
	})
}
