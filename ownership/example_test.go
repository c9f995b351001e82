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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/ownership"
)

// newCluster returns a custom resource of kind Cluster.apps.example.com, as read from the API
// server (with a UID). A typed custom resource works the same, given a scheme that knows it.
func newCluster(namespace, name, uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps.example.com/v1alpha1")
	u.SetKind("Cluster")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetUID(types.UID(uid))
	return u
}

func ExampleSet() {
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource

	// A child in the owner's namespace gets a controller owner reference.
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}}
	mechanism, changed, err := ownership.Set(owner, config, clientgoscheme.Scheme)
	fmt.Println(mechanism, changed, err)
	ref := config.OwnerReferences[0]
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)

	// A child in another namespace is tracked instead.
	dashboard := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "shop-web-dashboard"}}
	mechanism, changed, err = ownership.Set(owner, dashboard, clientgoscheme.Scheme)
	fmt.Println(mechanism, changed, err)
	fmt.Println(dashboard.Labels[ownership.LabelOwnerUID])
	fmt.Println(dashboard.Annotations[ownership.AnnotationOwnerKind], dashboard.Annotations[ownership.AnnotationOwnerNamespace], dashboard.Annotations[ownership.AnnotationOwnerName])

	// Setting it again changes nothing: there is nothing to write.
	_, changed, _ = ownership.Set(owner, dashboard, clientgoscheme.Scheme)
	fmt.Println("changed again:", changed)

	// Output:
	// ControllerReference true <nil>
	// apps.example.com/v1alpha1 Cluster web true
	// TrackingLabels true <nil>
	// 0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21
	// Cluster.apps.example.com shop web
	// changed again: false
}

func ExampleSet_adoption() {
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	other := newCluster("shop", "api", "9d2e4b1a-7c3f-4e8d-b6a5-1f0c2d3e4a5b")

	// A Secret another Cluster controls, as read from the API server.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "vault", Name: "tls", UID: "5e6f"}}
	if _, _, err := ownership.Set(other, secret, clientgoscheme.Scheme); err != nil {
		fmt.Println(err)
	}

	// No adoption policy takes it.
	_, _, err := ownership.Set(owner, secret, clientgoscheme.Scheme, ownership.AdoptAlways)
	var refused *ownership.AdoptionError
	if errors.As(err, &refused) && refused.Owner != nil {
		fmt.Println("owned by", refused.Owner.Name)
		fmt.Println(err)
	}

	// An existing object nobody owns is adopted, unless the policy is Never.
	unowned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "admin", UID: "7a8b"}}
	_, _, err = ownership.Set(owner, unowned, clientgoscheme.Scheme, ownership.AdoptNever)
	fmt.Println(err)
	_, _, err = ownership.Set(owner, unowned, clientgoscheme.Scheme)
	fmt.Println(err, ownership.Owns(owner, unowned))

	// Output:
	// owned by api
	// Secret vault/tls is already controlled by Cluster.apps.example.com shop/api (uid 9d2e4b1a-7c3f-4e8d-b6a5-1f0c2d3e4a5b, through tracking labels)
	// refusing to adopt existing Secret shop/admin: the adoption policy is Never
	// <nil> true
}

// A controller branches on the AdoptionError: a child another owner controls is a clash for a
// person to resolve; a child nobody controls was refused by the controller's own policy.
func ExampleAdoptionError() {
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	rival := newCluster("shop", "api", "9d2e4b1a-7c3f-4e8d-b6a5-1f0c2d3e4a5b")
	taken := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls", UID: "5e6f"}}
	if _, _, err := ownership.Set(rival, taken, clientgoscheme.Scheme); err != nil {
		fmt.Println(err)
	}
	unowned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "admin", UID: "7a8b"}}

	for _, child := range []*corev1.Secret{taken, unowned} {
		_, _, err := ownership.Set(owner, child, clientgoscheme.Scheme, ownership.AdoptNever)
		var refused *ownership.AdoptionError
		switch {
		case errors.As(err, &refused) && refused.Owner != nil:
			fmt.Printf("%s: controlled by %s through %s\n", child.Name, refused.Owner, refused.Owner.Mechanism)
		case errors.As(err, &refused):
			fmt.Printf("%s: not adopted under the policy %s\n", child.Name, refused.Policy)
		}
	}

	// Output:
	// tls: controlled by Cluster.apps.example.com shop/api through ControllerReference
	// admin: not adopted under the policy Never
}

func ExampleSet_serverSideApply() {
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config", UID: "3c4d", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: "legacy", UID: "1a2b",
		}}},
	}).Build()

	// With server-side apply the desired child is built from scratch, so Set cannot see who
	// owns the object on the server: pass it with Existing. (tenon's patch.OwnedBy reads the
	// live object, sets the owner and applies in one call.)
	desired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}, Data: map[string]string{"port": "8080"}}
	var live corev1.ConfigMap
	if err := client.IgnoreNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(desired), &live)); err != nil {
		fmt.Println(err)
	}
	_, _, err := ownership.Set(owner, desired, c.Scheme(), ownership.Existing{Object: &live})
	fmt.Println(err)

	// Output:
	// refusing to adopt existing ConfigMap shop/web-config: it has owner references to Deployment.apps legacy, and the adoption policy is IfUnowned
}

