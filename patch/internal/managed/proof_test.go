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

package managed

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/tenon-dev/tenon/internal/objects"
	"github.com/tenon-dev/tenon/patch/internal/jsonvalue"
)

func TestUpToDate(t *testing.T) {
	desired := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx", "args": []any{"-v"}, "ports": []any{
					map[string]any{"containerPort": int64(80), "protocol": "TCP"},
				}},
			}}},
			"finalizers": []any{"a", "b"},
		},
	}
	// The live object as the API server returns it: defaults, another manager's fields.
	live := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web", "other": "x"}},
		"spec": map[string]any{
			"replicas":             float64(3),
			"revisionHistoryLimit": int64(10),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx", "args": []any{"-v"}, "imagePullPolicy": "Always", "ports": []any{
					map[string]any{"containerPort": int64(80), "protocol": "TCP"},
				}},
			}}},
			"finalizers": []any{"a", "b"},
		},
	}
	owned := `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:finalizers":{"v:\"a\"":{},"v:\"b\"":{}},` +
		`"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:image":{},"f:args":{},` +
		`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}`
	// withAtomics gives desired a nodeSelector {disk: ssd} and a toleration {key: k}, and live
	// the given nodeSelector and toleration: both are owned as a whole.
	withAtomics := func(liveSelector, liveToleration map[string]any) func(d, l map[string]any) {
		return func(d, l map[string]any) {
			ds := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			ds["nodeSelector"] = map[string]any{"disk": "ssd"}
			ds["tolerations"] = []any{map[string]any{"key": "k"}}
			ls := l["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			ls["nodeSelector"] = liveSelector
			ls["tolerations"] = []any{liveToleration}
		}
	}
	// withToleration gives desired a toleration {key: k} and live the same.
	withToleration := func(d, l map[string]any) {
		for _, m := range []map[string]any{d, l} {
			m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["tolerations"] = []any{map[string]any{"key": "k"}}
		}
	}
	ownedToleration := strings.Replace(owned, `"f:template":{"f:spec":{`, `"f:template":{"f:spec":{"f:tolerations":{},`, 1)
	ownedAtomics := strings.Replace(owned, `"f:template":{"f:spec":{`, `"f:template":{"f:spec":{"f:nodeSelector":{},"f:tolerations":{},`, 1)
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", Subresource: sub, FieldsV1: metav1.NewFieldsV1(fields)}
	}

	for _, tc := range []struct {
		name    string
		mutate  func(desired, live map[string]any)
		managed []metav1.ManagedFieldsEntry
		// declared is the field set the schema declares for desired; nil when it is not known.
		declared string
		want     bool
	}{{
		name:    "every desired field is live and owned exactly",
		managed: []metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:other":{}}}}`), entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
		want:    true,
	}, {
		name:    "no managedFields (a cache that strips them)",
		managed: nil,
	}, {
		name:    "the manager's entry is for another subresource",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "status", owned)},
	}, {
		name:    "the manager's entry is an update, not an apply",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationUpdate, "", owned)},
	}, {
		name:    "a desired value differs",
		mutate:  func(d, _ map[string]any) { d["spec"].(map[string]any)["replicas"] = int64(4) },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name: "an atomic list differs",
		mutate: func(_, l map[string]any) {
			containers := l["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
			containers[0].(map[string]any)["args"] = []any{"-v", "-x"}
		},
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name:    "a desired field is not owned yet",
		mutate:  func(d, _ map[string]any) { d["metadata"].(map[string]any)["labels"].(map[string]any)["other"] = "x" },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name:    "an owned field is no longer desired (the apply would remove it)",
		mutate:  func(d, _ map[string]any) { delete(d["metadata"].(map[string]any), "labels") },
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name:     "an atomic map and an atomic list are live exactly as desired",
		mutate:   withAtomics(map[string]any{"disk": "ssd"}, map[string]any{"key": "k"}),
		managed:  []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", ownedAtomics)},
		declared: ownedAtomics,
		want:     true,
	}, {
		name:     "an atomic map has a key desired no longer sets (the apply would remove it)",
		mutate:   withAtomics(map[string]any{"disk": "ssd", "zone": "a"}, map[string]any{"key": "k"}),
		managed:  []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", ownedAtomics)},
		declared: ownedAtomics,
	}, {
		name:     "an element of an atomic list has a field desired no longer sets",
		mutate:   withAtomics(map[string]any{"disk": "ssd"}, map[string]any{"key": "k", "tolerationSeconds": int64(30)}),
		managed:  []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", ownedAtomics)},
		declared: ownedAtomics,
	}, {
		name:     "the schema declares other fields than the manager owns",
		managed:  []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
		declared: strings.Replace(owned, `"f:replicas":{}`, `"f:replicas":{},"f:paused":{}`, 1),
	}, {
		// A granular map applied empty, filled by defaults or other managers, looks the same.
		name:    "without a schema, a map owned as a whole is not taken for atomic",
		mutate:  withAtomics(map[string]any{"disk": "ssd"}, map[string]any{"key": "k"}),
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", ownedAtomics)},
	}, {
		name:    "without a schema, a list owned as a whole that no one else owns elements of is atomic",
		mutate:  withToleration,
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", ownedToleration)},
		want:    true,
	}, {
		// The manager applied an empty list of type map; another added an element.
		name:   "without a schema, a list owned as a whole that another manager owns elements of is granular",
		mutate: withToleration,
		managed: []metav1.ManagedFieldsEntry{
			entry("me", metav1.ManagedFieldsOperationApply, "", ownedToleration),
			entry("other", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{"k:{\"key\":\"k\"}":{".":{},"f:key":{}}}}}}}`),
		},
	}, {
		name:    "the manager has two apply entries",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "", owned), entry("me", metav1.ManagedFieldsOperationApply, "", owned)},
	}, {
		name: "the manager's entry is for another apiVersion",
		managed: func() []metav1.ManagedFieldsEntry {
			e := entry("me", metav1.ManagedFieldsOperationApply, "", owned)
			e.APIVersion = "apps/v1beta1"
			return []metav1.ManagedFieldsEntry{e}
		}(),
	}, {
		name: "a list element is owned by another key",
		managed: []metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply, "",
			`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:finalizers":{"v:\"a\"":{},"v:\"c\"":{}},"f:template":{}}}`)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d, l := jsonvalue.DeepCopyMap(desired), jsonvalue.DeepCopyMap(live)
			if tc.mutate != nil {
				tc.mutate(d, l)
			}
			var declared map[string]any
			if tc.declared != "" {
				g.Expect(json.Unmarshal([]byte(tc.declared), &declared)).To(Succeed())
			}
			g.Expect(UpToDate(d, l, typedEntries(tc.managed), "me", "", declared, nil, nil)).To(Equal(tc.want))
		})
	}
}

func TestUpToDateProvesACustomResourcesMetadataFromObjectMetasSchema(t *testing.T) {
	types := applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
	ref := func(block bool) map[string]any {
		return map[string]any{"apiVersion": "test.tenon.dev/v1", "kind": "Widget", "name": "w", "uid": "u1", "controller": true, "blockOwnerDeletion": block}
	}
	desired := map[string]any{
		"apiVersion": "test.tenon.dev/v1",
		"kind":       "Shape",
		"metadata":   map[string]any{"name": "s", "namespace": "default", "labels": map[string]any{"app": "web"}, "ownerReferences": []any{ref(true)}},
		"spec":       map[string]any{"text": "x"},
	}
	live := func(block bool) map[string]any {
		return map[string]any{
			"apiVersion": "test.tenon.dev/v1",
			"kind":       "Shape",
			"metadata":   map[string]any{"name": "s", "namespace": "default", "labels": map[string]any{"app": "web", "other": "y"}, "ownerReferences": []any{ref(block)}},
			"spec":       map[string]any{"text": "x", "count": int64(1)},
		}
	}
	owned := `{"f:metadata":{"f:labels":{"f:app":{}},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},"f:spec":{"f:text":{}}}`
	wantMeta := map[string]any{
		"f:labels":          map[string]any{"f:app": map[string]any{}},
		"f:ownerReferences": map[string]any{`k:{"uid":"u1"}`: map[string]any{}}, // atomic: owned as a whole
	}
	declaredMeta := DeclaredMetadata(types, desired)
	g := NewWithT(t)
	g.Expect(cmp.Diff(wantMeta, declaredMeta)).To(BeEmpty())
	g.Expect(DeclaredMetadata(types, map[string]any{"metadata": map[string]any{"name": "s"}})).To(Equal(map[string]any{}), "no metadata fields")
	g.Expect(DeclaredMetadata(types, map[string]any{"metadata": map[string]any{"labels": "bogus"}})).To(BeNil(), "metadata that does not match ObjectMeta")

	for _, tc := range []struct {
		name         string
		live         map[string]any
		owned        string
		declaredMeta map[string]any
		want         bool
	}{
		{"an owner reference owned as a whole is proved with ObjectMeta's schema", live(true), owned, declaredMeta, true},
		{"without the schema it is not", live(true), owned, nil, false},
		{"a live owner reference that differs is not", live(false), owned, declaredMeta, false},
		{
			"metadata the manager owns beyond what the apply declares is not", live(true),
			`{"f:metadata":{"f:annotations":{"f:x":{}},"f:labels":{"f:app":{}},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},"f:spec":{"f:text":{}}}`, declaredMeta, false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			managed := []metav1.ManagedFieldsEntry{{
				Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "test.tenon.dev/v1", FieldsV1: metav1.NewFieldsV1(tc.owned),
			}}
			g.Expect(UpToDate(jsonvalue.DeepCopyMap(desired), tc.live, typedEntries(managed), "me", "", nil, tc.declaredMeta, nil)).To(Equal(tc.want))
		})
	}
}

// TestAnEmptyListAppliedIsAFixedPointOnlyWhenNoElementIsOurs: admission adds a Node's not-ready
// taint to an apply of `taints: []` (an atomic list), and the taint is then the manager's:
// applying again removes it, so the apply is no fixed point. Elements another entry owns (a list
// of type map or set) are theirs, and applying again keeps them.
func TestAnEmptyListAppliedIsAFixedPointOnlyWhenNoElementIsOurs(t *testing.T) {
	g := NewWithT(t)
	desired := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{"taints": []any{}}}
	node := func(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n"},
			"spec": map[string]any{"taints": []any{map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}}}}}
		obj.SetManagedFields(entries)
		return obj
	}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	ours := entry("me", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:taints":{}}}`)

	g.Expect(FixedPoint(desired, node(ours), "me", "", nil)).To(BeFalse(), "the taint admission added is ours: applying again removes it")
	theirs := entry("kubelet", metav1.ManagedFieldsOperationUpdate,
		`{"f:spec":{"f:taints":{"k:{\"effect\":\"NoSchedule\",\"key\":\"node.kubernetes.io/not-ready\"}":{".":{}}}}}`)
	g.Expect(FixedPoint(desired, node(ours, theirs), "me", "", nil)).To(BeTrue(), "an element another manager owns stays")

	empty := node(ours)
	empty.Object["spec"] = map[string]any{"taints": []any{}}
	g.Expect(FixedPoint(desired, empty, "me", "", nil)).To(BeTrue())
}

