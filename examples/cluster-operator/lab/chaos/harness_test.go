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

package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	mathrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/controller"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/desired"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/kubelet"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/testing/faults"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The operator's namespace (its Roles, the DNS credentials and the leader election lease) and
// the directory namespace every Cluster publishes an entry in, as in config/.
const (
	systemNamespace    = "cluster-operator-system"
	directoryNamespace = "cluster-directory"
	secretName         = "dns-credentials"
	dnsZone            = "chaos.example.com"
)

// world is what the scenarios share: the control plane, the DNS API, the simulated kubelet, the
// manager binary and the user it runs as, and the output of every operator process.
type world struct {
	sizes sizes
	seed  uint64
	admin client.Client

	dns    *clouddnstest.Server
	dnsURL string
	// dnsFailed counts the DNS API's 503 answers: the faults it injected.
	dnsFailed atomic.Int64
	token     string

	user    *testenv.User
	manager string
	// proxied records the writes of every proxy of the run, for the audit log's check.
	proxied writes
	// logs collects the output of every operator process of the run.
	logs *output

	// statusesScanned and tokenHits count the Cluster statuses and Event lists the audits
	// scanned for the DNS tokens, and the times they found one.
	statusesScanned atomic.Int64
	tokenHits       atomic.Int64
	// tokens are every DNS token of the run, the right one and wrong ones.
	tokens []string

	mu   sync.Mutex
	rand *mathrand.Rand
	// restarts are the periods in which kube-apiserver was stopped or warming up.
	restarts [][2]time.Time
}

// restarting records that kube-apiserver was stopped or warming up from start to end.
func (w *world) restarting(start, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.restarts = append(w.restarts, [2]time.Time{start, end})
}

// sentDuringRestart reports whether the write was sent or answered while kube-apiserver was
// stopping or starting, give or take a second.
func (w *world) sentDuringRestart(wr write) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.restarts {
		if !wr.End.Before(r[0].Add(-time.Second)) && !wr.Start.After(r[1].Add(time.Second)) {
			return true
		}
	}
	return false
}

// duringRestart reports whether a JSON log line of the operator was written while kube-apiserver
// was restarting, give or take the second its timestamp is rounded to.
func (w *world) duringRestart(line string) bool {
	_, rest, ok := strings.Cut(line, `"ts":"`)
	if !ok {
		return false
	}
	stamp, _, _ := strings.Cut(rest, `"`)
	ts, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.restarts {
		if !ts.Before(r[0].Add(-time.Second)) && !ts.After(r[1].Add(time.Second)) {
			return true
		}
	}
	return false
}

// tokenInStatus returns how often the audits found the DNS token in a Cluster's status.
func (w *world) tokenInStatus() int { return int(w.tokenHits.Load()) }

func newWorld(t *testing.T, seed uint64, s sizes) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{sizes: s, seed: seed, admin: env.Client(), token: rand.Text(), logs: &output{},
		rand: mathrand.New(mathrand.NewPCG(seed, seed^0x5eed))}

	for _, ns := range []string{systemNamespace, directoryNamespace} {
		if err := w.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("failed to create namespace %s: %v", ns, err)
		}
	}
	w.tokens = []string{w.token}
	w.setToken(t, w.token)

	propagation, replicaDelay := 500*time.Millisecond, 100*time.Millisecond
	if s.NoSimulatorDelays {
		propagation, replicaDelay = 0, 0
	}
	w.dns = clouddnstest.NewServer(clouddnstest.Options{Token: w.token, PropagationDelay: propagation, Seed: seed})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: rw}
		w.dns.ServeHTTP(sw, r)
		if sw.status == http.StatusServiceUnavailable {
			w.dnsFailed.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	w.dnsURL = srv.URL

	// The operator runs as a user bound to the generated ClusterRole and Roles, nothing else.
	w.user = operatorUser(t, "cluster-operator")
	w.manager = buildManager(t)
	// The in-process operator of the fault storm logs here too, so its output is scanned for
	// the token like the manager binary's.
	logger := zap.New(zap.WriteTo(w.logs.prefixed("in-process")))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go's own messages

	// The simulated kubelet makes the StatefulSets' replicas ready, one every 100ms (unless
	// NoSimulatorDelays).
	mgr := env.NewManager(t, ctrl.Options{})
	sim := &kubelet.Simulator{
		Client:       mgr.GetClient(),
		Selector:     labels.SelectorFromSet(labels.Set{desired.ManagedByLabel: desired.ManagedBy}),
		ReplicaDelay: replicaDelay,
	}
	if err := sim.SetupWithManager(mgr); err != nil {
		t.Fatalf("failed to set up the simulated kubelet: %v", err)
	}
	testenv.StartManager(t, mgr)
	return w
}

