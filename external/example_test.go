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
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/finalizer"
)

// records is a provider whose calls finish when they return, as a DNS API's may: no operations
// to poll. Each record is named after its Database and holds its tier.
type records struct {
	byName map[string]string
}

func (p *records) Observe(_ context.Context, db *Database, name string) (external.Observation, error) {
	value, ok := p.byName[name]
	return external.Observation{Exists: ok, Ready: ok, UpToDate: value == db.Spec.Tier}, nil
}

func (p *records) Create(_ context.Context, db *Database, name, _ string) (external.Operation, error) {
	if _, ok := p.byName[name]; ok {
		return "", nil // names are unique, and this one is the Database's
	}
	p.byName[name] = db.Spec.Tier
	return "", nil
}

func (p *records) Update(_ context.Context, db *Database, name string) (external.Operation, error) {
	p.byName[name] = db.Spec.Tier
	return "", nil
}

func (p *records) Delete(_ context.Context, _ *Database, name string) (external.Operation, error) {
	delete(p.byName, name)
	return "", nil
}

// A provider without operations, driven by Ensure while the Database lives and by the finalizer
// step once it is deleted.
func ExampleResource() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = addToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&Database{}).Build()
	provider := &records{byName: map[string]string{}}
	record := &external.Resource[*Database]{
		Name: "record", Provider: provider, Client: c, Condition: "RecordReady", IdempotentCreate: true,
		ExternalName: func(db *Database) string { return db.Name + ".db.example.com" },
	}
	clock := clocktesting.NewFakePassiveClock(time.Now()) // the real clock by default
	lifecycle := &finalizer.Lifecycle[*Database]{Finalizer: "example.tenon.dev/record", Client: c, Clock: clock,
		Steps: []finalizer.Step[*Database]{record.Step()}}
	reconcile := func(db *Database) {
		if proceed, _, _ := lifecycle.Reconcile(ctx, db); !proceed {
			fmt.Println("deleting:", slices.Sorted(maps.Keys(provider.byName)))
			return
		}
		res, err := record.Ensure(ctx, db)
		ready := conditions.Get(db, "RecordReady")
		fmt.Println(ready.Status, ready.Reason, slices.Sorted(maps.Keys(provider.byName)), res.RequeueAfter > 0, err)
	}

	// The API server sets the uid; the fake client does not.
	db := &Database{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", UID: "7d1c0a52"}, Spec: DatabaseSpec{Tier: "small"}}
	_ = c.Create(ctx, db)
	reconcile(db) // created
	reconcile(db) // observed: available

	// Deleted behind the controller's back: created again.
	delete(provider.byName, "orders.db.example.com")
	reconcile(db)

	_ = c.Delete(ctx, db)
	_ = c.Get(ctx, client.ObjectKeyFromObject(db), db)
	reconcile(db)                               // the step deletes the record
	clock.SetTime(clock.Now().Add(time.Minute)) // once the step's wait is over,
	reconcile(db)                               // it finds it gone: the finalizer goes, and the Database with it
	fmt.Println("gone:", apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(db), db)))
	// Output:
	// False Creating [orders.db.example.com] true <nil>
	// True Available [orders.db.example.com] true <nil>
	// False Creating [orders.db.example.com] true <nil>
	// deleting: []
	// deleting: []
	// gone: true
}

// A password generated once: stored in a Secret the Database owns before it is returned, and
// the stored one returned ever after.
func ExampleSecrets_GenerateOnce() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = addToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	db := &Database{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", UID: "7d1c0a52"}}
	secrets := external.Secrets{Client: c, APIReader: c}

	draws := 0
	generate := func() ([]byte, error) {
		draws++
		return fmt.Appendf(nil, "password-%d", draws), nil
	}
	first, err := secrets.GenerateOnce(ctx, db, "orders-admin", "password", generate)
	fmt.Println(string(first), err)
	again, err := secrets.GenerateOnce(ctx, db, "orders-admin", "password", generate)
	fmt.Println(string(again), err, "draws:", draws)

	_, err = secrets.GenerateOnce(ctx, db, "orders-admin", "token", func() ([]byte, error) { return nil, errors.New("no entropy") })
	fmt.Println(err)
	// Output:
	// password-1 <nil>
	// password-1 <nil> draws: 1
	// failed to generate token of Secret shop/orders-admin: no entropy
}