// TestAnEmptyListOfTypeMapTheObjectLacksIsNoFixedPoint: an apply of `failureDomains: []` that
// removed the manager's last element of a list of type map removes the list, and the entry then
// owns nothing there (an empty list of type map owns no field). Applying again creates the list
// empty, which a schema may refuse (minItems), so the answer is no fixed point; it is one where
// the object holds the empty list, owned or not.
func TestAnEmptyListOfTypeMapTheObjectLacksIsNoFixedPoint(t *testing.T) {
	g := NewWithT(t)
	desired := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
		"status": map[string]any{"phase": "Ready", "failureDomains": []any{}}}
	thing := func(status map[string]any, fields string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}}}
		if status != nil {
			obj.Object["status"] = status
		}
		if fields != "" {
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "me", Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Subresource: "status"}})
		}
		return obj
	}
	owned := `{"f:status":{"f:phase":{}}}`
	g.Expect(FixedPoint(desired, thing(map[string]any{"phase": "Ready"}, owned), "me", "status", nil)).To(BeFalse(),
		"the list the apply removed: applying again creates it")
	g.Expect(FixedPoint(desired, thing(map[string]any{"phase": "Ready", "failureDomains": []any{}}, owned), "me", "status", nil)).To(BeTrue())

	// No entry at all: the manager owns nothing, and the object must still hold what it applies.
	bare := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
		"status": map[string]any{"failureDomains": []any{}}}
	g.Expect(FixedPoint(bare, thing(nil, ""), "me", "status", nil)).To(BeFalse(), "no entry, and the object lacks the list")
	g.Expect(FixedPoint(bare, thing(map[string]any{}, ""), "me", "status", nil)).To(BeFalse(), "no entry, and the status lacks the list")
	g.Expect(FixedPoint(bare, thing(map[string]any{"failureDomains": []any{}}, ""), "me", "status", nil)).To(BeTrue())
}

