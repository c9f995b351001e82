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
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// listPageSize is the number of objects the sharder lists per request.
const listPageSize = 500

// assignKind drains, assigns or moves every object of kind k whose shard is not the one r wants.
func (s *Sharder) assignKind(ctx context.Context, k kind, states map[string]ShardState, r *ring) error {
	var errs []error
	err := s.eachObject(ctx, k, func(obj *metav1.PartialObjectMetadata) {
		errs = append(errs, s.assign(ctx, k, obj, states, r))
	})
	return errors.Join(append(errs, err)...)
}

// eachObject calls fn with every object of kind k in the sharder's namespaces, page by page.
func (s *Sharder) eachObject(ctx context.Context, k kind, fn func(*metav1.PartialObjectMetadata)) error {
	for _, ns := range s.namespacesToRead() {
		list := k.newList()
		for {
			if err := s.client.List(ctx, list, client.InNamespace(ns), client.Limit(listPageSize),
				client.Continue(list.Continue)); err != nil {
				return fmt.Errorf("failed to list %s in %s: %w", k.gvk.Kind, namespaceOrAll(ns), err)
			}
			for i := range list.Items {
				if inNamespace(ns, &list.Items[i]) {
					fn(&list.Items[i])
				}
			}
			if list.Continue == "" {
				break
			}
		}
	}
	return nil
}

// namespacesToRead returns the namespaces the sharder lists and watches one by one: its
// Namespaces, or all at once.
func (s *Sharder) namespacesToRead() []string {
	if len(s.namespaces) == 0 {
		return []string{metav1.NamespaceAll}
	}
	return s.namespaces
}

// inNamespace reports whether obj, from a list or watch of ns, is in ns: a list or watch of a
// cluster-scoped kind ignores the namespace, and its objects are in none.
func inNamespace(ns string, obj *metav1.PartialObjectMetadata) bool {
	return ns == metav1.NamespaceAll || obj.Namespace == ns
}

// newList returns an empty list of k's objects' metadata.
func (k kind) newList() *metav1.PartialObjectMetadataList {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	return list
}

// assign changes the labels of obj, of kind k, if its shard is not the one r wants:
//
//   - a main object on an available shard is drained, once: the drain label is added, the
//     ShardLabel kept;
//   - any other object (unassigned, on a shard that is not available, or controlled) is moved:
//     the shard label is set, any drain label removed.
//
// MoveWithoutDrain moves main objects instead of draining them.
func (s *Sharder) assign(ctx context.Context, k kind, obj *metav1.PartialObjectMetadata, states map[string]ShardState, r *ring) error {
	key, err := hashKey(k, obj)
	if err != nil || key == "" {
		return err
	}
	m := Move{Kind: k.gvk, Object: client.ObjectKeyFromObject(obj), Controlled: k.controlled,
		From: obj.Labels[s.shardLabel], To: r.shardFor(key)}
	if m.From == m.To {
		return nil
	}
	if m.From != "" {
		m.FromState = stateIn(states, m.From)
	}
	if !k.controlled && m.FromState.Available() && !s.moveWithoutDrain {
		if _, draining := obj.Labels[s.drainLabel]; draining {
			return nil
		}
		m.Drain = true
		return s.write(ctx, obj, m, map[string]any{s.drainLabel: "true"})
	}
	return s.write(ctx, obj, m, map[string]any{s.shardLabel: m.To, s.drainLabel: nil})
}

// stateIn returns the state of shard in states: Unknown when there is no Lease of that name.
func stateIn(states map[string]ShardState, shard string) ShardState {
	if state, ok := states[shard]; ok {
		return state
	}
	return Unknown
}

// write merge-patches labels (nil removes a label) into obj, guarded by the resourceVersion the
// sharder read, and records m when the API server accepted the patch. An object that changed or
// was deleted since it was read is left for the next pass.
func (s *Sharder) write(ctx context.Context, obj *metav1.PartialObjectMetadata, m Move, labels map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.ResourceVersion,
		"labels":          labels,
	}})
	if err != nil {
		return fmt.Errorf("failed to encode the patch of %s %s: %w", m.Kind.Kind, m.Object, err)
	}
	mu := s.lockFor(m)
	mu.Lock()
	defer mu.Unlock()
	s.writing.RLock()
	defer s.writing.RUnlock()
	target := &metav1.PartialObjectMetadata{}
	target.SetGroupVersionKind(m.Kind)
	target.SetNamespace(obj.Namespace)
	target.SetName(obj.Name)
	err = s.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch))
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		log.FromContext(ctx).V(1).Info("Object changed since it was listed, left for the next pass",
			"kind", m.Kind.Kind, "object", m.Object, "error", err.Error())
		return nil
	case err != nil:
		return fmt.Errorf("failed to %s: %w", m, err)
	}
	log.FromContext(ctx).V(1).Info("Changed the shard of an object", "move", m.String())
	s.record(m)
	return nil
}

// lockFor returns the lock of the object m moves.
func (s *Sharder) lockFor(m Move) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(m.Kind.Group + "/" + m.Kind.Kind + "/" + m.Object.String()))
	return &s.objectMu[h.Sum32()%uint32(len(s.objectMu))]
}

// namespaceOrAll names ns for a message.
func namespaceOrAll(ns string) string {
	if ns == metav1.NamespaceAll {
		return "all namespaces"
	}
	return "namespace " + ns
}
