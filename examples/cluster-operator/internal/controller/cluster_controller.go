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
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/finalizer"
	"github.com/tenon-dev/tenon/ownership"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/sharding"
)

// Name is the controller's name: its field manager, Event source and metrics label.
const Name = "cluster-controller"

// FinalizerName is the finalizer that holds a Cluster until its DNS record and directory entry
// are gone.
const FinalizerName = "apps.tenon.dev/cleanup"

// CleanupTimeout is how long cleanup may take before a deleted Cluster is marked Stalled.
const CleanupTimeout = 15 * time.Minute

// ClusterReconciler reconciles a Cluster: its ConfigMap, Services and StatefulSet (owned through
// owner references, applied with server-side apply), its entry in the directory namespace
// (tracked with labels, deleted by the finalizer) and its DNS record at the DNS provider
// (created, polled until in sync, deleted by the finalizer).
type ClusterReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// APIReader reads from the API server, not from a cache: after a conflict, the status patch
	// reads the latest Cluster with it, which never lags behind the write that conflicted.
	// Optional: NewReconciler sets it; without it the Client reads the latest Cluster.
	APIReader client.Reader
	// Applier applies the children; create it with NewReconciler or patch.NewApplier.
	Applier *patch.Applier
	// Recorder records Events; optional.
	Recorder events.EventRecorder
	// DNS gives access to the DNS provider.
	DNS *dns.Provider
	// DirectoryNamespace is where each Cluster publishes its directory entry.
	DirectoryNamespace string
	// MaxConcurrentReconciles is how many Clusters are reconciled at once. Defaults to 1.
	MaxConcurrentReconciles int
	// Shard, when set, is the shard of a ring this controller runs as; see Options.Shard.
	Shard *sharding.Shard

	metrics   *observe.Metrics
	lifecycle *finalizer.Lifecycle[*appsv1alpha1.Cluster]
	// writer writes the Clusters back at the end of each reconcile.
	writer *patch.Writer
}

// Options are a ClusterReconciler's settings besides its manager and DNS provider.
type Options struct {
	// DirectoryNamespace is where each Cluster publishes its directory entry.
	DirectoryNamespace string
	// MaxConcurrentReconciles is how many Clusters are reconciled at once. Defaults to 1.
	MaxConcurrentReconciles int
	// History, when set, remembers the Clusters' status writes, so that a reconcile that read a
	// cache behind the last one merges onto that write and sends nothing it already sent. Set it
	// when the manager's client does not wait for its own writes (ClientOptions does); optional
	// otherwise.
	History *patch.History
	// Metrics, when set, exports the Clusters' conditions (tenon_condition).
	Metrics *observe.Metrics
	// ProgressInterval is the least time between two status writes of a Cluster that report
	// progress only (see Reconcile). Defaults to DefaultProgressInterval; negative writes every
	// change at once.
	ProgressInterval time.Duration
	// Shard, when set, makes the controller one shard of a ring (tenon's sharding package): it
	// reconciles only the Clusters assigned to the shard and hands a drained one over. Build
	// the manager with sharding.ForManager and ShardCache then.
	Shard *sharding.Shard
}

// DefaultProgressInterval is Options.ProgressInterval's default.
const DefaultProgressInterval = 5 * time.Second

// +kubebuilder:rbac:groups=apps.tenon.dev,resources=clusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps.tenon.dev,resources=clusters/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps.tenon.dev,resources=clusters/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// The controller never deletes a Service or a StatefulSet (the garbage collector does), but
// adopting an existing one sets its owner reference, and where the OwnerReferencesPermissionEnforcement
// admission plugin runs (OpenShift), any write other than a create that changes a child's
// ownerReferences needs delete on that child.
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=cluster-operator-system,resources=secrets,verbs=get;list;watch

