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
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/requeue"
)

// TokenKey is the key of the DNS provider's token in the credentials Secret.
const TokenKey = "token"

// Reasons of the DNSReady condition.
const (
	ReasonRecordPropagating conditions.Reason = "RecordPropagating"
	ReasonRecordInSync      conditions.Reason = "RecordInSync"
	ReasonNameTaken         conditions.Reason = "NameTaken"
	ReasonDNSUnavailable    conditions.Reason = "DNSUnavailable"
	ReasonInvalidDNSCreds   conditions.Reason = "InvalidDNSCredentials"
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
}

// errInvalidCredentials is the start of the error for missing or refused credentials: a person
// must fix the Secret, so the reconcile stops retrying (it is terminal) until the Secret changes,
// which the controller watches. The text before the colon becomes the Stalled reason.
var errInvalidCredentials = errors.New("invalid DNS credentials")

func (p *DNSProvider) client(ctx context.Context) (*clouddns.Client, error) {
	var secret corev1.Secret
	if err := p.Reader.Get(ctx, p.Secret, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: secret %s does not exist", errInvalidCredentials, p.Secret)
		}
		return nil, fmt.Errorf("failed to read the DNS credentials: %w", err)
	}
	token := string(secret.Data[TokenKey])
	if token == "" {
		return nil, fmt.Errorf("%w: secret %s has no %q key", errInvalidCredentials, p.Secret, TokenKey)
	}
	hc := p.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &clouddns.Client{BaseURL: p.Endpoint, Token: token, HTTPClient: hc}, nil
}

// reconcileDNS makes sure the cluster's DNS record exists, points at its Service and is in sync,
// and sets DNSReady and status.endpoint accordingly.
func (r *ClusterReconciler) reconcileDNS(ctx context.Context, cluster *appsv1alpha1.Cluster, address string) (ctrl.Result, error) {
	if address == "" {
		cluster.Status.Endpoint = ""
		// The Service's update wakes this controller up (Owns).
		_, err := conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, ReasonWaitingForService, "waiting for the Service to get a cluster IP")
		return ctrl.Result{}, err
	}
	dns, err := r.DNS.client(ctx)
	if err != nil {
		return r.dnsFailed(cluster, err)
	}
	want := clouddns.Record{Name: cluster.Spec.DNSName, Type: "A", Value: address, TTL: 60, Owner: string(cluster.UID)}

	rec, err := dns.Get(ctx, want.Name)
	switch {
	case errors.Is(err, clouddns.ErrNotFound):
		// Create only if absent: after a crash or a stale read the record may exist already, and
		// it must never be created twice or taken from someone else.
		rec, err = dns.Create(ctx, want)
		if errors.Is(err, clouddns.ErrConflict) {
			rec, err = dns.Get(ctx, want.Name)
		}
	case err == nil && rec.Owner == want.Owner && rec.Status != clouddns.StatusDeleting &&
		(rec.Value != want.Value || rec.TTL != want.TTL || rec.Type != want.Type):
		rec, err = dns.Put(ctx, want)
	}
	if err != nil {
		return r.dnsFailed(cluster, err)
	}
	if rec.Owner != want.Owner {
		cluster.Status.Endpoint = ""
		msg := fmt.Sprintf("DNS name %s belongs to another owner (%s): choose another dnsName", want.Name, rec.Owner)
		_, _ = conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, ReasonNameTaken, msg)
		return requeue.Terminal(ReasonNameTaken, errors.New("DNS name taken: "+msg))
	}
	if rec.Status != clouddns.StatusInSync {
		cluster.Status.Endpoint = ""
		_, err := conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, ReasonRecordPropagating,
			fmt.Sprintf("record %s is %s", rec.Name, rec.Status))
		if err != nil {
			return ctrl.Result{}, err
		}
		return requeue.Poll(dnsPollInterval)
	}
	cluster.Status.Endpoint = rec.Name
	_, err = conditions.MarkTrue(cluster, appsv1alpha1.DNSReady, ReasonRecordInSync, fmt.Sprintf("%s resolves to %s", rec.Name, rec.Value))
	return ctrl.Result{}, err
}

// dnsFailed records a failed call to the DNS API in DNSReady and returns what to do about it:
//
//   - Missing or refused credentials: a person must fix the Secret. DNSReady is False, the error
//     is terminal (the Cluster is Stalled) and the Secret's watch brings the Cluster back.
//   - Any other failure, such as the API being unavailable, is retried with backoff. It says
//     nothing new about the record, which keeps resolving: DNSReady keeps its status (Unknown
//     when it has none yet, or still blames credentials that were fixed since) and
//     requeue.Report marks the Cluster Reconciling with the error, so that Ready does not flap
//     with every failed call.
func (r *ClusterReconciler) dnsFailed(cluster *appsv1alpha1.Cluster, err error) (ctrl.Result, error) {
	if errors.Is(err, errInvalidCredentials) || errors.Is(err, clouddns.ErrUnauthorized) {
		if !errors.Is(err, errInvalidCredentials) {
			err = fmt.Errorf("%w: the DNS provider refused the token in secret %s", errInvalidCredentials, r.DNS.Secret)
		}
		cluster.Status.Endpoint = ""
		_, _ = conditions.MarkFalse(cluster, appsv1alpha1.DNSReady, ReasonInvalidDNSCreds, err.Error())
		return requeue.Terminal(ReasonInvalidDNSCreds, err)
	}
	if c := conditions.Get(cluster, appsv1alpha1.DNSReady); c == nil || c.Reason == string(ReasonInvalidDNSCreds) {
		_, _ = conditions.MarkUnknown(cluster, appsv1alpha1.DNSReady, ReasonDNSUnavailable, err.Error())
	}
	return ctrl.Result{}, err
}

// deleteDNSRecord is the finalizer step that deletes the cluster's DNS record and waits until
// the provider has withdrawn it. The Lifecycle skips it when the deletion policy retains the
// record.
func (r *ClusterReconciler) deleteDNSRecord(ctx context.Context, cluster *appsv1alpha1.Cluster) (finalizer.Progress, error) {
	dns, err := r.DNS.client(ctx)
	if err != nil {
		return finalizer.Progress{}, err
	}
	rec, err := dns.Get(ctx, cluster.Spec.DNSName)
	switch {
	case errors.Is(err, clouddns.ErrNotFound):
		return finalizer.Finished(), nil
	case err != nil:
		return finalizer.Progress{}, err
	case rec.Owner != string(cluster.UID):
		return finalizer.Finished(), nil // not ours: never delete someone else's record
	case rec.Status == clouddns.StatusDeleting:
		return finalizer.Waiting(dnsPollInterval, fmt.Sprintf("record %s is being withdrawn", rec.Name)), nil
	}
	if _, err := dns.Delete(ctx, rec.Name); err != nil && !errors.Is(err, clouddns.ErrNotFound) {
		return finalizer.Progress{}, err
	}
	return finalizer.Waiting(dnsPollInterval, fmt.Sprintf("deleting record %s", rec.Name)), nil
}
