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
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/patch"
)

// This file is what a user writes for a Database whose instance a cloud creates, resizes and
// deletes asynchronously, each an operation to poll: a reconciler and the external.Provider that
// adapts the cloud's client (Cloud, in cloud_test.go) to it. Example_database runs it on the fake
// client; the crash test runs it on a real API server.

// DatabaseReady says whether the Database's instance exists, runs and has the spec's tier.
const DatabaseReady conditions.Type = "DatabaseReady"

// DatabaseReconciler keeps a cloud database instance for each Database.
type DatabaseReconciler struct {
	client.Client
	database  *external.Resource[*Database]
	lifecycle *finalizer.Lifecycle[*Database]
	writer    *patch.Writer
}

// NewDatabaseReconciler returns a DatabaseReconciler; apiReader is the manager's API reader.
func NewDatabaseReconciler(c client.Client, apiReader client.Reader, cloud *Cloud) *DatabaseReconciler {
	database := &external.Resource[*Database]{
		Name: "database", Condition: DatabaseReady, Client: c, APIReader: apiReader,
		Provider:         &instances{cloud: cloud, secrets: external.Secrets{Client: c, APIReader: apiReader}},
		ExternalName:     func(db *Database) string { return "db-" + string(db.UID) },
		IdempotentCreate: true, // Insert takes the key as its request id
	}
	lifecycle := &finalizer.Lifecycle[*Database]{Finalizer: "example.tenon.dev/database", Client: c,
		Steps: []finalizer.Step[*Database]{database.Step()}}
	writer := patch.NewWriter(c, patch.WriterOptions{APIReader: apiReader, OwnedConditions: []conditions.Type{DatabaseReady}})
	return &DatabaseReconciler{Client: c, database: database, lifecycle: lifecycle, writer: writer}
}

// Reconcile creates, resizes and deletes the Database's instance.
func (r *DatabaseReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	db := &Database{}
	if err := r.Get(ctx, req.NamespacedName, db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if proceed, res, err := r.lifecycle.Reconcile(ctx, db); !proceed {
		return res, err
	}
	helper, err := r.writer.NewHelper(db)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { res, err = helper.Finish(ctx, db, res, err) }()
	res, err = r.database.Ensure(ctx, db)
	conditions.Set(db, conditions.Summary(db, conditions.Ready, []conditions.Type{DatabaseReady}))
	return res, err
}

// instances is the external.Provider of Databases: the cloud's instances.
type instances struct {
	cloud   *Cloud
	secrets external.Secrets
}

func (p *instances) Observe(ctx context.Context, db *Database, name string) (external.Observation, error) {
	in, err := p.cloud.Get(ctx, name)
	if errors.Is(err, errNotFound) {
		return external.Observation{}, nil
	} else if err != nil {
		return external.Observation{}, err
	}
	db.Status.Endpoint = in.Address
	return external.Observation{Exists: true, Ready: in.State == stateRunning, UpToDate: in.Tier == db.Spec.Tier,
		Message: fmt.Sprintf("instance %s is %s, tier %s", name, in.State, in.Tier)}, nil
}

func (p *instances) Create(ctx context.Context, db *Database, name, key string) (external.Operation, error) {
	password, err := p.secrets.GenerateOnce(ctx, db, db.Name+"-admin", "password",
		func() ([]byte, error) { return []byte(rand.Text()), nil })
	if err != nil {
		return "", err
	}
	op, err := p.cloud.Insert(ctx, Instance{Name: name, Tier: db.Spec.Tier, Password: string(password)}, key)
	return external.Operation(op), err
}

func (p *instances) Update(ctx context.Context, db *Database, name string) (external.Operation, error) {
	op, err := p.cloud.Resize(ctx, name, db.Spec.Tier)
	return external.Operation(op), err
}

func (p *instances) Delete(ctx context.Context, _ *Database, name string) (external.Operation, error) {
	op, err := p.cloud.Delete(ctx, name)
	return external.Operation(op), err
}

func (p *instances) OperationDone(ctx context.Context, _ *Database, id external.Operation) (bool, error) {
	op, err := p.cloud.Operation(ctx, string(id))
	if errors.Is(op.Err, errInvalid) {
		return true, reconcile.TerminalError(op.Err) // retrying cannot help
	}
	return op.Done, errors.Join(err, op.Err)
}

// A Database whose instance is created, resized and deleted by a cloud that answers each request
// with an operation to poll. Between reconciles, the cloud's operations finish (Tick).
func Example_database() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = addToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&Database{}).Build()
	cloud := NewCloud(cloudOptions{honourRequestIDs: true})
	r := NewDatabaseReconciler(c, c, cloud)
	clock := clocktesting.NewFakePassiveClock(time.Now()) // the real clock by default
	r.lifecycle.Clock = clock

	// The API server sets the uid; the fake client does not.
	db := &Database{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", UID: "7d1c0a52"}, Spec: DatabaseSpec{Tier: "small"}}
	_ = c.Create(ctx, db)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)}
	reconcileAndPrint := func() {
		res, err := r.Reconcile(ctx, req)
		if err := c.Get(ctx, req.NamespacedName, db); err != nil {
			fmt.Println("database gone:", client.IgnoreNotFound(err) == nil, "instances left:", len(cloud.Instances()))
			return
		}
		cond := conditions.Get(db, DatabaseReady)
		if d := conditions.Get(db, conditions.Deleting); d != nil {
			cond = d
		}
		fmt.Printf("%s %s: %s (poll: %t, error: %v)\n", cond.Type, cond.Reason, cond.Message, res.RequeueAfter > 0, err)
	}

	reconcileAndPrint() // create

	var state map[string]any // the Resource's state, its random idempotency key aside
	_ = json.Unmarshal([]byte(db.Annotations[external.AnnotationPrefix+"database"]), &state)
	delete(state, "key")
	fmt.Println(state)
	cloud.Tick()
	reconcileAndPrint() // running

	db.Spec.Tier = "large"
	_ = c.Update(ctx, db)
	reconcileAndPrint() // resize
	cloud.Tick()
	reconcileAndPrint() // running again

	_ = c.Delete(ctx, db)
	reconcileAndPrint() // delete
	cloud.Tick()
	clock.SetTime(clock.Now().Add(time.Minute)) // the deletion step runs again once its wait is over
	reconcileAndPrint()

	// Output:
	// DatabaseReady Creating: creating database db-7d1c0a52: operation op-2 (poll: true, error: <nil>)
	// map[attempt:1 name:db-7d1c0a52 operation:op-2 operationKind:Create phase:Creating]
	// DatabaseReady Available: instance db-7d1c0a52 is RUNNING, tier small (poll: true, error: <nil>)
	// DatabaseReady Updating: updating database db-7d1c0a52: operation op-3 (poll: true, error: <nil>)
	// DatabaseReady Available: instance db-7d1c0a52 is RUNNING, tier large (poll: true, error: <nil>)
	// Deleting CleanupInProgress: example.tenon.dev/database: step database: deleting database db-7d1c0a52: operation op-4 (poll: true, error: <nil>)
	// database gone: true instances left: 0
}
