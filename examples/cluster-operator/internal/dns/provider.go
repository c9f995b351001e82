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
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/requeue"
)

// TokenKey is the key of the DNS provider's token in the credentials Secret.
const TokenKey = "token"

// ReasonInvalidCredentials is the reason of the DNSReady condition when the token is missing or
// the DNS provider refuses it. A person must fix the Secret; the Cluster is Stalled until then.
const ReasonInvalidCredentials conditions.Reason = "InvalidDNSCredentials"

// Provider gives access to the DNS API, authenticated with the token in a Secret. The token is
// read on every use from Reader, normally the manager's cache, so a rotated token is picked up
// without a restart and never needs to be held anywhere else.
type Provider struct {
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
// terminal error with ReasonInvalidCredentials.
func (p *Provider) client(ctx context.Context) (*clouddns.Client, error) {
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

// failed returns err from a call to the DNS API: terminal with ReasonInvalidCredentials when the
// provider refused the token, as it is otherwise (the API being unavailable is retried with
// backoff).
func (p *Provider) failed(err error) error {
	if errors.Is(err, clouddns.ErrUnauthorized) {
		return p.invalidCredentials(fmt.Errorf("%w: the DNS provider refused the token in secret %s", errInvalidCredentials, p.Secret))
	}
	return err
}

func (p *Provider) invalidCredentials(err error) error {
	return requeue.TerminalError(ReasonInvalidCredentials, err)
}