// intn returns a random number in [0, n) from the run's seeded source.
func (w *world) intn(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rand.IntN(n)
}

// between returns a random duration in [lo, hi).
func (w *world) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.intn(int(hi-lo)))
}

// setToken writes token into the DNS credentials Secret.
func (w *world) setToken(t *testing.T, token string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: systemNamespace}}
	if _, err := ctrl.CreateOrUpdate(t.Context(), w.admin, secret, func() error {
		secret.Data = map[string][]byte{dns.TokenKey: []byte(token)}
		return nil
	}); err != nil {
		t.Fatalf("failed to write the DNS credentials: %v", err)
	}
}

// namespace creates a namespace for a scenario.
func (w *world) namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := w.admin.Create(t.Context(), ns); err != nil {
		t.Fatalf("failed to create a namespace: %v", err)
	}
	return ns.Name
}

// newCluster returns a valid Cluster with a DNS name of its own.
func newCluster(namespace, name string, replicas int32) *appsv1alpha1.Cluster {
	return &appsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.ClusterSpec{
			Replicas: replicas,
			Version:  "1.4.2",
			DNSName:  clusterRecord(namespace, name),
			Config:   map[string]string{"motd": "hello from " + name},
		},
	}
}

// createClusters creates count Clusters named prefix-0, prefix-1, ... in namespace.
func (w *world) createClusters(t *testing.T, namespace, prefix string, count int, replicas int32) []string {
	t.Helper()
	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	w.createNamedClusters(t, namespace, names, replicas)
	return names
}

// createNamedClusters creates a Cluster of each name in namespace.
func (w *world) createNamedClusters(t *testing.T, namespace string, names []string, replicas int32) {
	t.Helper()
	for _, name := range names {
		c := newCluster(namespace, name, replicas)
		if err := w.admin.Create(t.Context(), c); err != nil {
			t.Fatalf("failed to create Cluster %s: %v", c.Name, err)
		}
	}
}

// converged reports whether every Cluster in namespaces is Ready for its current generation
// with every replica ready, and none is being deleted; it returns what is not, for messages.
func (w *world) converged(ctx context.Context, namespaces ...string) (bool, string, error) {
	var pending []string
	for _, ns := range namespaces {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for i := range list.Items {
			c := &list.Items[i]
			ready := conditions.IsReady(c) && c.Status.ObservedGeneration == c.Generation &&
				c.Status.ReadyReplicas == c.Spec.Replicas && c.DeletionTimestamp == nil
			if !ready {
				r := conditions.Get(c, conditions.Ready)
				why := "no Ready condition"
				if r != nil {
					why = fmt.Sprintf("Ready=%s %s: %s", r.Status, r.Reason, r.Message)
				}
				pending = append(pending, fmt.Sprintf("%s/%s (%s)", ns, c.Name, why))
			}
		}
	}
	if len(pending) > 3 {
		pending = append(pending[:3], fmt.Sprintf("and %d more", len(pending)-3))
	}
	return len(pending) == 0, strings.Join(pending, ", "), nil
}

