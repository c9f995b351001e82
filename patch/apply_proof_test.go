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

package patch

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/patch/internal/managed"
)

// liveStatefulSet returns a StatefulSet as a cache holds it: with a status and the
// managedFields entries of an applier ("bench") and of the controller that writes its status.
func liveStatefulSet(name string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "7", Labels: map[string]string{"app": name},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "bench", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{}}}`)},
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Subresource: "status", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:replicas":{}}}`)},
			}},
		Spec:   appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), ServiceName: name},
		Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, CurrentRevision: name + "-1"},
	}
}

func TestTheProofReadsATypedObjectAsItsConversionWithoutWhatItDoesNotRead(t *testing.T) {
	g := NewWithT(t)
	a := &Applier{manager: "bench"}
	live := liveStatefulSet("db")
	before := live.DeepCopy()
	whole, err := objects.ToMap(live)
	g.Expect(err).NotTo(HaveOccurred())
	wantEntries := managed.EntriesOf(&unstructured.Unstructured{Object: whole})

	m, entries, own, err := a.proofInput(live, "")

	g.Expect(err).NotTo(HaveOccurred())
	want, _ := objects.ToMap(live.DeepCopy())
	delete(want, "status")
	delete(want["metadata"].(map[string]any), "managedFields")
	g.Expect(m).To(Equal(want), "the main resource's proof reads neither the status nor managedFields from the map")
	g.Expect(entries).To(Equal(wantEntries), "the entries are those of the whole object")
	g.Expect(own).To(Equal(sha256.Sum256(live.ManagedFields[0].FieldsV1.GetRawBytes())))
	g.Expect(live).To(Equal(before), "the live object is not modified")

	m, _, own, err = a.proofInput(live, "status")

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).To(HaveKey("status"), "a status proof reads the status")
	g.Expect(own).To(BeZero(), "the manager has no apply entry for the status")
}

