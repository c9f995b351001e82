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

package patch_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// BenchmarkApplierCPU measures the Applier's own work on one owned child, a StatefulSet applied
// as the example operator applies its children (OwnedBy, ForceConflicts), with a reader that
// serves the live object from memory, as a manager's cache does, so that no request is sent and
// what is timed is the Applier:
//
//   - record: the object is as the Applier's last apply left it (its record proves the no-op);
//   - proof: another writer changed the object since (its resourceVersion moved), so the
//     Applier proves the no-op from the live object and its managedFields.
func BenchmarkApplierCPU(b *testing.B) {
	ctx := b.Context()
	ns := env.Namespace(b)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client().Create(ctx, owner); err != nil {
		b.Fatal(err)
	}
	desired := func() *appsv1.StatefulSet {
		s := desiredStatefulSet(ns, 3).(*appsv1.StatefulSet)
		s.Labels = map[string]string{"app.kubernetes.io/name": "db", "app.kubernetes.io/instance": "owner"}
		s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		return s
	}
	live := &memoryReader{Reader: env.Client()}
	a := patch.NewApplier(env.Client(), "bench", patch.ApplierOptions{Reader: live})
	for range 2 { // the second apply proves the fixed point the first one reached
		if _, err := a.Apply(ctx, desired(), patch.OwnedBy(owner), patch.ForceConflicts(true)); err != nil {
			b.Fatal(err)
		}
	}
	stored := &appsv1.StatefulSet{}
	if err := env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, stored); err != nil {
		b.Fatal(err)
	}
	live.set(stored)

	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if changed, err := a.Apply(ctx, desired(), patch.OwnedBy(owner), patch.ForceConflicts(true)); err != nil || changed {
				b.Fatal(changed, err)
			}
		}
	})
	// Each proof sees a newer resourceVersion than the last, in every run of the benchmark
	// (-count): an older one would be a reader lagging behind the record, which proves the skip.
	version, err := strconv.ParseInt(stored.ResourceVersion, 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proof", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			version++
			moved := stored.DeepCopy()
			moved.ResourceVersion = strconv.FormatInt(version, 10)
			live.set(moved)
			if changed, err := a.Apply(ctx, desired(), patch.OwnedBy(owner), patch.ForceConflicts(true)); err != nil || changed {
				b.Fatal(changed, err)
			}
		}
	})
}

// memoryReader serves the StatefulSet it holds, a deep copy on each read as a manager's cache
// gives, and reads everything else with Reader.
type memoryReader struct {
	client.Reader
	mu  sync.Mutex
	sts *appsv1.StatefulSet
}

func (r *memoryReader) set(sts *appsv1.StatefulSet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sts = sts
}

func (r *memoryReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	sts := r.sts
	r.mu.Unlock()
	if out, ok := obj.(*appsv1.StatefulSet); ok && sts != nil && client.ObjectKeyFromObject(sts) == key {
		sts.DeepCopyInto(out)
		return nil
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
