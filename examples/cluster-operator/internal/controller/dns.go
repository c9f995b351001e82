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
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/requeue"
)

// TokenKey is the key of the DNS provider's token in the credentials Secret.
const TokenKey = "token"

// Reasons of the DNSReady condition besides those of the external package (external.ReasonCreating
// while the record is created, external.ReasonNotReady while it propagates,
// external.ReasonAvailable once it resolves, external.ReasonNameTaken when the name is someone
// else's).
const (
	// ReasonInvalidDNSCreds: the token is missing or the DNS provider refuses it. A person must
	// fix the Secret; the Cluster is Stalled until then.
	ReasonInvalidDNSCreds conditions.Reason = "InvalidDNSCredentials"
	// ReasonWaitingForService: the Service has no cluster IP yet, so there is nothing to point
	// the record at.
	ReasonWaitingForService conditions.Reason = "WaitingForService"
)

// dnsPollInterval is how often a record that is propagating is checked.
const dnsPollInterval = 2 * time.Second

// DNSProvider gives the controller clients for the DNS API, authenticated with the token in a
// Secret. The token is read on every use from Reader, normally the manager's cache, so a rotated
// token is picked up without a restart and never needs to be held anywhere else.
type DNSProvider struct {
	// Endpoint is the DNS API's base URL.
	Endpoint string
	// Secret is the namespace and name of the Secret that holds the token under TokenKey.
	Secret client.ObjectKey
	// Reader reads the Secret.
	Reader client.Reader
	// HTTPClient sends the requests. Defaults to a client with a 10 second timeout.
	HTTPClient *http.Client
	// Fence, when set, refuses calls to the DNS provider once this replica may no longer act as
	// the leader (the *fencing.Lock of the manager's leader election): they do not go through
	// the API server, whose requests the lock fences. Optional.
	Fence external.Fence
}

// errInvalidCredentials is the start of the error for missing or refused credentials: a person
// must fix the Secret, so the reconcile stops retrying (it is terminal) until the Secret changes,
// which the controller watches.
var errInvalidCredentials = errors.New("invalid DNS credentials")

// client returns a client with the token of the Secret. Missing or refused credentials are a
// terminal error with ReasonInvalidDNSCreds.
func (p *DNSProvider) client(ctx context.Context) (*clouddns.Client, error) {
	var secret corev1.Secret
	if err := p.Reader.Get(ctx, p.Secret, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, p.invalidCredentials(fmt.Errorf("%w: secret %s does not exist", errInvalidCredentials, p.Secret))
		}
		return nil, fmt.Errorf("failed to read the DNS credentials: %w", err)
	}
	token := string(secret.Data[TokenKey])
	if token == "" {
		return nil, p.invalidCredentials(fmt.Errorf("%w: secret %s has no %q key", errInvalidCredentials, p.Secret, TokenKey))
	}
	hc := p.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &clouddns.Client{BaseURL: p.Endpoint, Token: token, HTTPClient: hc}, nil
}

// failed returns err from a call to the DNS API: terminal with ReasonInvalidDNSCreds when the
// provider refused the token, as it is otherwise (the API being unavailable is retried with
// backoff).
func (p *DNSProvider) failed(err error) error {
	if errors.Is(err, clouddns.ErrUnauthorized) {
		return p.invalidCredentials(fmt.Errorf("%w: the DNS provider refused the token in secret %s", errInvalidCredentials, p.Secret))
	}
	return err
}

func (p *DNSProvider) invalidCredentials(err error) error {
	return requeue.TerminalError(ReasonInvalidDNSCreds, err)
}

// dnsRecord is a Cluster's DNS record at the provider, as an external.Provider: an A record
// named spec.dnsName that points at the Service's cluster IP and carries the Cluster's uid as
// its owner, so that the controller never adopts, changes or deletes someone else's record.
//
// external.Resource does the rest: it observes first, stores that a create is under way before
// sending it (a crash or a lagging cache never creates twice, nor after the deletion began),
// polls the record while it propagates, corrects drift, and deletes the record in the finalizer
// step, which spec.deletionPolicy Retain skips.
type dnsRecord struct {
	dns *DNSProvider
	// address is what the record points at: the Service's cluster IP. Empty in the deletion
	// step, which only observes and deletes.
	address string
}

var _ external.Provider[*appsv1alpha1.Cluster] = dnsRecord{}

// desired is the record the Cluster wants.
func (d dnsRecord) desired(cluster *appsv1alpha1.Cluster, name string) clouddns.Record {
	return clouddns.Record{Name: name, Type: "A", Value: d.address, TTL: 60, Owner: string(cluster.UID)}
}

// Observe reads the record called name. It sets status.endpoint, which is the record's name
// once it resolves to the Service, and empty when the record is not there, not in sync or not
// the Cluster's. While the DNS API cannot be reached the endpoint stays as it was, as DNSReady
// does: the record did not stop resolving because the controller cannot see it.
func (d dnsRecord) Observe(ctx context.Context, cluster *appsv1alpha1.Cluster, name string) (external.Observation, error) {
	endpoint := func(e string) {
		if cluster.DeletionTimestamp.IsZero() {
			cluster.Status.Endpoint = e
		}
	}
	dns, err := d.dns.client(ctx)
	if err != nil {
		if errors.Is(err, errInvalidCredentials) {
			endpoint("") // a person must act: say so everywhere
		}
		return external.Observation{}, err
	}
	rec, err := dns.Get(ctx, name)
	switch {
	case errors.Is(err, clouddns.ErrNotFound):
		endpoint("")
		return external.Observation{}, nil
	case err != nil:
		if err = d.dns.failed(err); errors.Is(err, errInvalidCredentials) {
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
func (d dnsRecord) Create(ctx context.Context, cluster *appsv1alpha1.Cluster, name, _ string) (external.Operation, error) {
	dns, err := d.dns.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := dns.Create(ctx, d.desired(cluster, name)); err != nil && !errors.Is(err, clouddns.ErrConflict) {
		// ErrConflict: a record of that name exists (ours, from a create whose response was lost,
		// or someone else's); the next Observe says which.
		return "", d.dns.failed(err)
	}
	return "", nil
}

// Update points the record at the Service again (the address or the TTL drifted).
func (d dnsRecord) Update(ctx context.Context, cluster *appsv1alpha1.Cluster, name string) (external.Operation, error) {
	dns, err := d.dns.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := dns.Put(ctx, d.desired(cluster, name)); err != nil {
		return "", d.dns.failed(err)
	}
	return "", nil
}

// Delete starts withdrawing the record; external.Resource observes it until it is gone.
func (d dnsRecord) Delete(ctx context.Context, _ *appsv1alpha1.Cluster, name string) (external.Operation, error) {
	dns, err := d.dns.client(ctx)
	if err != nil {
		return "", err
	}
	if _, err := dns.Delete(ctx, name); err != nil && !errors.Is(err, clouddns.ErrNotFound) {
		return "", d.dns.failed(err)
	}
	return "", nil
}

// dnsRecordName names the record in the Cluster's annotation (external.tenon.dev/dns-record)
// and is the finalizer step that deletes it.
const dnsRecordName = "dns-record"

// dnsRecord returns the external.Resource that keeps the Cluster's DNS record, pointing at
// address. A Resource holds no state, so one is made for each reconcile.
func (r *ClusterReconciler) dnsRecord(address string) *external.Resource[*appsv1alpha1.Cluster] {
	return &external.Resource[*appsv1alpha1.Cluster]{
		Name:      dnsRecordName,
		Provider:  dnsRecord{dns: r.DNS, address: address},
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