// TestAnEmptyListTheSchemaDeclaresNothingForIsProved: `finalizers: []` applied owns nothing
// (ObjectMeta's schema makes finalizers a set, and an empty one declares no field), and the stored
// form omits it. With the schema known, an apply of it again changes nothing; without the schema,
// a field the entry does not own may be one desired added since, and nothing is proved.
func TestAnEmptyListTheSchemaDeclaresNothingForIsProved(t *testing.T) {
	g := NewWithT(t)
	desired := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "finalizers": []any{}},
		"spec": map[string]any{"size": int64(1)}}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": int64(1)}}}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{}}}`)}})
	omits := func(place string) bool { return place == "metadata.finalizers" }
	declaredMeta := map[string]any{}

	g.Expect(UpToDate(desired, live.Object, EntriesOf(live), "me", "", nil, declaredMeta, omits)).To(BeTrue())
	g.Expect(UpToDate(desired, live.Object, EntriesOf(live), "me", "", nil, nil, omits)).To(BeFalse(), "no schema")
	g.Expect(UpToDate(desired, live.Object, EntriesOf(live), "me", "", nil, declaredMeta, nil)).To(BeFalse(), "the stored form is not known to omit it")
	held := live.DeepCopy()
	held.SetFinalizers([]string{"other.example.com/cleanup"})
	g.Expect(UpToDate(desired, held.Object, EntriesOf(held), "me", "", nil, declaredMeta, nil)).To(BeTrue(), "another writer's finalizers stay")
	g.Expect(FixedPoint(desired, live, "me", "", omits)).To(BeTrue())
	g.Expect(FixedPoint(desired, live, "me", "", nil)).To(BeFalse())

	// A scalar the entry does not own is never proved: desired set it since.
	added := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": int64(1), "zone": "a"}}
	g.Expect(UpToDate(added, live.Object, EntriesOf(live), "me", "", nil, declaredMeta, omits)).To(BeFalse())
}

