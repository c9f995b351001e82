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

// Command floor is the floor of the scale benchmark, not an example to copy: a Cluster operator
// written with controller-runtime alone, which does the same work as the example operator
// (cmd/main.go) with the least machinery, so that the benchmark can tell what tenon costs.
//
// It caches the same objects, typed and selected the same way (the children by their
// managed-by label, the one DNS Secret; managedFields dropped from Clusters and the Secret,
// kept on the children as a plain operator keeps them), creates and updates the same children
// (internal/desired) with controllerutil.CreateOrPatch, keeps the same DNS record, writes the
// same status with a merge patch when it changed, and records one Event when a Cluster
// becomes Ready. It reads its own writes (controller-runtime's read-your-writes consistency) and
// sends patches only, as the example operator's RBAC allows (no update verb).
//
// What it leaves out is what tenon adds: crash safety of the DNS record's create, adoption
// checks, field ownership, condition Events for every transition, the tenon_condition metrics,
// fencing. It links tenon's conditions package only through the API types' condition names.
//
// The lab's chaos.TestScale runs it instead of the manager with -chaos.operator=floor; it takes the
// manager's flags that TestScale passes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
)

// The names the example operator uses, so that the floor's children and status read the same.
const (
	name      = "cluster-floor"
	finalizer = "apps.tenon.dev/cleanup"
	tokenKey  = "token"
	pollAfter = 2 * time.Second
)

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `The address the metrics endpoint binds to; "0" disables it.`)
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", "0", `The address the probe endpoint binds to; "0" disables it.`)
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "0", `The address pprof is served at; "0" disables it.`)
	flag.StringVar(&o.dnsEndpoint, "dns-endpoint", "", "Base URL of the DNS provider's API.")
	flag.StringVar(&o.dnsSecret, "dns-credentials", "cluster-operator-system/dns-credentials", "The Secret with the DNS provider's token, as namespace/name.")
	flag.StringVar(&o.directoryNamespace, "directory-namespace", "cluster-directory", "The namespace of the Clusters' directory entries.")
	flag.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "How many Clusters are reconciled at once.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type options struct {
	metricsAddr, probeAddr, pprofAddr string
	dnsEndpoint, dnsSecret            string
	directoryNamespace                string
	maxConcurrentReconciles           int
}

func run(o options) error {
	ns, secretName, ok := strings.Cut(o.dnsSecret, "/")
	if o.dnsEndpoint == "" || !ok {
		return errors.New("--dns-endpoint and --dns-credentials=namespace/name are required")
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), appsv1alpha1.AddToScheme(scheme)); err != nil {
		return err
	}
	managed := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy})}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.probeAddr,
		PprofBindAddress:       o.pprofAddr,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&appsv1alpha1.Cluster{}: {Transform: cache.TransformStripManagedFields()},
			&corev1.ConfigMap{}:     managed,
			&corev1.Service{}:       managed,
			&appsv1.StatefulSet{}:   managed,
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{ns: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", secretName),
				Transform:  cache.TransformStripManagedFields(),
			},
		}},
		Client: client.Options{Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}},
	})
	if err != nil {
		return err
	}
	r := &reconciler{Client: mgr.GetClient(), recorder: mgr.GetEventRecorder(name), directory: o.directoryNamespace,
		endpoint: o.dnsEndpoint, secret: client.ObjectKey{Namespace: ns, Name: secretName}, http: &http.Client{Timeout: 10 * time.Second}}
	err = ctrl.NewControllerManagedBy(mgr).Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.maxConcurrentReconciles}).
		For(&appsv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).Owns(&corev1.Service{}).Owns(&appsv1.StatefulSet{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.allClusters)).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

type reconciler struct {
	client.Client
	recorder  events.EventRecorder
	directory string
	endpoint  string
	secret    client.ObjectKey
	http      *http.Client
}

