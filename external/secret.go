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

package external

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Secrets keeps values generated once, such as a password or an API key, in Secrets that the
// objects they are generated for own: values that must be drawn once for the life of an object,
// stored before they are used, and never drawn again.
type Secrets struct {
	// Client creates the Secrets and adds missing keys. Required.
	Client client.Client

	// APIReader reads the Secrets. Use the manager's API reader unless the cache holds Secrets
	// anyway: GenerateOnce runs only where a value is needed (typically in Provider.Create), so
	// the read costs little, and a cache of every Secret of the cluster costs memory and RBAC.
	// Defaults to Client.
	APIReader client.Reader
}

// GenerateOnce returns the value under key in the Secret called name in owner's namespace,
// generating it with generate and storing it first when there is none. A Secret it creates has
// owner as its controller (an owner reference, so the garbage collector deletes it with owner).
//
// A value is returned only once it is stored, and the stored value always wins:
//
//   - the Secret is read with APIReader; when it has the key, that value is returned;
//   - otherwise a value is generated and stored: a Create of the Secret when it does not exist,
//     or a JSON Patch that adds the key only while it is still missing. When another writer
//     stored one first (AlreadyExists, or a failed test), the Secret is read again and its value
//     returned; a value generated but not stored is thrown away. A crash between generating
//     and storing therefore loses nothing that was used, and a reader that lags (a cache that
//     has not seen the Secret yet) cannot make a second value: the write is refused, and when
//     the reader still does not show the stored value, GenerateOnce returns the AlreadyExists
//     error, a quiet requeue for requeue.WithBackoff;
//   - a Secret of that name controlled by another object, or by none, is not used: that is an
//     error. The Secret of an earlier object of the same name that was deleted is such a
//     Secret until the garbage collector deletes it; the error is retried until then.
//
// What it cannot do: a Secret deleted or edited by someone else is not restored; the next call
// stores a new value, which an external resource created with the old one does not know.
func (s Secrets) GenerateOnce(ctx context.Context, owner client.Object, name, key string, generate func() ([]byte, error)) ([]byte, error) {
	if s.Client == nil || owner == nil || owner.GetUID() == "" || name == "" || key == "" || generate == nil {
		return nil, fmt.Errorf("failed to generate %q once: the client, an owner read from the API server, the Secret's name, the key and generate are required", key)
	}
	reader := s.APIReader
	if reader == nil {
		reader = s.Client
	}
	want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name}}
	if err := controllerutil.SetControllerReference(owner, want, s.Client.Scheme()); err != nil {
		return nil, fmt.Errorf("failed to generate %s of Secret %s: %w", key, name, err)
	}
	for range maxStale {
		value, stored, err := s.tryOnce(ctx, reader, owner, want, key, generate)
		if stored || err != nil {
			return value, err
		}
	}
	return nil, apierrors.NewAlreadyExists(corev1.Resource("secrets"), client.ObjectKeyFromObject(want).String())
}

// tryOnce reads the Secret want through reader and returns the value of key it holds, or stores a
// value of generate's while the key is still missing: stored is true once the returned value is
// the one the Secret holds. It is false, with no error, when another writer changed the Secret in
// between; the caller tries again.
func (s Secrets) tryOnce(ctx context.Context, reader client.Reader, owner client.Object, want *corev1.Secret, key string,
	generate func() ([]byte, error)) (value []byte, stored bool, _ error) {
	secretKey := client.ObjectKeyFromObject(want)
	var live corev1.Secret
	err := reader.Get(ctx, secretKey, &live)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("failed to read Secret %s: %w", secretKey, err)
	}
	found := err == nil
	if found {
		if err := sameOwner(owner, &live); err != nil {
			return nil, false, err
		}
		if value, ok := live.Data[key]; ok {
			return value, true, nil
		}
	}
	value, err = generate()
	if err != nil {
		return nil, false, fmt.Errorf("failed to generate %s of Secret %s: %w", key, secretKey, err)
	}
	if !found {
		create := want.DeepCopy()
		create.Data = map[string][]byte{key: value}
		err := s.Client.Create(ctx, create)
		switch {
		case err == nil:
			return value, true, nil
		case apierrors.IsAlreadyExists(err):
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("failed to create Secret %s: %w", secretKey, err)
	}
	err = addKey(ctx, s.Client, &live, key, value)
	if err == nil {
		return value, true, nil
	}
	// A failed test (another writer added the key first), or an answer that was lost: the
	// Secret tells which, whatever the error looks like.
	var latest corev1.Secret
	if getErr := reader.Get(ctx, secretKey, &latest); getErr == nil && latest.ResourceVersion == live.ResourceVersion {
		return nil, false, err
	}
	return nil, false, nil
}

// addKey adds key with value to live's data, while the key is still missing on the server.
func addKey(ctx context.Context, c client.Client, live *corev1.Secret, key string, value []byte) error {
	encoded := base64.StdEncoding.EncodeToString(value)
	ops := []map[string]any{{"op": "test", "path": "/metadata/uid", "value": string(live.UID)}}
	if live.Data == nil {
		ops = append(ops,
			map[string]any{"op": "test", "path": "/data", "value": nil},
			map[string]any{"op": "add", "path": "/data", "value": map[string]string{key: encoded}})
	} else {
		ops = append(ops,
			map[string]any{"op": "test", "path": "/data/" + escape(key), "value": nil},
			map[string]any{"op": "add", "path": "/data/" + escape(key), "value": encoded})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("failed to encode the patch of Secret %s: %w", client.ObjectKeyFromObject(live), err)
	}
	if err := c.Patch(ctx, live.DeepCopy(), client.RawPatch(types.JSONPatchType, data)); err != nil {
		return fmt.Errorf("failed to add %s to Secret %s: %w", key, client.ObjectKeyFromObject(live), err)
	}
	return nil
}

// sameOwner returns an error unless live is controlled by owner.
func sameOwner(owner client.Object, live *corev1.Secret) error {
	ref := metav1.GetControllerOfNoCopy(live)
	if ref != nil && ref.UID == owner.GetUID() {
		return nil
	}
	controller := "no controller"
	if ref != nil {
		controller = fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	return fmt.Errorf("failed to use Secret %s: it is controlled by %s, not by %s (uid %s); it belongs to another object, "+
		"such as an earlier one of the same name that the garbage collector has not deleted yet",
		client.ObjectKeyFromObject(live), controller, owner.GetName(), owner.GetUID())
}