// waitConverged waits until every Cluster in namespaces has converged and returns how long it
// took; it fails t when they have not within the run's timeout.
func (w *world) waitConverged(t *testing.T, namespaces ...string) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	err := pollEvery(t.Context(), w.sizes.Timeout, w.sizes.listInterval(), func(ctx context.Context) (bool, error) {
		ok, pending, err := w.converged(ctx, namespaces...)
		last = pending
		return ok, err
	})
	if err != nil {
		t.Fatalf("Clusters in %v did not converge within %s: %v; not ready: %s\n%s", namespaces, w.sizes.Timeout, err, last, w.logs.tail(40))
	}
	return time.Since(start)
}

// waitGone waits until namespace holds no Cluster and returns how long it took.
func (w *world) waitGone(t *testing.T, namespace string) time.Duration {
	t.Helper()
	start := time.Now()
	var left int
	err := pollEvery(t.Context(), w.sizes.Timeout, w.sizes.listInterval(), func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		left = len(list.Items)
		return left == 0, nil
	})
	if err != nil {
		t.Fatalf("%d Clusters of %s were not deleted within %s: %v\n%s", left, namespace, w.sizes.Timeout, err, w.logs.tail(40))
	}
	return time.Since(start)
}

// deleteAll deletes every Cluster in namespace.
//
// One DeleteCollection of 10,000 Clusters takes kube-apiserver longer than its request timeout (a
// minute), which ends the request with an error after it deleted some of them: deleteAll sends it
// again until every Cluster is being deleted.
func (w *world) deleteAll(t *testing.T, namespace string) {
	t.Helper()
	var last error
	err := pollEvery(t.Context(), w.sizes.Timeout, time.Second, func(ctx context.Context) (bool, error) {
		if err := w.admin.DeleteAllOf(ctx, &appsv1alpha1.Cluster{}, client.InNamespace(namespace)); err != nil {
			last = err
			t.Logf("deleting the Clusters of %s: %v; again", namespace, err)
		}
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind("ClusterList"))
		if err := w.admin.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return false, nil
		}
		for i := range list.Items {
			if list.Items[i].DeletionTimestamp == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("failed to delete the Clusters of %s: %v (last error: %v)", namespace, err, last)
	}
}

// poll calls cond every 200ms until it returns true, it fails, or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	return pollEvery(ctx, timeout, 200*time.Millisecond, cond)
}