func TestTheProofHasNoOwnEntryHashWithoutExactlyOneEntry(t *testing.T) {
	g := NewWithT(t)
	live := liveStatefulSet("db")
	twice := slices.Concat(live.ManagedFields, live.ManagedFields[:1])
	_, own := entriesOf(twice, "bench", "")
	g.Expect(own).To(BeZero(), "two apply entries of one manager: a state not understood")
	_, own = entriesOf(live.ManagedFields[1:], "bench", "")
	g.Expect(own).To(BeZero(), "no entry")
	unreadable := []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{"f:spec":`)}}
	entries, own := entriesOf(unreadable, "bench", "")
	g.Expect(managed.AppliedSet(entries, "bench", "")).To(BeNil(), "a field set that is not JSON is none")
	g.Expect(own).NotTo(BeZero())
}

func TestAProofOfTheSameApplyOnTheSameEntryDoesNotWalkTheSchemaAgain(t *testing.T) {
	g := NewWithT(t)
	types := 0
	a := NewApplier(fakeClientForProofs(), "bench", ApplierOptions{})
	walk := a.types
	a.types = func() managedfields.TypeConverter { types++; return walk() }
	desired := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": map[string]any{"a": "1"}}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	live := func(set string, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "9",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(set)}}},
			Data: map[string]string{"a": value}}
	}
	const set = `{"f:data":{"f:a":{}}}`

	upToDate, declared, err := a.provenUpToDate(desired, gvk, live(set, "1"), "", [32]byte{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upToDate).To(BeTrue())
	g.Expect(declared).To(Equal(sha256.Sum256([]byte(set))))
	walked := types
	g.Expect(walked).To(BeNumerically(">", 0))

	upToDate, again, err := a.provenUpToDate(desired, gvk, live(set, "1"), "", declared)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upToDate).To(BeTrue())
	g.Expect(again).To(Equal(declared))
	g.Expect(types).To(Equal(walked), "the entry holds the bytes found equal to the declared set: no schema walk")

	upToDate, _, err = a.provenUpToDate(desired, gvk, live(set, "2"), "", declared)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upToDate).To(BeFalse(), "the values are still compared: another writer under this manager's name changed one")

	other := `{"f:data":{"f:a":{},"f:b":{}}}`
	upToDate, _, err = a.provenUpToDate(desired, gvk, live(other, "1"), "", declared)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upToDate).To(BeFalse(), "the entry owns a field the apply does not declare")
	g.Expect(types).To(BeNumerically(">", walked), "another entry: the declared set is computed again")
}

// fakeClientForProofs returns a client whose scheme knows the built-in kinds; the proofs send
// nothing through it.
func fakeClientForProofs() client.Client {
	return fake.NewClientBuilder().Build()
}

// wrappedUnstructured is a runtime.Unstructured that is not an *unstructured.Unstructured: its
// conversion is its own map.
type wrappedUnstructured struct{ unstructured.Unstructured }

func TestARequestNeverWritesIntoTheCallersUnstructuredObject(t *testing.T) {
	g := NewWithT(t)
	for _, obj := range []client.Object{
		&unstructured.Unstructured{},
		&wrappedUnstructured{},
	} {
		obj.(runtime.Unstructured).SetUnstructuredContent(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default", "labels": map[string]any{"a": "b", "shard.alpha.sharding.timebertt.dev/ring": "x"}},
			"data":     map[string]any{"k": "v", "n": nil}})
		before := runtime.DeepCopyJSON(obj.(runtime.Unstructured).UnstructuredContent())

		m, err := requestMap(obj)
		g.Expect(err).NotTo(HaveOccurred())
		body := applyBody(m, corev1.SchemeGroupVersion.WithKind("ConfigMap"))

		g.Expect(body).To(HaveKeyWithValue("data", map[string]any{"k": "v"}), "%T: the body has no null field", obj)
		g.Expect(body).To(HaveKeyWithValue("metadata", HaveKeyWithValue("labels", map[string]any{"a": "b"})), "%T: nor the sharder's label", obj)
		g.Expect(obj.(runtime.Unstructured).UnstructuredContent()).To(Equal(before), "%T: the caller's object is not modified", obj)
	}
}

// pointerMeta is an object whose metadata is behind a pointer: a shallow copy shares it.
type pointerMeta struct {
	metav1.TypeMeta    `json:",inline"`
	*metav1.ObjectMeta `json:"metadata,omitempty"`
	Status             map[string]string `json:"status,omitempty"`
}

func (p *pointerMeta) DeepCopyObject() runtime.Object {
	c := *p
	c.ObjectMeta = p.DeepCopy()
	return &c
}

func TestTheProofReadsAnObjectWhoseMetadataIsBehindAPointerWithoutChangingIt(t *testing.T) {
	g := NewWithT(t)
	a := &Applier{manager: "bench"}
	sts := liveStatefulSet("db")
	live := &pointerMeta{ObjectMeta: &sts.ObjectMeta, Status: map[string]string{"phase": "Running"}}

	m, entries, own, err := a.proofInput(live, "")

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live.ManagedFields).To(HaveLen(2), "the live object keeps its managedFields")
	g.Expect(live.Status).To(HaveKey("phase"), "and its status")
	g.Expect(entries).To(HaveLen(2))
	g.Expect(own).To(BeZero(), "read whole: no memo")
	g.Expect(m).To(HaveKey("metadata"))
}

// reviewValues is a field type that converts itself to unstructured (as metav1.Time and
// resource.Quantity do) by returning the JSON value it holds: its own map.
type reviewValues struct{ m map[string]any }

func (v reviewValues) MarshalJSON() ([]byte, error) { return json.Marshal(v.m) }
func (v reviewValues) ToUnstructured() any          { return v.m }

// reviewValuesObject is a typed object with such a field.
type reviewValuesObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              reviewValues `json:"data"`
}

func (o *reviewValuesObject) DeepCopyObject() runtime.Object {
	c := *o
	c.ObjectMeta = *o.DeepCopy()
	c.Data = reviewValues{m: runtime.DeepCopyJSON(o.Data.m)}
	return &c
}

// A typed object's conversion is fresh only as far as the converter copies: a field whose
// ToUnstructured returns a map it holds is the caller's map, which the body must not prune in
// place. Found by a reviewing helper.
func TestARequestNeverWritesIntoATypedObjectsOwnValues(t *testing.T) {
	g := NewWithT(t)
	shared := map[string]any{"k": "v", "n": nil, "nested": map[string]any{"x": nil, "y": "1"}}
	obj := &reviewValuesObject{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: reviewValues{m: shared}}
	before := runtime.DeepCopyJSON(shared)

	m, err := requestMap(obj)
	g.Expect(err).NotTo(HaveOccurred())
	body := applyBody(m, corev1.SchemeGroupVersion.WithKind("ConfigMap"))

	g.Expect(body["data"]).To(Equal(map[string]any{"k": "v", "nested": map[string]any{"y": "1"}}), "the body has no null field")
	g.Expect(shared).To(Equal(before), "the caller's values are not modified")
}
