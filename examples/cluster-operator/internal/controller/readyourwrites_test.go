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

package controller_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// The manager's client, configured with controller.ClientOptions as cmd/main.go configures it,
// reads its own writes from the cache at once. Without the option the cache lags behind each
// write by the watch event's trip, and a reconcile that follows closely reads the Cluster as it
// was: this test then fails, with near certainty over twenty writes.
func TestTheOperatorsClientReadsItsOwnWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mgr := env.NewManager(t, ctrl.Options{Client: controller.ClientOptions()}, ns)
	testenv.StartManager(t, mgr)
	op := &operator{namespace: ns}
	cluster := op.newCluster("ryw")
	g.Expect(env.CreateAndWait(ctx, cluster, mgr.GetCache())).To(Succeed())
	c := mgr.GetClient()

	for i := range 20 {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		before := cluster.DeepCopy()
		cluster.Status.ReadyReplicas = int32(i + 1)
		g.Expect(c.Status().Patch(ctx, cluster, client.MergeFrom(before))).To(Succeed())
		written := cluster.ResourceVersion

		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster.ResourceVersion).To(Equal(written), "write %d: the read right after it sees it", i+1)
	}
}

// informerLog records the unstructured forms of kinds the operator's cache was asked about: each
// is an informer, a second copy of every object of its kind beside the typed one.
type informerLog struct {
	mu           sync.Mutex
	unstructured map[string]bool
}

func (l *informerLog) add(obj runtime.Object) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		l.mu.Lock()
		defer l.mu.Unlock()
		l.unstructured[o.GroupVersionKind().String()] = true
	case *unstructured.UnstructuredList:
		l.mu.Lock()
		defer l.mu.Unlock()
		l.unstructured[o.GroupVersionKind().String()] = true
	}
}

func (l *informerLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.unstructured))
}

// loggingCache is a cache that records in log what it is asked about.
type loggingCache struct {
	cache.Cache
	log *informerLog
}

func (c *loggingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	c.log.add(obj)
	return c.Cache.GetInformer(ctx, obj, opts...)
}

func (c *loggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.log.add(obj)
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c *loggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.log.add(list)
	return c.Cache.List(ctx, list, opts...)
}

// The operator's client reads its own writes (ClientOptions), and its Applier applies its
// children as unstructured objects: the Applier must not make the client start an informer of
// the unstructured form of each child kind, a second copy of every child that nothing reads.
func TestTheOperatorCachesEachKindOnce(t *testing.T) {
	g := NewWithT(t)
	log := &informerLog{unstructured: map[string]bool{}}
	op := startOperator(t, operatorOptions{newCache: func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
		c, err := cache.New(config, opts)
		return &loggingCache{Cache: c, log: log}, err
	}})
	cluster := op.newCluster("once")
	op.create(t, cluster)
	eventuallyReady(t, cluster)
	scale(t, cluster, 5)
	eventuallyReady(t, cluster)

	g.Expect(log.kinds()).To(BeEmpty(), "informers of the unstructured form of these kinds")
}