func (r *reconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	var list appsv1alpha1.ClusterList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &appsv1alpha1.Cluster{}
	if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	dns, err := r.dns(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.cleanup(ctx, cluster, dns)
	}
	if !controllerutil.ContainsFinalizer(cluster, finalizer) {
		base := cluster.DeepCopy()
		controllerutil.AddFinalizer(cluster, finalizer)
		if err := r.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
	}
	read := cluster.DeepCopy()
	before := &read.Status
	result, err := r.children(ctx, cluster, dns)
	if err != nil {
		return ctrl.Result{}, err
	}
	if equality.Semantic.DeepEqual(before, &cluster.Status) {
		return result, nil
	}
	wasReady := meta.IsStatusConditionTrue(before.Conditions, "Ready")
	if err := r.Status().Patch(ctx, cluster, client.MergeFromWithOptions(read, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, err
	}
	if !wasReady && meta.IsStatusConditionTrue(cluster.Status.Conditions, "Ready") {
		r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "%s resolves to the cluster", cluster.Spec.DNSName)
	}
	return result, nil
}

// children creates or updates the children and the DNS record and sets the status.
func (r *reconciler) children(ctx context.Context, cluster *appsv1alpha1.Cluster, dns *clouddns.Client) (ctrl.Result, error) {
	config, entry := desired.ConfigMap(cluster), desired.DirectoryEntry(cluster, r.directory)
	svc, peers, sts := desired.Service(cluster), desired.PeerService(cluster), desired.StatefulSet(cluster)
	for _, cm := range []*corev1.ConfigMap{config, entry} {
		data, owned := cm.Data, cm.Namespace == cluster.Namespace
		if err := r.createOrUpdate(ctx, cluster, cm, owned, func() { cm.Data = data }); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, s := range []*corev1.Service{svc, peers} {
		spec := s.Spec
		if err := r.createOrUpdate(ctx, cluster, s, true, func() {
			s.Spec.Selector, s.Spec.Ports, s.Spec.PublishNotReadyAddresses = spec.Selector, spec.Ports, spec.PublishNotReadyAddresses
			if s.ResourceVersion == "" {
				s.Spec.ClusterIP = spec.ClusterIP
			}
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	spec := sts.Spec
	if err := r.createOrUpdate(ctx, cluster, sts, true, func() {
		if sts.ResourceVersion == "" {
			sts.Spec = spec
			return
		}
		sts.Spec.Replicas = spec.Replicas
		sts.Spec.Template.Spec.Containers[0].Image = spec.Template.Spec.Containers[0].Image
	}); err != nil {
		return ctrl.Result{}, err
	}

	gen := cluster.Generation
	set := func(t string, ok bool, reason, message string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: gen})
	}
	set(string(appsv1alpha1.ConfigReady), true, "Applied", "config map and directory entry applied")
	ready := sts.Status.ObservedGeneration >= sts.Generation && sts.Status.ReadyReplicas >= cluster.Spec.Replicas &&
		sts.Status.UpdatedReplicas >= cluster.Spec.Replicas && sts.Status.CurrentRevision == sts.Status.UpdateRevision
	set(string(appsv1alpha1.WorkloadReady), ready, map[bool]string{true: "ReplicasReady", false: "RollingOut"}[ready],
		fmt.Sprintf("%d of %d replicas ready", sts.Status.ReadyReplicas, cluster.Spec.Replicas))
	cluster.Status.ReadyReplicas = sts.Status.ReadyReplicas

	result, dnsReady, err := r.record(ctx, cluster, dns, svc.Spec.ClusterIP)
	if err != nil {
		return ctrl.Result{}, err
	}
	all := ready && dnsReady
	set("Ready", all, map[bool]string{true: "Ready", false: "NotReady"}[all], "config, workload and DNS record")
	cluster.Status.ObservedGeneration = gen
	return result, nil
}

// createOrUpdate creates obj or patches the live one with mutate, owned by cluster through a
// controller reference when owned is set.
func (r *reconciler) createOrUpdate(ctx context.Context, cluster *appsv1alpha1.Cluster, obj client.Object, owned bool, mutate func()) error {
	want := obj.GetLabels()
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, obj, func() error {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range want {
			labels[k] = v
		}
		obj.SetLabels(labels)
		mutate()
		if owned {
			return controllerutil.SetControllerReference(cluster, obj, r.Scheme())
		}
		return nil
	})
	return err
}

// record keeps the DNS record pointing at address and sets DNSReady and status.endpoint.
func (r *reconciler) record(ctx context.Context, cluster *appsv1alpha1.Cluster, dns *clouddns.Client, address string) (ctrl.Result, bool, error) {
	notReady := func(reason, message string) {
		cluster.Status.Endpoint = ""
		meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: string(appsv1alpha1.DNSReady), Status: metav1.ConditionFalse,
			Reason: reason, Message: message, ObservedGeneration: cluster.Generation})
	}
	if address == "" {
		notReady("WaitingForService", "waiting for the Service to get a cluster IP")
		return ctrl.Result{}, false, nil
	}
	want := clouddns.Record{Name: cluster.Spec.DNSName, Type: "A", Value: address, TTL: 60, Owner: string(cluster.UID)}
	rec, err := dns.Get(ctx, want.Name)
	switch {
	case errors.Is(err, clouddns.ErrNotFound):
		if rec, err = dns.Create(ctx, want); err != nil {
			return ctrl.Result{}, false, err
		}
	case err != nil:
		return ctrl.Result{}, false, err
	case rec.Owner != want.Owner:
		notReady("NameTaken", "the DNS name belongs to another owner")
		return ctrl.Result{}, false, nil
	case rec.Value != want.Value || rec.TTL != want.TTL:
		if rec, err = dns.Put(ctx, want); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if rec.Status != clouddns.StatusInSync {
		notReady("NotReady", "record "+want.Name+" is "+rec.Status)
		return ctrl.Result{RequeueAfter: pollAfter}, false, nil
	}
	cluster.Status.Endpoint = want.Name
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: string(appsv1alpha1.DNSReady), Status: metav1.ConditionTrue,
		Reason: "Available", Message: want.Name + " resolves to " + address, ObservedGeneration: cluster.Generation})
	return ctrl.Result{}, true, nil
}