// pollEvery calls cond every interval until it returns true, it fails, or timeout passes.
func pollEvery(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok && err == nil {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// audit is what the invariants found in a set of namespaces.
type audit struct {
	// Leaked counts DNS records, directory entries and owned children of Clusters that no
	// longer exist.
	Leaked int
	// Duplicated counts DNS records and children beyond the expected number per Cluster.
	Duplicated int
	// Missing counts the DNS records and children that a Ready Cluster lacks.
	Missing int
	// Wedged counts Clusters and namespaces still being deleted.
	Wedged int
	// Problems describes each finding.
	Problems []string
}

func (a *audit) add(field *int, format string, args ...any) {
	*field++
	if len(a.Problems) < 20 {
		a.Problems = append(a.Problems, fmt.Sprintf(format, args...))
	}
}

// expectedChildren is what a Cluster owns in its namespace, by kind: its ConfigMap, its client
// and peer Services and its StatefulSet.
var expectedChildren = map[string]int{"ConfigMap": 1, "Service": 2, "StatefulSet": 1}

// child is an object in a Cluster's namespace with the operator's labels.
type child struct {
	Kind, Namespace, Name string
	// Owner is the UID of its controller, empty when it has none.
	Owner string
}

// snapshot is what the audit reads: the Clusters of the audited namespaces, the DNS records of
// their zone, their directory entries and their children.
type snapshot struct {
	Namespaces []string
	Clusters   []appsv1alpha1.Cluster
	// Terminating lists the audited namespaces still being deleted.
	Terminating []string
	Records     []clouddns.Record
	// Entries are the directory entries of the audited namespaces: namespace "." name.
	Entries  []string
	Children []child
}

// check applies the invariants to a snapshot. With settled, Clusters and namespaces being
// deleted count as wedged, and children of Clusters that are gone as leaked; otherwise the
// garbage collector may still be at work.
func check(s snapshot, settled bool) audit {
	var a audit
	live := map[string]*appsv1alpha1.Cluster{} // by namespace/name
	byUID := map[string]*appsv1alpha1.Cluster{}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		live[c.Namespace+"/"+c.Name] = c
		byUID[string(c.UID)] = c
		if settled && c.DeletionTimestamp != nil {
			a.add(&a.Wedged, "Cluster %s/%s is still being deleted, finalizers %v", c.Namespace, c.Name, c.Finalizers)
		}
	}
	for _, ns := range s.Terminating {
		a.add(&a.Wedged, "namespace %s is still terminating", ns)
	}
	// complete reports whether a Cluster must have every record and child: it is Ready for its
	// current generation and not being deleted.
	complete := func(c *appsv1alpha1.Cluster) bool {
		return c.DeletionTimestamp == nil && conditions.IsReady(c) && c.Status.ObservedGeneration == c.Generation
	}

	// DNS records: exactly one per Ready Cluster, owned by it.
	records := map[string]int{} // by owner UID
	for _, rec := range s.Records {
		ns, name, ok := recordCluster(rec.Name)
		if !ok || !slices.Contains(s.Namespaces, ns) {
			continue
		}
		c := live[ns+"/"+name]
		switch {
		case c == nil:
			a.add(&a.Leaked, "DNS record %s (%s) outlived its Cluster", rec.Name, rec.Status)
		case rec.Owner != string(c.UID):
			a.add(&a.Leaked, "DNS record %s belongs to %s, a Cluster of that name that no longer exists, not to %s", rec.Name, rec.Owner, c.UID)
		}
		records[rec.Owner]++
	}

	// Directory entries, tracked by labels because the garbage collector cannot reach them.
	entries := map[string]int{}
	for _, e := range s.Entries {
		ns, name, _ := strings.Cut(e, ".")
		if live[ns+"/"+name] == nil {
			a.add(&a.Leaked, "directory entry %s outlived its Cluster", e)
		}
		entries[ns+"/"+name]++
	}

	// Owned children: collected by the garbage collector once their Cluster is gone.
	children := map[string]int{} // by owner UID and kind
	for _, o := range s.Children {
		if o.Owner == "" {
			a.add(&a.Leaked, "%s %s/%s has no owner", o.Kind, o.Namespace, o.Name)
			continue
		}
		children[o.Owner+"/"+o.Kind]++
		if byUID[o.Owner] == nil && settled {
			a.add(&a.Leaked, "%s %s/%s outlived its Cluster", o.Kind, o.Namespace, o.Name)
		}
	}

	for i := range s.Clusters {
		c := &s.Clusters[i]
		key, uid := c.Namespace+"/"+c.Name, string(c.UID)
		counts := map[string]int{"DNS record": records[uid], "directory entry": entries[key]}
		want := map[string]int{"DNS record": 1, "directory entry": 1}
		for kind, n := range expectedChildren {
			counts[kind], want[kind] = children[uid+"/"+kind], n
		}
		for _, kind := range slices.Sorted(maps.Keys(want)) {
			switch got := counts[kind]; {
			case got > want[kind]:
				a.add(&a.Duplicated, "Cluster %s has %d of %s, want %d", key, got, kind, want[kind])
			case got < want[kind] && complete(c):
				a.add(&a.Missing, "Ready Cluster %s has %d of %s, want %d", key, got, kind, want[kind])
			}
		}
	}
	return a
}

// audit reads a snapshot of namespaces and checks it; see check. It also scans the Clusters'
// statuses and the namespaces' Events for the DNS tokens.
func (w *world) audit(t *testing.T, settled bool, namespaces ...string) audit {
	t.Helper()
	ctx := t.Context()
	s := snapshot{Namespaces: namespaces, Records: w.dns.Records()}
	for _, ns := range namespaces {
		var list appsv1alpha1.ClusterList
		if err := w.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatalf("audit: failed to list Clusters: %v", err)
		}
		s.Clusters = append(s.Clusters, list.Items...)
		for i := range list.Items {
			w.scanForTokens(list.Items[i].Status)
		}
		if settled {
			var nsObj corev1.Namespace
			err := w.admin.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)
			if err == nil && nsObj.DeletionTimestamp != nil {
				s.Terminating = append(s.Terminating, ns)
			}
		}
		var coreEvents corev1.EventList
		var events eventsv1.EventList
		for _, l := range []client.ObjectList{&coreEvents, &events} {
			if err := w.admin.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatalf("audit: failed to list Events: %v", err)
			}
		}
		w.scanForTokens(coreEvents.Items)
		w.scanForTokens(events.Items)

		for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &corev1.ServiceList{}, &appsv1.StatefulSetList{}} {
			if err := w.admin.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{desired.ManagedByLabel: desired.ManagedBy}); err != nil {
				t.Fatalf("audit: failed to list children: %v", err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatalf("audit: %v", err)
			}
			kind := strings.TrimSuffix(fmt.Sprintf("%T", list)[strings.LastIndex(fmt.Sprintf("%T", list), ".")+1:], "List")
			for _, item := range items {
				o := item.(client.Object)
				c := child{Kind: kind, Namespace: ns, Name: o.GetName()}
				if owner := metav1.GetControllerOf(o); owner != nil {
					c.Owner = string(owner.UID)
				}
				s.Children = append(s.Children, c)
			}
		}
	}
	var entries corev1.ConfigMapList
	if err := w.admin.List(ctx, &entries, client.InNamespace(directoryNamespace)); err != nil {
		t.Fatalf("audit: failed to list directory entries: %v", err)
	}
	for _, e := range entries.Items {
		if ns, _, ok := strings.Cut(e.Name, "."); ok && slices.Contains(namespaces, ns) {
			s.Entries = append(s.Entries, e.Name)
		}
	}
	return check(s, settled)
}

