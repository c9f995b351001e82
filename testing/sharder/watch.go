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

package sharder

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// placement is the outcome of the last pass that found an available shard: the shards' states
// and the hash ring the watches assign new objects by.
type placement struct {
	states map[string]ShardState
	ring   *ring
}

// setPlacement records the outcome of a pass; a nil ring (no shard available) stops the
// watches' assignments until a pass finds one.
func (s *Sharder) setPlacement(states map[string]ShardState, r *ring) {
	s.placementMu.Lock()
	defer s.placementMu.Unlock()
	s.placement = placement{states: states, ring: r}
	if r != nil {
		s.placedOnce.Do(func() { close(s.placed) })
	}
}

// currentPlacement returns the outcome of the last pass.
func (s *Sharder) currentPlacement() placement {
	s.placementMu.Lock()
	defer s.placementMu.Unlock()
	return s.placement
}

// watchWorkers is the number of writes the watches send at once: a pass labels one object after
// the other, but new objects appear faster than one write at a time on a busy API server.
const watchWorkers = 8

// seen is an object a watch delivered, to assign.
type seen struct {
	kind kind
	obj  *metav1.PartialObjectMetadata
}

// watchAll assigns, until ctx is done, every object of the ring's kinds that appears without a
// shard label (a new object, or one a shard let go of after a drain), as the reference sharder's
// webhook does at admission: one watch per kind and namespace, each with a selector on the
// absence of the shard label, and watchWorkers writers. It returns when every watch and writer
// has stopped.
func (s *Sharder) watchAll(ctx context.Context) {
	queue := make(chan seen, watchWorkers)
	var writers sync.WaitGroup
	for range watchWorkers {
		writers.Go(func() {
			for sn := range queue {
				s.assignSeen(ctx, sn)
			}
		})
	}
	var watches sync.WaitGroup
	for _, k := range s.kinds {
		for _, ns := range s.namespacesToRead() {
			watches.Go(func() { s.watchKind(ctx, k, ns, queue) })
		}
	}
	watches.Wait()
	close(queue)
	writers.Wait()
}

// watchKind watches the objects of kind k in ns without a shard label and queues each one it
// sees, until ctx is done. A watch that ends is opened again at once; one the API server refuses,
// after a wait that doubles from a sync period up to maxWatchBackoff, with the error logged at
// the first refusal and then at V(1). The passes assign whatever appeared meanwhile.
func (s *Sharder) watchKind(ctx context.Context, k kind, ns string, queue chan<- seen) {
	logger := log.FromContext(ctx).WithValues("ring", s.ring, "kind", k.gvk.Kind, "namespace", ns)
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		w, err := s.watcher.Watch(ctx, k.newList(), client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s.unassigned})
		if err == nil {
			backoff = 0
			s.queueEach(ctx, k, ns, w, queue)
			continue
		}
		if backoff == 0 {
			logger.Error(err, "Failed to watch unassigned objects, trying again later; the passes assign them meanwhile")
			backoff = s.syncPeriod
		} else {
			logger.V(1).Info("Failed to watch unassigned objects again", "error", err.Error(), "retryIn", backoff)
			backoff = min(2*backoff, maxWatchBackoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
}

// maxWatchBackoff bounds the wait before a refused watch is tried again.
const maxWatchBackoff = 30 * time.Second

// queueEach queues every object w delivers until w ends or ctx is done, and stops w.
func (s *Sharder) queueEach(ctx context.Context, k kind, ns string, w watch.Interface, queue chan<- seen) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			obj, ok := metadataOf(ev.Object)
			// A client that ignores the selector (controller-runtime's fake client) delivers
			// labelled objects too, which are the passes' to drain or move.
			if !ok || !inNamespace(ns, obj) || obj.Labels[s.shardLabel] != "" {
				continue
			}
			select {
			case queue <- seen{kind: k, obj: obj}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// assignSeen assigns an object a watch delivered by the last pass's ring, once a pass found an
// available shard; while none is available, it leaves the object to the passes.
func (s *Sharder) assignSeen(ctx context.Context, sn seen) {
	select {
	case <-s.placed:
	case <-ctx.Done():
		return
	}
	p := s.currentPlacement()
	if p.ring == nil {
		return
	}
	if err := s.assign(ctx, sn.kind, sn.obj, p.states, p.ring); err != nil && ctx.Err() == nil {
		log.FromContext(ctx).Error(err, "Failed to assign a new object, the next pass tries again", "ring", s.ring)
	}
}

// metadataOf returns the metadata of an object a watch delivered: the object itself from a
// metadata watch, the fields the sharder reads from a typed or unstructured one.
func metadataOf(o runtime.Object) (*metav1.PartialObjectMetadata, bool) {
	if pm, ok := o.(*metav1.PartialObjectMetadata); ok {
		return pm, true
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return nil, false
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace:       m.GetNamespace(),
		Name:            m.GetName(),
		UID:             m.GetUID(),
		ResourceVersion: m.GetResourceVersion(),
		Labels:          m.GetLabels(),
		OwnerReferences: m.GetOwnerReferences(),
	}}, true
}