// cleanup deletes the DNS record (unless the Cluster retains it) and the directory entry, then
// removes the finalizer.
func (r *reconciler) cleanup(ctx context.Context, cluster *appsv1alpha1.Cluster, dns *clouddns.Client) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, finalizer) {
		return ctrl.Result{}, nil
	}
	if cluster.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyRetain {
		rec, err := dns.Get(ctx, cluster.Spec.DNSName)
		switch {
		case errors.Is(err, clouddns.ErrNotFound):
		case err != nil:
			return ctrl.Result{}, err
		case rec.Owner != string(cluster.UID):
		default:
			if rec.Status != clouddns.StatusDeleting {
				if _, err := dns.Delete(ctx, rec.Name); err != nil && !errors.Is(err, clouddns.ErrNotFound) {
					return ctrl.Result{}, err
				}
			}
			if _, err := dns.Get(ctx, rec.Name); !errors.Is(err, clouddns.ErrNotFound) {
				return ctrl.Result{RequeueAfter: pollAfter}, nil // withdrawn, not gone yet
			}
		}
	}
	entry := desired.DirectoryEntry(cluster, r.directory)
	if err := r.Delete(ctx, entry); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	base := cluster.DeepCopy()
	controllerutil.RemoveFinalizer(cluster, finalizer)
	return ctrl.Result{}, r.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// dns returns a client for the DNS API with the token of the Secret.
func (r *reconciler) dns(ctx context.Context) (*clouddns.Client, error) {
	var secret corev1.Secret
	if err := r.Get(ctx, r.secret, &secret); err != nil {
		return nil, fmt.Errorf("failed to read the DNS credentials: %w", err)
	}
	return &clouddns.Client{BaseURL: r.endpoint, Token: string(secret.Data[tokenKey]), HTTPClient: r.http}, nil
}
