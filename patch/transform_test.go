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
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/patch"
)

func TestKeepManagedFieldsOfKeepsOnlyTheNamedManagersEntries(t *testing.T) {
	g := NewWithT(t)
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "cluster-controller", Operation: metav1.ManagedFieldsOperationApply},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		{Manager: "cluster-controller", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status"},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate},
	}
	keep := patch.KeepManagedFieldsOf("cluster-controller")

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{ManagedFields: entries}}
	out, err := keep(sts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(BeIdenticalTo(sts))
	g.Expect(sts.ManagedFields).To(Equal([]metav1.ManagedFieldsEntry{entries[0], entries[2]}))

	// Nothing to drop: the object is not written to (it may be in the cache already).
	kept := sts.ManagedFields
	out, err = keep(sts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(BeIdenticalTo(sts))
	g.Expect(&sts.ManagedFields[0]).To(BeIdenticalTo(&kept[0]))

	// Only other managers: none left.
	others := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{ManagedFields: entries[1:2]}}
	_, _ = keep(others)
	g.Expect(others.ManagedFields).To(BeNil())

	// Not an object: passed through.
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "ns/db"}
	out, err = keep(tombstone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(tombstone))
}

// TestARestartedApplierOnACacheThatKeepsItsEntriesSendsNothing is why the transform exists: with
// only its own managedFields entries cached, an Applier that remembers nothing (a restarted
// controller) still proves that an apply would change nothing; with every entry stripped it
// cannot, and applies again.
func TestARestartedApplierOnACacheThatKeepsItsEntriesSendsNothing(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	c := newCountingClient(t)
	desired := func() client.Object { return desiredStatefulSet(ns, 2) }
	if _, err := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{}).Apply(ctx, desired()); err != nil {
		t.Fatalf("failed to apply: %v", err)
	}
	// Other writers: a status writer and a person's label.
	live := &appsv1.StatefulSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(desired()), live); err != nil {
		t.Fatal(err)
	}
	live.Status.Replicas, live.Status.ReadyReplicas = 2, 1
	if err := c.Status().Update(ctx, live, client.FieldOwner("kube-controller-manager")); err != nil {
		t.Fatal(err)
	}
	live.Labels = map[string]string{"team": "storage"}
	if err := c.Update(ctx, live, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		transform toolscache.TransformFunc
		want      counts
		managers  []string
	}{
		{"only the Applier's entries kept", patch.KeepManagedFieldsOf("tenon-test"), counts{"get": 1}, []string{"tenon-test"}},
		{"every entry stripped", cache.TransformStripManagedFields(), counts{"get": 1, "apply": 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c.take()
			// The reader stands for a cache with the transform: what it returns went through it.
			var managers []string
			reader := interceptor.NewClient(c, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if err := c.Get(ctx, key, obj, opts...); err != nil {
						return err
					}
					_, err := tc.transform(obj)
					managers = nil
					for _, e := range obj.GetManagedFields() {
						managers = append(managers, e.Manager)
					}
					return err
				},
			})
			restarted := patch.NewApplier(c, "tenon-test", patch.ApplierOptions{Reader: reader})
			changed, err := restarted.Apply(ctx, desired())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(c.take()).To(Equal(tc.want))
			g.Expect(managers).To(Equal(tc.managers))
		})
	}
}