// TestAValueAdmissionChangedIsNoFixedPoint: a mutating admission plugin that changes, on a
// creation only, a value the manager applied (a scalar, inside an atomic map or list, a set's
// element) makes the answer no fixed point, since applying again, an update, sets it back. A
// value the API server stores in its own form (a zero it omits, a quantity spelt canonically) is
// one.
func TestAValueAdmissionChangedIsNoFixedPoint(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:value":{},"f:selector":{},"f:tolerations":{},"f:finalizers":{"v:\"a\"":{}}}}`)}
	object := func(spec map[string]any) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}, "spec": spec}}
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{ours})
		return obj
	}
	desired := func(value any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{
			"value": value, "selector": map[string]any{"disk": "ssd"}, "tolerations": []any{map[string]any{"key": "k", "effect": "NoSchedule"}},
			"finalizers": []any{"a"},
		}}
	}
	for _, tc := range []struct {
		name    string
		applied any
		live    map[string]any
		fixed   bool
	}{
		{"as applied", "ours", map[string]any{}, true},
		{"a scalar changed", "ours", map[string]any{"value": "mutated"}, false},
		{"a scalar removed", "ours", map[string]any{"value": nil}, false},
		{"a key added to an atomic map", "ours", map[string]any{"selector": map[string]any{"disk": "ssd", "zone": "a"}}, false},
		{"a value changed in an atomic map", "ours", map[string]any{"selector": map[string]any{"disk": "hdd"}}, false},
		{"a field changed in an atomic list's element", "ours", map[string]any{"tolerations": []any{map[string]any{"key": "k", "effect": "NoExecute"}}}, false},
		{"a field added to an atomic list's element", "ours", map[string]any{"tolerations": []any{map[string]any{"key": "k", "effect": "NoSchedule", "value": "v"}}}, false},
		{"a set's element replaced", "ours", map[string]any{"finalizers": []any{"b"}}, false},
		// A zero a built-in kind's stored form omits, or a quantity spelt canonically, cannot be
		// told from a plugin's change: no proof, and the next apply proves it by writing nothing.
		{"a zero missing", false, map[string]any{"value": nil}, false},
		{"a zero number missing", int64(0), map[string]any{"value": nil}, false},
		{"an empty string missing", "", map[string]any{"value": nil}, false},
		{"a quantity spelt otherwise", "0.1", map[string]any{"value": "100m"}, false},
		{"a string that reads as the same quantity", "1", map[string]any{"value": "1.0"}, false},
		{"a number of another Go type", int64(3), map[string]any{"value": float64(3)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := desired(tc.applied)
			spec := jsonvalue.DeepCopyMap(d["spec"].(map[string]any))
			for k, v := range tc.live {
				if v == nil {
					delete(spec, k)
				} else {
					spec[k] = v
				}
			}
			NewWithT(t).Expect(FixedPoint(d, object(spec), "me", "", nil)).To(Equal(tc.fixed))
		})
	}
}

// TestAnEmptyMapAppliedIsAFixedPointOnlyWhenNoKeyIsOurs: an empty map applied to an atomic map
// (a pod's nodeSelector) owns it as a whole, so keys admission added as it was applied are the
// manager's and applying again removes them; a granular map's keys are their managers'. One the
// object lacks is a fixed point only where the kind's stored form is known to omit it.
func TestAnEmptyMapAppliedIsAFixedPointOnlyWhenNoKeyIsOurs(t *testing.T) {
	g := NewWithT(t)
	desired := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{"selector": map[string]any{}}}
	thing := func(selector map[string]any, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		spec := map[string]any{"selector": selector}
		if selector == nil { // the object lacks it
			spec = map[string]any{}
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
			"spec": spec}}
		obj.SetManagedFields(entries)
		return obj
	}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	ours := entry("me", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:selector":{}}}`)

	g.Expect(FixedPoint(desired, thing(map[string]any{"zone": "a"}, ours), "me", "", nil)).To(BeFalse(), "the key admission added is ours")
	theirs := entry("other", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:selector":{"f:zone":{}}}}`)
	g.Expect(FixedPoint(desired, thing(map[string]any{"zone": "a"}, ours, theirs), "me", "", nil)).To(BeTrue(), "a key another manager owns stays")
	g.Expect(FixedPoint(desired, thing(map[string]any{}, ours), "me", "", nil)).To(BeTrue())

	// An empty map the object lacks: the stored form omits it, or the server pruned it when an
	// apply removed the manager's keys below it, and applying again sets it. Only the kind's
	// schema tells which.
	g.Expect(FixedPoint(desired, thing(nil, ours), "me", "", nil)).To(BeFalse(), "an empty map the object lacks, not known to be omitted")
	omits := func(place string) bool { return place == "spec.selector" }
	g.Expect(FixedPoint(desired, thing(nil, ours), "me", "", omits)).To(BeTrue(), "an empty map the stored form omits")
	g.Expect(FixedPoint(desired, thing(nil, ours), "me", "", func(string) bool { return false })).To(BeFalse())
	// Another entry owns the omitted place too (a ConfigMap's binaryData that another writer
	// created, whose keys this manager took and then gave up): applying the empty map again
	// takes the field from that entry, a conflict without force.
	coOwner := entry("other", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:selector":{}}}`)
	g.Expect(FixedPoint(desired, thing(nil, ours, coOwner), "me", "", omits)).To(BeFalse(), "another entry owns the omitted map")
	coOwned := thing(nil, ours, coOwner)
	g.Expect(UpToDate(desired, coOwned.Object, EntriesOf(coOwned), "me", "", nil, nil, omits)).To(BeFalse(), "another entry owns the omitted map")

	// UpToDate reads the same places.
	live := thing(nil, ours)
	entries := EntriesOf(live)
	g.Expect(UpToDate(desired, live.Object, entries, "me", "", nil, nil, nil)).To(BeFalse())
	g.Expect(UpToDate(desired, live.Object, entries, "me", "", nil, nil, omits)).To(BeTrue())
	inList := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
		"spec": map[string]any{"items": []any{map[string]any{"name": "a", "selector": map[string]any{}}}}}
	listLive := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
		"spec": map[string]any{"items": []any{map[string]any{"name": "a"}}}}}
	listLive.SetManagedFields([]metav1.ManagedFieldsEntry{entry("me", metav1.ManagedFieldsOperationApply,
		`{"f:spec":{"f:items":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:selector":{}}}}}`)})
	inListOmits := func(place string) bool { return place == "spec.items.[].selector" }
	g.Expect(FixedPoint(inList, listLive, "me", "", inListOmits)).To(BeTrue())
	g.Expect(UpToDate(inList, listLive.Object, EntriesOf(listLive), "me", "", nil, nil, inListOmits)).To(BeTrue())
	g.Expect(UpToDate(inList, listLive.Object, EntriesOf(listLive), "me", "", nil, nil, omits)).To(BeFalse())

	// A struct the manager owns fields of, all empty maps the stored form omits, that the object
	// lacks as a whole (admission removed a pod's resources as it was created): applying again sets
	// it, so it is no fixed point.
	nested := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
		"spec": map[string]any{"resources": map[string]any{"limits": map[string]any{}}}}
	nestedOurs := entry("me", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:resources":{"f:limits":{}}}}`)
	limitsOmitted := func(place string) bool { return place == "spec.resources.limits" }
	withResources := func(resources map[string]any) *unstructured.Unstructured {
		spec := map[string]any{}
		if resources != nil {
			spec["resources"] = resources
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}, "spec": spec}}
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{nestedOurs})
		return obj
	}
	g.Expect(FixedPoint(nested, withResources(map[string]any{}), "me", "", limitsOmitted)).To(BeTrue())
	g.Expect(FixedPoint(nested, withResources(nil), "me", "", limitsOmitted)).To(BeFalse(), "the struct admission removed")
	lacking := withResources(nil)
	g.Expect(UpToDate(nested, lacking.Object, EntriesOf(lacking), "me", "", nil, nil, limitsOmitted)).To(BeFalse())
}

