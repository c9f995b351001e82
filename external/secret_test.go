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

package external_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/requeue"
)

// counter returns a generate function that returns "value-1", "value-2", … and counts its calls.
func counter() (func() ([]byte, error), *atomic.Int32) {
	var n atomic.Int32
	return func() ([]byte, error) { return fmt.Appendf(nil, "value-%d", n.Add(1)), nil }, &n
}

func TestGenerateOnceStoresTheValueBeforeItReturnsItAndNeverDrawsAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	db := w.create("orders", "small")
	secrets := external.Secrets{Client: w.client, APIReader: w.api}
	generate, calls := counter()

	first, err := secrets.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(err).NotTo(HaveOccurred())
	again, err := secrets.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(again).To(Equal(first))
	w.g.Expect(calls.Load()).To(BeEquivalentTo(1))

	var secret corev1.Secret
	w.g.Expect(w.api.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "orders-admin"}, &secret)).To(Succeed())
	w.g.Expect(secret.Data).To(HaveKeyWithValue("password", first))
	w.g.Expect(metav1.GetControllerOf(&secret)).To(And(HaveField("UID", db.UID), HaveField("Kind", "Database")))

	// A second key is added to the Secret, the first kept.
	apiKey, err := secrets.GenerateOnce(w.ctx, db, "orders-admin", "api-key", generate)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(w.api.Get(w.ctx, client.ObjectKeyFromObject(&secret), &secret)).To(Succeed())
	w.g.Expect(secret.Data).To(Equal(map[string][]byte{"password": first, "api-key": apiKey}))
}

func TestGenerateOnceReturnsOneValueToConcurrentCallers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	db := w.create("orders", "small")
	secrets := external.Secrets{Client: w.client, APIReader: w.api}
	generate, _ := counter()

	for _, key := range []string{"password", "api-key"} { // the Secret is created, then a key is added
		values := make([][]byte, 8)
		var wg sync.WaitGroup
		for i := range values {
			wg.Go(func() {
				v, err := secrets.GenerateOnce(w.ctx, db, "orders-admin", key, generate)
				if err != nil && requeue.Classify(err) == requeue.ClassAlreadyExists {
					v, err = secrets.GenerateOnce(w.ctx, db, "orders-admin", key, generate)
				}
				if err == nil {
					values[i] = v
				}
			})
		}
		wg.Wait()
		var secret corev1.Secret
		w.g.Expect(w.api.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "orders-admin"}, &secret)).To(Succeed())
		for i, v := range values {
			w.g.Expect(v).To(Equal(secret.Data[key]), "caller %d got a value that is not the stored one", i)
		}
	}
}

func TestGenerateOnceWithAReaderThatLagsReturnsTheStoredValue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	db := w.create("orders", "small")
	generate, _ := counter()
	stored, err := external.Secrets{Client: w.client, APIReader: w.api}.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(err).NotTo(HaveOccurred())

	// A cache that has not seen the Secret yet, once: the Create is refused, the Secret read again.
	lagging := &notFoundOnce{Reader: w.api}
	got, err := external.Secrets{Client: w.client, APIReader: lagging}.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(got).To(Equal(stored))

	// A cache that never shows it: a quiet requeue, never a value that is not stored.
	never := &notFoundOnce{Reader: w.api, always: true}
	_, err = external.Secrets{Client: w.client, APIReader: never}.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "got %v", err)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassAlreadyExists))
}

func TestGenerateOnceRefusesASecretThatAnotherObjectControls(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	db := w.create("orders", "small")
	earlier := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "orders-admin", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: groupVersion.String(), Kind: "Database", Name: "orders", UID: "0e5b3f1c-earlier", Controller: ptr.To(true),
	}}}, Data: map[string][]byte{"password": []byte("old")}}
	w.g.Expect(w.api.Create(w.ctx, earlier)).To(Succeed())
	generate, calls := counter()

	_, err := external.Secrets{Client: w.client, APIReader: w.api}.GenerateOnce(w.ctx, db, "orders-admin", "password", generate)
	w.g.Expect(err).To(MatchError(fmt.Sprintf("failed to use Secret %s/orders-admin: it is controlled by Database orders (uid 0e5b3f1c-earlier), "+
		"not by orders (uid %s); it belongs to another object, such as an earlier one of the same name that the garbage collector has not deleted yet", w.ns, db.UID)))
	w.g.Expect(calls.Load()).To(BeZero())
}

func TestGenerateOnceSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, err := external.Secrets{}.GenerateOnce(t.Context(), &Database{}, "orders-admin", "password", nil)
	g.Expect(err).To(MatchError(`failed to generate "password" once: the client, an owner read from the API server, the Secret's name, the key and generate are required`))
}

// notFoundOnce reads Secrets through Reader, but answers NotFound the first time (every time
// with always).
type notFoundOnce struct {
	client.Reader
	always bool
	done   atomic.Bool
}

func (n *notFoundOnce) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if n.always || n.done.CompareAndSwap(false, true) {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return n.Reader.Get(ctx, key, obj, opts...)
}