// scanForTokens counts the times the DNS tokens of the run, as text or base64, appear in v
// encoded as JSON.
func (w *world) scanForTokens(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	w.statusesScanned.Add(1)
	w.tokenHits.Add(int64(w.countTokens(string(data))))
}

// countTokens counts the times the DNS tokens of the run, as text or base64, appear in s.
func (w *world) countTokens(s string) int {
	w.mu.Lock()
	tokens := slices.Clone(w.tokens)
	w.mu.Unlock()
	n := 0
	for _, tok := range tokens {
		n += strings.Count(s, tok) + strings.Count(s, base64.StdEncoding.EncodeToString([]byte(tok)))
	}
	return n
}

// clusterRecord returns the name of the DNS record of the Cluster namespace/name: its
// spec.dnsName. recordCluster reads it back.
func clusterRecord(namespace, name string) string {
	return fmt.Sprintf("%s.%s.%s", name, namespace, dnsZone)
}

// recordCluster returns the namespace and name of the Cluster a DNS record of this run names.
func recordCluster(record string) (namespace, name string, ok bool) {
	rest, ok := strings.CutSuffix(record, "."+dnsZone)
	if !ok {
		return "", "", false
	}
	name, namespace, ok = strings.Cut(rest, ".")
	return namespace, name, ok
}

