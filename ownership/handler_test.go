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

package ownership_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(testtypes.GroupVersion.WithKind("Widget"), meta.RESTScopeNamespace)
	m.Add(testtypes.GroupVersion.WithKind("Fixture"), meta.RESTScopeRoot)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	return m
}

// testCluster is what EnqueueOwner uses of a manager: the test scheme, a RESTMapper and a cache
// whose reads find nothing (so every owner may be enqueued). The rest of cluster.Cluster is not
// used.
type testCluster struct {
	cluster.Cluster
	mapper meta.RESTMapper
	cache  cache.Cache
}

func newTestCluster(mapper meta.RESTMapper) testCluster {
	return testCluster{mapper: mapper, cache: &informertest.FakeInformers{Scheme: scheme}}
}

func (c testCluster) GetScheme() *runtime.Scheme     { return scheme }
func (c testCluster) GetRESTMapper() meta.RESTMapper { return c.mapper }
func (c testCluster) GetCache() cache.Cache          { return c.cache }

// namespacesCache reads as a manager's cache limited to namespaces does: elsewhere, a read
// fails with controller-runtime's error.
type namespacesCache struct {
	cache.Cache
	namespaces []string
}

func (c namespacesCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Namespace != "" && !slices.Contains(c.namespaces, key.Namespace) {
		return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

// drain returns the requests in q.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []reconcile.Request {
	var out []reconcile.Request
	for q.Len() > 0 {
		req, _ := q.Get()
		q.Done(req)
		out = append(out, req)
	}
	return out
}

func request(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

func TestEnqueueOwnerMapsChildrenOfBothMechanisms(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	clusterOwner := fixture("f", "uid-f")
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "w", UID: "uid-d"}}
	tests := []struct {
		name       string
		ownerType  client.Object
		mapper     meta.RESTMapper
		namespaces []string // those of a cache limited to namespaces
		child      client.Object
		want       []reconcile.Request
	}{{
		name:      "A referenced child enqueues its owner in the child's namespace",
		ownerType: &testtypes.Widget{},
		child:     set(t, owner, configMap("apps", "c", "")),
		want:      []reconcile.Request{request("apps", "w")},
	}, {
		name:      "A child in another namespace enqueues its owner in the owner's namespace",
		ownerType: &testtypes.Widget{},
		child:     set(t, owner, configMap("other", "c", "")),
		want:      []reconcile.Request{request("apps", "w")},
	}, {
		name:      "A cluster-scoped child enqueues its namespaced owner",
		ownerType: &testtypes.Widget{},
		child:     set(t, owner, fixture("c", "")),
		want:      []reconcile.Request{request("apps", "w")},
	}, {
		name:      "A namespaced child enqueues its cluster-scoped owner without a namespace",
		ownerType: &testtypes.Fixture{},
		child:     set(t, clusterOwner, configMap("apps", "c", "")),
		want:      []reconcile.Request{request("", "f")},
	}, {
		name:       "A cluster-scoped child of an owner in a namespace the cache holds enqueues its owner",
		ownerType:  &testtypes.Widget{},
		namespaces: []string{"apps"},
		child:      set(t, owner, fixture("c", "")),
		want:       []reconcile.Request{request("apps", "w")},
	}, {
		name:       "A cluster-scoped child of an owner in a namespace the cache does not hold enqueues nothing",
		ownerType:  &testtypes.Widget{},
		namespaces: []string{"other"},
		child:      set(t, owner, fixture("c", "")),
	}, {
		name:       "A child of an owner in a namespace the cache does not hold enqueues nothing, by reference too",
		ownerType:  &testtypes.Widget{},
		namespaces: []string{"other"},
		child:      set(t, owner, configMap("apps", "c", "")),
	}, {
		name:       "A child of a cluster-scoped owner enqueues it whatever the cache's namespaces",
		ownerType:  &testtypes.Fixture{},
		namespaces: []string{"other"},
		child:      set(t, clusterOwner, configMap("apps", "c", "")),
		want:       []reconcile.Request{request("", "f")},
	}, {
		name:      "A child of another kind of owner enqueues nothing",
		ownerType: &testtypes.Widget{},
		child:     set(t, deployment, configMap("apps", "c", "")),
	}, {
		name:      "A tracked child of another kind of owner enqueues nothing",
		ownerType: &testtypes.Widget{},
		child:     set(t, deployment, configMap("other", "c", "")),
	}, {
		name:      "A reference without the controller flag enqueues nothing",
		ownerType: &testtypes.Widget{},
		child: func() client.Object {
			c := configMap("apps", "c", "")
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: "w", UID: "uid-w"}}
			return c
		}(),
	}, {
		name:      "An owner type the scheme does not know enqueues nothing",
		ownerType: &unknownType{},
		child:     set(t, owner, configMap("other", "c", "")),
	}, {
		name:      "An owner kind the mapper does not know enqueues nothing for references",
		ownerType: &testtypes.Widget{},
		mapper:    meta.NewDefaultRESTMapper(nil),
		child:     set(t, owner, configMap("apps", "c", "")),
	}, {
		name:      "An owner kind the mapper does not know still enqueues for tracking",
		ownerType: &testtypes.Widget{},
		mapper:    meta.NewDefaultRESTMapper(nil),
		child:     set(t, owner, configMap("other", "c", "")),
		want:      []reconcile.Request{request("apps", "w")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mapper := tt.mapper
			if mapper == nil {
				mapper = testMapper()
			}
			c := newTestCluster(mapper)
			if tt.namespaces != nil {
				c.cache = namespacesCache{Cache: c.cache, namespaces: tt.namespaces}
			}
			h := ownership.EnqueueOwner(c, tt.ownerType)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()

			h.Create(t.Context(), event.CreateEvent{Object: tt.child}, q)
			g.Expect(drain(q)).To(Equal(tt.want), "create")
			h.Delete(t.Context(), event.DeleteEvent{Object: tt.child}, q)
			g.Expect(drain(q)).To(Equal(tt.want), "delete")
			h.Generic(t.Context(), event.GenericEvent{Object: tt.child}, q)
			g.Expect(drain(q)).To(Equal(tt.want), "generic")
		})
	}
}

func TestEnqueueOwnerTellsBothOwnersOfAChildThatChangesHands(t *testing.T) {
	g := NewWithT(t)
	before := set(t, widget("apps", "old", "uid-old"), configMap("other", "c", ""))
	after := before.DeepCopyObject().(client.Object)
	g.Expect(ownership.Release(widget("apps", "old", "uid-old"), after)).To(BeTrue())
	set(t, widget("apps", "new", "uid-new"), after)

	h := ownership.EnqueueOwner(newTestCluster(testMapper()), &testtypes.Widget{})
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Update(t.Context(), event.UpdateEvent{ObjectOld: before, ObjectNew: after}, q)
	g.Expect(drain(q)).To(ConsistOf(request("apps", "old"), request("apps", "new")))
}

// unknownType is a client.Object that no scheme knows.
type unknownType struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (u *unknownType) DeepCopyObject() runtime.Object {
	c := *u
	return &c
}
