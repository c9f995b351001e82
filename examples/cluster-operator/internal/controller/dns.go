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

package controller

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
)

// ReasonWaitingForService is the reason of the DNSReady condition while the Service has no
// cluster IP yet, so there is nothing to point the record at. DNSReady's other reasons are those
// of the external package (external.ReasonCreating while the record is created,
// external.ReasonNotReady while it propagates, external.ReasonAvailable once it resolves,
// external.ReasonNameTaken when the name is someone else's) and dns.ReasonInvalidCredentials.
const ReasonWaitingForService conditions.Reason = "WaitingForService"

// dnsPollInterval is how often a record that is propagating is checked.
const dnsPollInterval = 2 * time.Second

// dnsRecordName names the record in the Cluster's annotation (external.tenon.dev/dns-record)
// and is the finalizer step that deletes it.
const dnsRecordName = "dns-record"

// dnsRecord returns the external.Resource that keeps the Cluster's DNS record, pointing at
// address. A Resource holds no state, so one is made for each reconcile.
func (r *ClusterReconciler) dnsRecord(address string) *external.Resource[*appsv1alpha1.Cluster] {
	return &external.Resource[*appsv1alpha1.Cluster]{
		Name:      dnsRecordName,
		Provider:  dns.ClusterRecord{Provider: r.DNS, Address: address},
		Client:    r.Client,
		APIReader: r.APIReader,
		Condition: appsv1alpha1.DNSReady,
		// The record's name is the one the user chose (spec.dnsName is immutable).
		ExternalName: func(cluster *appsv1alpha1.Cluster) string { return cluster.Spec.DNSName },
		// The provider refuses a second record of a name: a create whose response was lost can
		// be sent again.
		IdempotentCreate: true,
		PollInterval:     dnsPollInterval,
		Fence:            r.DNS.Fence,
	}
}

// reconcileDNS makes sure the cluster's DNS record exists, points at its Service and is in sync,
// and sets DNSReady and status.endpoint accordingly.
func (r *ClusterReconciler) reconcileDNS(ctx context.Context, cluster *appsv1alpha1.Cluster, address string) (ctrl.Result, error) {
	if address == "" {
		cluster.Status.Endpoint = ""
		// The Service's update wakes this controller up (Owns).
		conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, ReasonWaitingForService, "waiting for the Service to get a cluster IP")
		return ctrl.Result{}, nil
	}
	res, err := r.dnsRecord(address).Ensure(ctx, cluster)
	if !conditions.IsTrue(cluster, appsv1alpha1.DNSReady) {
		// Ensure stopped before Observe could say (an annotation a person broke, say): the
		// endpoint is there only while DNSReady is True.
		cluster.Status.Endpoint = ""
	}
	return res, err
}