// Reconcile brings a Cluster's children, DNS record and status in line with its spec.
//
// It is level-triggered: it reads the Cluster and its children as they are and computes every
// write from them, so it does not matter which event woke it up, and a reconcile of a Cluster
// that is already as desired sends no write at all.
//
// Status writes that report progress only are coalesced (patch.WriterOptions.ProgressInterval):
// a change that leaves Ready, Reconciling and Stalled (status and reason), observedGeneration
// and the endpoint as they are (a dependent condition or a replica count moving during a
// rollout), in a reconcile that returns no error, is written once ProgressInterval has passed
// since the Cluster's last status write, by a reconcile requeued for then. Every change kstatus,
// `kubectl wait` or a person needs at once is written at once. A rollout of many replicas thus
// costs a few status writes, not one per replica.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	cluster := &appsv1alpha1.Cluster{}
	if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.metrics.Forget("Cluster", req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	// The finalizer first: nothing external is created before it is in place, and a deleted
	// Cluster only runs its cleanup steps.
	if proceed, res, err := r.lifecycle.Reconcile(ctx, cluster); !proceed {
		return res, err
	}

	// Everything below changes cluster in memory; Finish, deferred, records the outcome
	// (requeue.Report), writes what changed (none when nothing did), then records Events and
	// metrics.
	helper, err := r.writer.NewHelper(cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { result, err = helper.Finish(ctx, cluster, result, err) }()

	var results requeue.Results
	results.Add(r.reconcileConfig(ctx, cluster))
	address, res, err := r.reconcileWorkload(ctx, cluster)
	results.Add(res, err)
	results.Add(r.reconcileDNS(ctx, cluster, address))

	ready := conditions.Summary(cluster, conditions.Ready, appsv1alpha1.DependentConditions())
	conditions.Set(cluster, ready)
	return results.Merge()
}

// ownedConditions are the conditions the reconciler writes: every one of the Cluster's but
// Deleting, which its finalizer's Lifecycle writes.
var ownedConditions = slices.DeleteFunc((&appsv1alpha1.Cluster{}).ConditionOrder(),
	func(t conditions.Type) bool { return t == conditions.Deleting })

// NewReconciler returns a ClusterReconciler for mgr, with an Applier that reads from the
// manager's cache, the finalizer lifecycle of a Cluster, built from the manager's client, API
// reader and Event recorder and from provider (its Fence included), and the Writer that ends each
// reconcile, built from the same and from opts.
func NewReconciler(mgr ctrl.Manager, provider *dns.Provider, opts Options) *ClusterReconciler {
	r := &ClusterReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		// The cache holds only the operator's labelled children: the Applier looks for an
		// unlabelled object of a child's name through the API reader before it adopts one.
		Applier:                 patch.NewApplier(mgr.GetClient(), Name, patch.ApplierOptions{APIReader: mgr.GetAPIReader()}),
		Recorder:                mgr.GetEventRecorder(Name),
		DNS:                     provider,
		DirectoryNamespace:      opts.DirectoryNamespace,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		Shard:                   opts.Shard,
		metrics:                 opts.Metrics,
	}
	r.lifecycle = r.newLifecycle()
	r.writer = patch.NewWriter(r.Client, patch.WriterOptions{
		APIReader:        r.APIReader,
		History:          opts.History,
		OwnedConditions:  ownedConditions,
		Recorder:         r.Recorder,
		Metrics:          opts.Metrics,
		ProgressInterval: progressInterval(opts.ProgressInterval),
		// A new endpoint is what clients of the Cluster wait for: never coalesced.
		WriteAtOnce: func(before, after client.Object) bool {
			return before.(*appsv1alpha1.Cluster).Status.Endpoint != after.(*appsv1alpha1.Cluster).Status.Endpoint
		},
	})
	return r
}

// CacheOptions limits the manager's cache to what the controller needs: its children, found by
// their managed-by label, and the one Secret with the DNS token. Besides memory, this is what lets
// the operator run with a Role for Secrets in its own namespace rather than cluster-wide.
//
// The cache also drops the managedFields of Clusters and of the Secret, which nothing in the
// operator reads (patch.Helper diffs the object itself). Of the children's, it keeps the
// operator's own entries (patch.KeepManagedFieldsOf): patch.Applier proves from them that an
// apply would change nothing, so that a restarted operator does not re-apply every child; the
// entries of the StatefulSet controller, the kubelet and people are dropped.
func CacheOptions(dnsSecret client.ObjectKey) cache.Options {
	managed := cache.ByObject{
		Label:     labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy}),
		Transform: patch.KeepManagedFieldsOf(Name),
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1alpha1.Cluster{}: {Transform: cache.TransformStripManagedFields()},
		&corev1.ConfigMap{}:     managed,
		&corev1.Service{}:       managed,
		&appsv1.StatefulSet{}:   managed,
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{dnsSecret.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", dnsSecret.Name),
			Transform:  cache.TransformStripManagedFields(),
		},
	}}
}

// ShardCache restricts opts, the cache options of CacheOptions, to the objects the sharder
// assigned to shard: Clusters, and the StatefulSets, Services and ConfigMaps they control (the
// ring's controlledResources), so that a shard's memory follows its share of the Clusters. The
// directory entries in directoryNamespace are tracked children, which the sharder never assigns
// to a shard: a selected cache would never hold them, and the Applier would re-apply them on
// every reconcile. ConfigMaps in directoryNamespace therefore stay cached whole, one per Cluster
// on every shard, and ConfigMaps take two informers, one for directoryNamespace and one for the
// rest.
func ShardCache(opts *cache.Options, shard sharding.Shard, directoryNamespace string) error {
	if directoryNamespace == "" {
		return errors.New("failed to select the shard's ConfigMaps: the directory namespace is empty; give --directory-namespace")
	}
	if err := shard.SelectCache(opts, &appsv1alpha1.Cluster{}, &appsv1.StatefulSet{}, &corev1.Service{}); err != nil {
		return err
	}
	for obj, entry := range opts.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			continue
		}
		if entry.Namespaces != nil || entry.Label == nil {
			return errors.New("failed to select the shard's ConfigMaps: their cache entry must select by label, in no namespaces of its own, as CacheOptions' does")
		}
		shardOnly, _ := shard.Selector().Requirements()
		entry.Namespaces = map[string]cache.Config{
			directoryNamespace:  {LabelSelector: entry.Label},
			cache.AllNamespaces: {LabelSelector: entry.Label.Add(shardOnly...)},
		}
		opts.ByObject[obj] = entry
		return nil
	}
	return errors.New("failed to select the shard's ConfigMaps: the cache options have no entry for them, as CacheOptions' do")
}