func ExampleOwnerOf() {
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	role := &unstructured.Unstructured{}
	role.SetAPIVersion("rbac.authorization.k8s.io/v1")
	role.SetKind("ClusterRole")
	role.SetName("shop-web-reader")
	if _, _, err := ownership.Set(owner, role, clientgoscheme.Scheme); err != nil {
		fmt.Println(err)
	}

	current, ok := ownership.OwnerOf(role)
	fmt.Println(ok, current.Mechanism, current)

	// A new Cluster with the same name does not own what the old one left.
	recreated := newCluster("shop", "web", "e1d2c3b4-a5f6-4789-8abc-def012345678")
	fmt.Println(ownership.Owns(owner, role), ownership.Owns(recreated, role))

	// Output:
	// true TrackingLabels Cluster.apps.example.com shop/web
	// true false
}

func ExamplePrune() {
	ctx := context.Background()
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	c := fake.NewClientBuilder().Build()

	// The owner had five shards; it now wants two.
	for i := range 5 {
		shard := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-shard-%d", i)}}
		if _, _, err := ownership.Set(owner, shard, c.Scheme()); err != nil {
			fmt.Println(err)
		}
		if err := c.Create(ctx, shard); err != nil {
			fmt.Println(err)
		}
	}
	keep := []client.ObjectKey{{Namespace: "shop", Name: "web-shard-0"}, {Namespace: "shop", Name: "web-shard-1"}}

	var kept corev1.ConfigMapList
	deleted, err := ownership.Prune(ctx, c, owner, &kept, keep)
	for _, d := range deleted {
		fmt.Println("deleted", d.GetName())
	}
	fmt.Println("kept", len(kept.Items), err)

	// Output:
	// deleted web-shard-2
	// deleted web-shard-3
	// deleted web-shard-4
	// kept 2 <nil>
}

func ExampleListChildren() {
	ctx := context.Background()
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	var objs []client.Object
	for _, namespace := range []string{"shop", "monitoring", "logging"} {
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shop-web"}}
		if _, _, err := ownership.Set(owner, child, clientgoscheme.Scheme); err != nil {
			fmt.Println(err)
		}
		objs = append(objs, child)
	}
	objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "unrelated"}})

	// A manager registers the index with mgr.GetFieldIndexer().IndexField; the fake client
	// takes it in its builder.
	c := fake.NewClientBuilder().WithObjects(objs...).
		WithIndex(&corev1.ConfigMap{}, ownership.IndexField, ownership.Index).
		Build()

	var children corev1.ConfigMapList
	if err := ownership.ListChildren(ctx, c, owner, &children, ownership.UseIndex(true)); err != nil {
		fmt.Println(err)
	}
	for _, child := range children.Items {
		m, _ := ownership.OwnerOf(&child)
		fmt.Println(child.Namespace, child.Name, m.Mechanism)
	}

	// Output:
	// logging shop-web TrackingLabels
	// monitoring shop-web TrackingLabels
	// shop shop-web ControllerReference
}

func ExampleDeleteTracked() {
	ctx := context.Background()
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	local := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}}
	remote := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "shop-web-dashboard"}}
	for _, child := range []client.Object{local, remote} {
		if _, _, err := ownership.Set(owner, child, clientgoscheme.Scheme); err != nil {
			fmt.Println(err)
		}
	}
	c := fake.NewClientBuilder().WithObjects(local, remote).Build()
	kinds := []client.ObjectList{&corev1.ConfigMapList{}}

	// In the owner's finalizer: the first pass deletes the tracked child and reports it as
	// remaining until a listing no longer finds it.
	remaining, err := ownership.DeleteTracked(ctx, c, owner, kinds)
	fmt.Println("remaining:", remaining, err)
	remaining, err = ownership.DeleteTracked(ctx, c, owner, kinds)
	fmt.Println("remaining:", remaining, err)

	// The child with an owner reference is left to the garbage collector.
	fmt.Println(c.Get(ctx, client.ObjectKeyFromObject(local), &corev1.ConfigMap{}))

	// Output:
	// remaining: 1 <nil>
	// remaining: 0 <nil>
	// <nil>
}

// exampleManager stands in for a controller's manager in the examples, with what EnqueueOwner
// uses of one: a scheme, a RESTMapper and a cache (here one that holds every namespace and finds
// nothing). The rest of cluster.Cluster is not used.
type exampleManager struct {
	cluster.Cluster
	mapper meta.RESTMapper
}

func (m exampleManager) GetScheme() *runtime.Scheme     { return clientgoscheme.Scheme }
func (m exampleManager) GetRESTMapper() meta.RESTMapper { return m.mapper }
func (m exampleManager) GetCache() cache.Cache          { return &informertest.FakeInformers{} }

func ExampleEnqueueOwner() {
	// In a controller: builder.Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(mgr, &v1alpha1.Cluster{})).
	owner := newCluster("shop", "web", "0b7f6c9e-2f5d-4c1a-9a43-5d1f0e8a7c21") // a Cluster custom resource
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(owner.GroupVersionKind(), meta.RESTScopeNamespace)
	mgr := exampleManager{mapper: mapper}
	h := ownership.EnqueueOwner(mgr, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.example.com/v1alpha1", "kind": "Cluster",
	}})

	// A ConfigMap in another namespace, tracked by the Cluster, changes.
	dashboard := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "shop-web-dashboard"}}
	if _, _, err := ownership.Set(owner, dashboard, clientgoscheme.Scheme); err != nil {
		fmt.Println(err)
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: dashboard, ObjectNew: dashboard}, q)

	req, _ := q.Get()
	fmt.Println("reconcile", req)

	// Output:
	// reconcile shop/web
}
