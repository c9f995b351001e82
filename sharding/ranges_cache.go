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
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SelectCache makes the cache that controller-runtime builds from opts list and watch the
// objects of objs's kinds with the shard selector of the slices this shard holds (see
// [Ranges.Selector]), which the API server applies when its ShardedListAndWatch feature gate is
// on. When the shard takes or gives up a slice, every informer of those kinds ends its watch and
// lists again with the new selector: the objects of a slice taken arrive as adds, those of a
// slice given up leave as deletes, a few seconds later (client-go's reflector backs off between
// lists).
//
// objs are typed objects, or unstructured or metav1.PartialObjectMetadata ones with their
// apiVersion and kind set. Select the main kind only: the API server hashes each object's own
// uid, so a child lands in another slice than its owner; cache children whole. The selection
// saves memory only: the reconciler that [Ranges.Reconciler] wraps checks every object's slice
// itself, so a server without the feature gate, which ignores shard selectors and sends every
// object, breaks nothing but the savings.
//
// SelectCache sets opts.NewInformer, wrapping one that was set. It returns an error when opts
// is nil or an object has no kind it can read.
func (r *Ranges) SelectCache(opts *cache.Options, objs ...client.Object) error {
	if opts == nil {
		return fmt.Errorf("failed to select the cache of shard %s: the cache options are nil", r.shard)
	}
	var types []reflect.Type
	var kinds []schema.GroupVersionKind
	for _, obj := range objs {
		switch obj.(type) {
		case nil:
			return fmt.Errorf("failed to select the cache of shard %s: an object is nil", r.shard)
		case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
			gvk := obj.GetObjectKind().GroupVersionKind()
			if gvk.Kind == "" || gvk.Version == "" {
				return fmt.Errorf("failed to select the cache of shard %s: the %T has no apiVersion and kind", r.shard, obj)
			}
			kinds = append(kinds, gvk)
		default:
			types = append(types, reflect.TypeOf(obj))
		}
	}
	selected := func(obj runtime.Object) bool {
		switch obj.(type) {
		case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
			gvk := obj.GetObjectKind().GroupVersionKind()
			for _, k := range kinds {
				if k == gvk {
					return true
				}
			}
			return false
		}
		t := reflect.TypeOf(obj)
		for _, s := range types {
			if s == t {
				return true
			}
		}
		return false
	}
	next := opts.NewInformer
	if next == nil {
		next = toolscache.NewSharedIndexInformer
	}
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if selected(obj) {
			lw = &rangeListWatch{state: r.state, inner: toolscache.ToListerWatcherWithContext(lw)}
		}
		return next(lw, obj, resync, indexers)
	}
	return nil
}

// rangeListWatch lists and watches with the shard selector of the slices held, and ends its
// watches when the selector changes.
type rangeListWatch struct {
	state *rangeState
	inner toolscache.ListerWatcherWithContext

	mu sync.Mutex
	// listed is the change channel of the selector the last list (or WatchList) used: a watch
	// that follows it must use the same selector, or objects that entered the selection
	// unchanged would never arrive.
	listed chan struct{}
}

var (
	_ toolscache.ListerWatcher            = (*rangeListWatch)(nil)
	_ toolscache.ListerWatcherWithContext = (*rangeListWatch)(nil)
)

// current returns the selector of the slices held and the channel closed when it changes.
func (s *rangeState) current() (string, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selector, s.changed
}

// List implements toolscache.Lister.
func (l *rangeListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// Watch implements toolscache.Watcher.
func (l *rangeListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext implements toolscache.ListerWithContext.
func (l *rangeListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	sel, changed := l.state.current()
	opts.ShardSelector = sel
	list, err := l.inner.ListWithContext(ctx, opts)
	if err == nil {
		l.mu.Lock()
		l.listed = changed
		l.mu.Unlock()
	}
	return list, err
}

// WatchWithContext implements toolscache.WatcherWithContext.
func (l *rangeListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	sel, changed := l.state.current()
	l.mu.Lock()
	if ptrTrue(opts.SendInitialEvents) {
		// A watch that lists first (WatchList): later watches from its resourceVersion must
		// keep its selector.
		l.listed = changed
	} else if l.listed != nil && l.listed != changed {
		// A watch from a list's resourceVersion, or a watch's: objects that entered the
		// selection since, unchanged, would never arrive. The reflector lists again.
		l.mu.Unlock()
		return nil, apierrors.NewResourceExpired("the shard's slices changed since the last list")
	}
	l.mu.Unlock()
	opts.ShardSelector = sel
	w, err := l.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newRangeWatch(w, changed), nil
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// rangeWatch passes a watch's events on until the selector changes, then ends with an
// "expired" error, after which the reflector lists again.
type rangeWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newRangeWatch(inner watch.Interface, changed <-chan struct{}) *rangeWatch {
	w := &rangeWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go w.run(changed)
	return w
}

func (w *rangeWatch) run(changed <-chan struct{}) {
	defer close(w.out)
	defer w.inner.Stop()
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-changed:
			status := apierrors.NewResourceExpired("the shard's slices changed").Status()
			select {
			case w.out <- watch.Event{Type: watch.Error, Object: &status}:
			case <-w.stop:
			}
			return
		case <-w.stop:
			return
		}
	}
}

// Stop implements watch.Interface.
func (w *rangeWatch) Stop() { w.once.Do(func() { close(w.stop) }) }

// ResultChan implements watch.Interface.
func (w *rangeWatch) ResultChan() <-chan watch.Event { return w.out }