// ClientOptions configures the manager's client for the controller: reads from the cache wait
// until the cache has seen the writes this client made before them (controller-runtime's
// experimental read-your-writes consistency).
//
// Without it, a reconcile that follows another one closely (the StatefulSet's status changed a
// moment after the Cluster's status was written) can read the Cluster from a cache that has not
// seen that write yet. patch.Helper diffs against what was read, so a condition the stale copy
// does not have cannot be removed: a Cluster could end up Ready with a Reconciling condition
// left over from the reconcile before, which kstatus reads as InProgress for ever. The option
// is scoped per kind. It does not work correctly for a kind whose cache is configured with more
// than one namespace (cache.Options.DefaultNamespaces, or a ByObject entry's Namespaces, with
// several), which controller-runtime serves with an informer per namespace. A cache of all
// namespaces, the default, is one informer per kind and works: the manager's cache here holds
// every namespace for Clusters and their children, and a single one for Secrets. A shard's
// cache (ShardCache) holds ConfigMaps with two informers; nothing here relies on reading them
// back at once: patch.Applier sends its applies without read-your-writes and proves a no-op
// from its own last response, and the finalizer confirms with the API server that no directory
// entry is left.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}}
}

// newLifecycle returns the Cluster's finalizer lifecycle: delete the DNS record, then the tracked
// directory entry.
func (r *ClusterReconciler) newLifecycle() *finalizer.Lifecycle[*appsv1alpha1.Cluster] {
	return &finalizer.Lifecycle[*appsv1alpha1.Cluster]{
		Finalizer: FinalizerName,
		Client:    r.Client,
		Recorder:  r.Recorder,
		Steps: []finalizer.Step[*appsv1alpha1.Cluster]{
			// The record lives outside Kubernetes: spec.deletionPolicy Retain keeps it.
			r.dnsRecord("").Step(),
			// The cache finds the directory entries; the API reader confirms none is left
			// (a cache that has not seen one yet must not let the Cluster go without it).
			finalizer.TrackedChildren[*appsv1alpha1.Cluster](r.Client, []client.ObjectList{&corev1.ConfigMapList{}},
				ownership.UseIndex(true), ownership.APIReader(r.APIReader)),
		},
		Retain: func(cluster *appsv1alpha1.Cluster) bool {
			return cluster.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyRetain
		},
		Timeout:      CleanupTimeout,
		AllowRelease: true,
	}
}

// SetupWithManager registers the controller with mgr, wrapped so that conflicts are quiet
// requeues with backoff (see requeue.WithBackoff), and, with a Shard, so that it works on the
// shard's Clusters only and hands drained ones over (sharding.Shard.Reconciler).
func (r *ClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, ownership.IndexField, ownership.Index); err != nil {
		return err
	}
	// Spec changes, deletion, annotations (the finalizer's release annotation) and the cache's
	// periodic resync, a safety net; not the controller's own status writes.
	clusterEvents := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, resync)
	reconciler := reconcile.Reconciler(requeue.WithBackoff(r, requeue.BackoffOptions{Name: Name}))
	if r.Shard != nil {
		// The drain is a label change, which the predicates above drop.
		clusterEvents = r.Shard.Predicate(clusterEvents)
		sharded, err := r.Shard.Reconciler(mgr.GetClient(), &appsv1alpha1.Cluster{}, reconciler)
		if err != nil {
			return err
		}
		reconciler = sharded
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		For(&appsv1alpha1.Cluster{}, builder.WithPredicates(clusterEvents)).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		// ConfigMaps are owned by reference (same namespace) or tracked (directory namespace).
		Watches(&corev1.ConfigMap{}, ownership.EnqueueOwner(mgr, &appsv1alpha1.Cluster{})).
		// A fixed or rotated DNS token unblocks every Cluster.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.allClusters),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return client.ObjectKeyFromObject(o) == r.DNS.Secret
			}))).
		Complete(reconciler)
}

// allClusters maps an event to a request for every Cluster. A List from the cache fails only
// when the cache cannot serve it, as while the manager stops; the error is logged, and the
// cache's periodic resync (every ten hours by default) reconciles every Cluster again.
func (r *ClusterReconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	var list appsv1alpha1.ClusterList
	if err := r.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "failed to list the Clusters the DNS Secret unblocks")
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

// resync lets through the updates of the cache's periodic resync, in which the object has not
// changed at all (same resourceVersion), so that every Cluster is reconciled now and then even if
// an event was missed. Status writes change the resourceVersion and are not let through.
var resync = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// progressInterval returns Options.ProgressInterval d or its default, or 0 (every change written
// at once) when it is negative.
func progressInterval(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultProgressInterval
	case d < 0:
		return 0
	}
	return d
}
