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

package sharding

import (
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// recordingLW is a ListerWatcher that records the shard selector of every request and hands
// out fake watches.
type recordingLW struct {
	mu        sync.Mutex
	selectors []string
	watches   []*watch.FakeWatcher
}

func (l *recordingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.selectors = append(l.selectors, "list "+opts.ShardSelector)
	return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "100"}}, nil
}

func (l *recordingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.selectors = append(l.selectors, "watch "+opts.ShardSelector)
	w := watch.NewFake()
	l.watches = append(l.watches, w)
	return w, nil
}

// selectedListWatch returns the ListerWatcher that r.SelectCache wraps around inner for
// ConfigMaps.
func selectedListWatch(t *testing.T, r *Ranges, inner toolscache.ListerWatcher) toolscache.ListerWatcherWithContext {
	t.Helper()
	var got toolscache.ListerWatcher
	// The constructor SelectCache wraps captures what it is given.
	capture := &cache.Options{NewInformer: func(lw toolscache.ListerWatcher, _ runtime.Object, _ time.Duration, _ toolscache.Indexers) toolscache.SharedIndexInformer {
		got = lw
		return nil
	}}
	if err := r.SelectCache(capture, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	capture.NewInformer(inner, &corev1.ConfigMap{}, 0, nil)
	lw, ok := got.(toolscache.ListerWatcherWithContext)
	if !ok || got == inner {
		t.Fatalf("SelectCache did not wrap the ConfigMaps' ListerWatcher: %T", got)
	}
	return lw
}

// In client-go v0.37's default WatchList mode the reflector never lists: it opens a watch with
// sendInitialEvents=true, and when that watch ends without an error (the API server closes
// every watch after its timeoutSeconds, or a 429 / connection refused made it back off) it
// watches again from its last resourceVersion, with sendInitialEvents unset. If the shard's
// slices changed in between, that plain watch must not run with the new selector: the objects
// of a slice taken that did not change since that resourceVersion would never reach the cache
// (and so never be reconciled) until the next change of the selector. Expected: the plain watch
// is refused with a 410 Expired, as it is in the list-then-watch mode, so the reflector streams
// the initial events again with the new selector.
// (Found by an attack: rangeListWatch remembered only the selector of its last List, which the
// WatchList mode never calls.)
func TestAttackRangesRewatchAfterAWatchListMustNotSkipTheObjectsOfASliceTaken(t *testing.T) {
	ctx := t.Context()
	r, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{Namespace: "ns", Slices: 8})
	if err != nil {
		t.Fatal(err)
	}
	inner := &recordingLW{}
	lw := selectedListWatch(t, r, inner)

	// The reflector's watch-list: initial events, then the bookmark; the watch goes on.
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	// The API server ends the watch at its timeout: the result channel closes without an error.
	inner.watches[0].Stop()
	for range w.ResultChan() {
	}
	// The shard takes slice 3 before the reflector watches again.
	r.state.take(3)
	r.state.publish(8)

	w2, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "100", AllowWatchBookmarks: true})
	if err == nil {
		w2.Stop()
		t.Fatalf("a plain watch from the watch-list's resourceVersion ran with the new selector %q (requests: %q): "+
			"the objects of slice 3 that did not change since resourceVersion 100 never reach the cache", r.Selector(), inner.selectors)
	}
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("the plain watch after the selector changed failed with %v, want 410 Expired (the reflector lists again only then)", err)
	}
}

// Passes: pins the list-then-watch mode: a watch from a list's resourceVersion after the
// selector changed is refused with 410 Expired.
func TestAttackRangesWatchAfterAListOfAnOldSelectorIsExpired(t *testing.T) {
	ctx := t.Context()
	r, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{Namespace: "ns", Slices: 8})
	if err != nil {
		t.Fatal(err)
	}
	inner := &recordingLW{}
	lw := selectedListWatch(t, r, inner)
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	r.state.take(3)
	r.state.publish(8)
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "100"}); !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch after a list of the old selector: %v, want 410 Expired", err)
	}
}

// shardLeaseFor returns a shard Lease of ring r held and just renewed by name.
func shardLeaseFor(name string, now time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{RingLabel: "r"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: ptr.To(metav1.NewMicroTime(now))},
	}
}

// A Lease that another tool created under the name of a slice Lease (r-slice-0 here, without
// the slice labels) is not the ring's: the shard cannot take slice 0, but that must not stop it
// from taking the other free slices. Expected: a pass of the only shard takes slices 1 to 7.
// (Found by an attack: a pass returned on the first slice's error, so one slice whose write
// fails on every pass, as here or for want of RBAC, stalled all those after it.)
func TestAttackRangesAForeignLeaseNamedLikeASliceDoesNotStopTheRing(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	foreign := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r-slice-0"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("some-other-tool")}}
	c := fake.NewClientBuilder().WithObjects(shardLeaseFor("s", now), foreign).Build()
	r, err := NewRanges(Shard{Ring: "r", Name: "s"}, RangeOptions{Namespace: "ns", Slices: 8})
	if err != nil {
		t.Fatal(err)
	}
	cl := &claimer{ranges: r, reader: c, writer: c}
	for range 3 {
		if err := cl.pass(ctx); err != nil {
			t.Logf("pass: %v", err)
		}
	}
	if got := r.Held(); len(got) != 7 {
		t.Fatalf("after three passes the only shard holds slices %v, want 1 to 7", got)
	}
	// The foreign Lease is left alone.
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), l); err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != "some-other-tool" {
		t.Fatalf("the foreign Lease changed: %v %v", err, l.Spec.HolderIdentity)
	}
}
