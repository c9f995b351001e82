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
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var (
	env    *testenv.Environment
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(addToScheme(scheme))
	env = testenv.New(testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{databaseCRD()}, Scheme: scheme})
	os.Exit(env.Run(m))
}

// world is one test's namespace, cloud and clients of the API server.
type world struct {
	t     *testing.T
	g     *WithT
	ctx   context.Context
	ns    string
	cloud *Cloud
	// api reads and writes the API server directly.
	api client.WithWatch
	// writes counts the requests of the reconciler's client that may write.
	writes atomic.Int32
	// client is the reconciler's client: api, counting writes.
	client client.Client
}

func newWorld(t *testing.T, opts cloudOptions) *world {
	t.Helper()
	api, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, g: NewWithT(t), ctx: t.Context(), ns: env.Namespace(t), cloud: NewCloud(opts), api: api}
	count := func() { w.writes.Add(1) }
	w.client = interceptor.NewClient(api, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, obj, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	return w
}

// reconciler returns the example's reconciler on the world's clients.
func (w *world) reconciler() *DatabaseReconciler {
	return NewDatabaseReconciler(w.client, w.api, w.cloud)
}

// create creates a Database of tier.
func (w *world) create(name, tier string) *Database {
	w.t.Helper()
	db := &Database{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}, Spec: DatabaseSpec{Tier: tier}}
	w.g.Expect(w.api.Create(w.ctx, db)).To(Succeed())
	return db
}

// get reads db from the API server; it reports false when db is gone.
func (w *world) get(db *Database) (*Database, bool) {
	w.t.Helper()
	latest := &Database{}
	err := w.api.Get(w.ctx, client.ObjectKeyFromObject(db), latest)
	if err != nil {
		w.g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return nil, false
	}
	return latest, true
}

// reconcile runs one reconcile of db.
func (w *world) reconcile(r *DatabaseReconciler, db *Database) (ctrl.Result, error) {
	return r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)})
}

// settle reconciles db and lets the cloud's time pass until its DatabaseReady is True, or it is
// gone, within limit rounds.
func (w *world) settle(r *DatabaseReconciler, db *Database, limit int) {
	w.t.Helper()
	for range limit {
		_, _ = w.reconcile(r, db)
		latest, ok := w.get(db)
		if !ok || conditions.IsTrue(latest, DatabaseReady) && latest.DeletionTimestamp == nil {
			return
		}
		w.cloud.Tick()
	}
	latest, _ := w.get(db)
	w.t.Fatalf("Database %s did not settle in %d rounds: %+v", db.Name, limit, latest)
}

// instancesOf returns the instances named after db, the ones its reconciler creates.
func (w *world) instancesOf(db *Database) []Instance {
	var out []Instance
	for _, in := range w.cloud.Instances() {
		if in.Name == "db-"+string(db.UID) {
			out = append(out, in)
		}
	}
	return out
}

// stateOf returns the state the Resource keeps in db's annotation, decoded.
func stateOf(db *Database) map[string]any {
	raw, ok := db.Annotations[external.AnnotationPrefix+"database"]
	if !ok {
		return nil
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		panic(fmt.Sprintf("annotation %q: %v", raw, err))
	}
	return st
}

// inserts counts the calls of Insert the cloud received, whatever came of them.
func countInserts(c *Cloud, next func(cloudCall) cloudFault) *atomic.Int32 {
	var n atomic.Int32
	c.fault = func(call cloudCall) cloudFault {
		if call.Method == "Insert" {
			n.Add(1)
		}
		if next == nil {
			return faultNone
		}
		return next(call)
	}
	return &n
}

// once returns a fault hook that injects f into the first call of method, and none after.
func once(method string, f cloudFault) func(cloudCall) cloudFault {
	var done atomic.Bool
	return func(call cloudCall) cloudFault {
		if call.Method == method && done.CompareAndSwap(false, true) {
			return f
		}
		return faultNone
	}
}

// fenced is a Fence that is closed.
type fenced struct{}

func (fenced) Check() error { return fencedError{} }

// fencedError is what a closed fence returns: requeue.ClassFenced.
type fencedError struct{}

func (fencedError) Error() string { return "the fence is closed" }
func (fencedError) Fenced() bool  { return true }

// reconcileRequest returns the request to reconcile db.
func reconcileRequest(db *Database) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(db)}
}
