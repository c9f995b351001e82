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

package testenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/ownership"
)

// clusterListConcurrency bounds the lists deleteTrackedClusterObjects sends at once.
const clusterListConcurrency = 8

// deleteTrackedClusterObjects deletes the cluster-scoped objects that ownership's tracking
// labels tie to an owner in namespace ns: the children a test's controller made outside any
// namespace, which neither the namespace's deletion nor the garbage collector removes, and
// which every later test's manager would otherwise see. It lists every cluster-scoped resource
// that can be listed and deleted, by the tracking label, and deletes the objects whose owner
// namespace is ns, each on the condition that it is the object listed.
func (e *Environment) deleteTrackedClusterObjects(ctx context.Context, ns string) error {
	kinds, err := e.clusterScopedKinds()
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, clusterListConcurrency)
	)
	for _, gvk := range kinds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := e.deleteTracked(ctx, gvk, ns); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deleteTracked deletes the objects of gvk, a cluster-scoped kind, that are tracked by an owner
// in namespace ns.
func (e *Environment) deleteTracked(ctx context.Context, gvk schema.GroupVersionKind, ns string) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := e.client.List(ctx, list, client.HasLabels{ownership.LabelOwnerUID}); err != nil {
		return fmt.Errorf("failed to list the tracked %s: %w", gvk.Kind, err)
	}
	var errs []error
	for i := range list.Items {
		obj := &list.Items[i]
		if obj.GetAnnotations()[ownership.AnnotationOwnerNamespace] != ns {
			continue
		}
		obj.SetGroupVersionKind(gvk)
		err := e.client.Delete(ctx, obj, client.Preconditions{UID: &obj.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("failed to delete %s %s, tracked by an owner in namespace %s: %w", gvk.Kind, obj.Name, ns, err))
		}
	}
	return errors.Join(errs...)
}

// clusterScopedKinds returns the preferred version of every cluster-scoped kind the API server
// serves that can be listed and deleted, as discovery reports them now: CRDs installed since the
// start count.
func (e *Environment) clusterScopedKinds() ([]schema.GroupVersionKind, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(e.config)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("failed to discover the API server's resources: %w", err)
	}
	// A group that failed discovery (an aggregated API that is down) has no objects to clean.
	var kinds []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if r.Namespaced || strings.Contains(r.Name, "/") ||
				!slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			kinds = append(kinds, gv.WithKind(r.Kind))
		}
	}
	return kinds, nil
}
