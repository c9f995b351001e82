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

package dns

import (
	"context"
	"errors"
	"fmt"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"

	"github.com/tenon-dev/tenon/external"
)

// ClusterRecord is a Cluster's DNS record at the provider, as an external.Provider: an A record
// named spec.dnsName that points at the Service's cluster IP and carries the Cluster's uid as
// its owner, so that the controller never adopts, changes or deletes someone else's record.
//
// external.Resource does the rest: it observes first, stores that a create is under way before
// sending it (a crash or a lagging cache never creates twice, nor after the deletion began),
// polls the record while it propagates, corrects drift, and deletes the record in the finalizer
// step, which spec.deletionPolicy Retain skips.
type ClusterRecord struct {
	// Provider gives access to the DNS API.
	Provider *Provider
	// Address is what the record points at: the Service's cluster IP. Empty in the deletion
	// step, which only observes and deletes.
	Address string
}

var _ external.Provider[*appsv1alpha1.Cluster] = ClusterRecord{}

// desired is the record the Cluster wants.
func (d ClusterRecord) desired(cluster *appsv1alpha1.Cluster, name string) clouddns.Record {
	return clouddns.Record{Name: name, Type: "A", Value: d.Address, TTL: 60, Owner: string(cluster.UID)}
}

// Observe reads the record called name. It sets status.endpoint, which is the record's name
// once it resolves to the Service, and empty when the record is not there, not in sync or not
// the Cluster's. While the DNS API cannot be reached the endpoint stays as it was, as DNSReady
// does: the record did not stop resolving because the controller cannot see it.
func (d ClusterRecord) Observe(ctx context.Context, cluster *appsv1alpha1.Cluster, name string) (external.Observation, error) {
	endpoint := func(e string) {
		if cluster.DeletionTimestamp.IsZero() {
			cluster.Status.Endpoint = e
		}
	}
	api, err := d.Provider.client(ctx)
	if err != nil {
		if errors.Is(err, errInvalidCredentials) {
			endpoint("") // a person must act: say so everywhere
		}
		return external.Observation{}, err
	}
	rec, err := api.Get(ctx, name)
	switch {
	case errors.Is(err, clouddns.ErrNotFound):
		endpoint("")
		return external.Observation{}, nil
	case err != nil:
		if err = d.Provider.failed(err); errors.Is(err, errInvalidCredentials) {
			endpoint("")
		}
		return external.Observation{}, err
	case rec.Owner != string(cluster.UID):
		endpoint("")
		return external.Observation{}, fmt.Errorf("%w: DNS name %s belongs to another owner (%s): delete that record, "+
			"or create a new Cluster with another dnsName (spec.dnsName cannot change)", external.ErrNameTaken, name, rec.Owner)
	}
	want := d.desired(cluster, name)
	obs := external.Observation{
		Exists:   true,
		Ready:    rec.Status == clouddns.StatusInSync,
		UpToDate: rec.Value == want.Value && rec.TTL == want.TTL && rec.Type == want.Type,
	}
	switch {
	case !obs.Ready:
		obs.Message = fmt.Sprintf("record %s is %s", name, rec.Status)
	case obs.UpToDate:
		obs.Message = fmt.Sprintf("%s resolves to %s", name, rec.Value)
	}
	if obs.Ready && obs.UpToDate {
		endpoint(name)
	} else {
		endpoint("")
	}
	return obs, nil
}

// Create creates the record, only if no record of that name exists: the provider refuses a second
// one (names are unique), which makes a create sent again after a lost response harmless.
func (d ClusterRecord) Create(ctx context.Context, cluster *appsv1alpha1.Cluster, name, _ string) (external.Operation, error) {
	api, err := d.Provider.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := api.Create(ctx, d.desired(cluster, name)); err != nil && !errors.Is(err, clouddns.ErrConflict) {
		// ErrConflict: a record of that name exists (ours, from a create whose response was lost,
		// or someone else's); the next Observe says which.
		return "", d.Provider.failed(err)
	}
	return "", nil
}

// Update points the record at the Service again (the address or the TTL drifted).
func (d ClusterRecord) Update(ctx context.Context, cluster *appsv1alpha1.Cluster, name string) (external.Operation, error) {
	api, err := d.Provider.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := api.Put(ctx, d.desired(cluster, name)); err != nil {
		return "", d.Provider.failed(err)
	}
	return "", nil
}

// Delete starts withdrawing the record; external.Resource observes it until it is gone.
func (d ClusterRecord) Delete(ctx context.Context, _ *appsv1alpha1.Cluster, name string) (external.Operation, error) {
	api, err := d.Provider.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := api.Delete(ctx, name); err != nil && !errors.Is(err, clouddns.ErrNotFound) {
		return "", d.Provider.failed(err)
	}
	return "", nil
}