// statusWriter remembers the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// inProcessOperator runs the operator's reconciler in this process, as cmd/main.go configures
// it, with its client wrapped by the fault plan, as a user of its own bound to the operator's
// roles (apart from the manager binary's, so that the audit log tells its writes apart). It
// returns what the scenario's result needs to check the audit log against the client's record.
func (w *world) inProcessOperator(t *testing.T, plan faults.Plan) *inProcess {
	t.Helper()
	user := operatorUser(t, "cluster-operator-in-process")
	secret := client.ObjectKey{Namespace: systemNamespace, Name: secretName}
	var calls *faults.Client
	mgr := user.NewManager(t, ctrl.Options{
		Cache:  controller.CacheOptions(secret),
		Client: controller.ClientOptions(),
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			calls, err = faults.Wrap(c, plan)
			return calls, err
		},
	})
	provider := &dns.Provider{Endpoint: w.dnsURL, Secret: secret, Reader: mgr.GetClient()}
	r := controller.NewReconciler(mgr, provider, controller.Options{DirectoryNamespace: directoryNamespace, MaxConcurrentReconciles: 8})
	if err := r.SetupWithManager(t.Context(), mgr); err != nil {
		t.Fatalf("failed to set up the operator: %v", err)
	}
	testenv.StartManager(t, mgr)
	return &inProcess{user: user.Name(), calls: calls}
}

// operatorUser creates a user called name bound to the operator's generated ClusterRole and
// Roles, and nothing else.
func operatorUser(t *testing.T, name string) *testenv.User {
	t.Helper()
	rbac := filepath.Join(moduleDir, "config", "rbac")
	return env.NewUser(t, name,
		testenv.RoleFiles{filepath.Join(rbac, "role.yaml"), filepath.Join(rbac, "leader_election_role.yaml")},
		testenv.RoleNamespace(systemNamespace))
}

// buildManager builds the manager binary, as make build does.
func buildManager(t *testing.T) string {
	t.Helper()
	return buildBinary(t, "manager", moduleDir, "./cmd")
}

// buildBinary builds the package pkg of the module in dir into a binary called name.
func buildBinary(t *testing.T, name, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("failed to build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// process is one run of the manager binary.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// startOperator starts the manager binary as replica name, talking to the API server through
// p, with the usual flags and extra.
func (w *world) startOperator(t *testing.T, name string, p *proxy, extra ...string) *process {
	t.Helper()
	return w.startOperatorWith(t, name, p.kubeconfig, nil, extra...)
}

// startOperatorWith starts the manager binary as replica name with kubeconfig, the environment
// variables env added to the test's, the usual flags and extra.
func (w *world) startOperatorWith(t *testing.T, name, kubeconfig string, env []string, extra ...string) *process {
	t.Helper()
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		"--dns-endpoint=" + w.dnsURL,
		"--dns-credentials=" + systemNamespace + "/" + secretName,
		"--directory-namespace=" + directoryNamespace,
		"--max-concurrent-reconciles=8",
	}, extra...)
	proc := &process{name: name, cmd: exec.Command(w.manager, args...), exited: make(chan struct{})}
	if env != nil {
		proc.cmd.Env = append(os.Environ(), env...)
	}
	out := w.logs.prefixed(name)
	proc.cmd.Stdout, proc.cmd.Stderr = out, out
	// Killed when the thread that started it exits, which normally means with the test process,
	// however that ends (t.Cleanup stops it otherwise).
	proc.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := proc.cmd.Start(); err != nil {
		t.Fatalf("failed to start the manager: %v", err)
	}
	go func() {
		proc.err = proc.cmd.Wait()
		close(proc.exited)
	}()
	t.Cleanup(func() { proc.stop(t) })
	return proc
}

// running reports whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop sends SIGTERM, as the kubelet does, and waits up to 10 seconds before it kills.
func (p *process) stop(t *testing.T) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		p.kill()
		t.Errorf("operator %s did not exit within 10s of SIGTERM and was killed", p.name)
	}
}

// output collects the output of processes; it is safe for concurrent use.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// tail returns the last n lines.
func (o *output) tail(n int) string {
	lines := strings.Split(strings.TrimRight(o.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "last operator output:\n" + strings.Join(lines, "\n")
}

// prefixed returns a writer that adds whole lines to o, each prefixed with name.
func (o *output) prefixed(name string) *lineWriter { return &lineWriter{o: o, prefix: name + " | "} }

type lineWriter struct {
	o      *output
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		_, _ = l.o.Write(append([]byte(l.prefix), l.buf[:i+1]...))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}