// TestElementsAdmissionReorderedOrRepeatedAreNoFixedPoint: applying again puts the manager's
// elements of a list of type map or set in desired's order and keeps one of each, so an answer
// in which admission reordered them, or added a second element of the same key or value, is no
// fixed point. Other managers' elements between them are kept where they are.
func TestElementsAdmissionReorderedOrRepeatedAreNoFixedPoint(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:ports":{"k:{\"name\":\"a\"}":{".":{},"f:name":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{}}},"f:tags":{"v:\"x\"":{},"v:\"y\"":{}}}}`)}
	desired := map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{
		"ports": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}, "tags": []any{"x", "y"},
	}}
	port := func(name string) any { return map[string]any{"name": name} }
	for _, tc := range []struct {
		name  string
		ports []any
		tags  []any
		fixed bool
	}{
		{"as applied", []any{port("a"), port("b")}, []any{"x", "y"}, true},
		{"another manager's element between ours", []any{port("a"), port("c"), port("b")}, []any{"x", "z", "y"}, true},
		{"list-map elements reordered", []any{port("b"), port("a")}, []any{"x", "y"}, false},
		{"set elements reordered", []any{port("a"), port("b")}, []any{"y", "x"}, false},
		{"a second element of one key", []any{port("a"), port("b"), port("a")}, []any{"x", "y"}, false},
		{"a second element of one value", []any{port("a"), port("b")}, []any{"x", "y", "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "n"},
				"spec": map[string]any{"ports": tc.ports, "tags": tc.tags}}}
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{ours})
			NewWithT(t).Expect(FixedPoint(desired, obj, "me", "", nil)).To(Equal(tc.fixed))
		})
	}
}

// The proofs read managedFields from the object's map (EntriesOf), where a typed object converted
// to unstructured, and an apply's response, hold each field set as a JSON object already: they
// must read what decoding every entry's JSON (typedEntries) reads.
func TestEntriesOfReadsWhatDecodingEachEntryReads(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:x":{}}}}`)},
		{Manager: "me", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{}}}`)},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{}`)},
		{Manager: "empty", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"},
	}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ManagedFields: entries}}
	m, err := objects.ToMap(typed)
	if err != nil {
		t.Fatal(err)
	}
	fromMap := EntriesOf(&unstructured.Unstructured{Object: m})
	u := &unstructured.Unstructured{}
	u.SetManagedFields(entries)
	fromJSON := typedEntries(entries)
	for name, got := range map[string][]Entry{"a typed object's map": fromMap, "SetManagedFields": EntriesOf(u)} {
		if diff := cmp.Diff(fromJSON, got, cmp.AllowUnexported(Entry{})); diff != "" {
			t.Errorf("EntriesOf of %s differs from decoding each entry (-decoded +map):\n%s", name, diff)
		}
	}
	// A map of another shape is read the slow way, not misread.
	odd := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{
		map[string]any{"manager": "me", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": `{"f:data":{}}`},
	}}}}
	if diff := cmp.Diff(slowEntriesOf(odd), EntriesOf(odd), cmp.AllowUnexported(Entry{})); diff != "" {
		t.Errorf("EntriesOf of a field set held as a string is not read as Unstructured.GetManagedFields reads it (-slow +map):\n%s", diff)
	}
}
