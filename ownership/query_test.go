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

package ownership_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

// set makes owner own child, failing the test on error.
func set(t *testing.T, owner, child client.Object, opts ...ownership.SetOption) client.Object {
	t.Helper()
	if _, _, err := ownership.Set(owner, child, scheme, opts...); err != nil {
		t.Fatal(err)
	}
	return child
}

func TestQueries(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	recreated := widget("apps", "w", "uid-w-new")
	clusterOwner := fixture("f", "uid-f")
	tests := []struct {
		name       string
		child      client.Object
		owner      client.Object
		owns       bool
		controller *ownership.Owner
		index      []string
	}{{
		name:  "An owner owns the child it references",
		child: set(t, owner, configMap("apps", "c", "")),
		owner: owner,
		owns:  true,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "w", UID: "uid-w",
			Mechanism: ownership.ControllerReference,
		},
		index: []string{"uid-w"},
	}, {
		name:  "An owner owns the child it tracks",
		child: set(t, owner, fixture("c", "")),
		owner: owner,
		owns:  true,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "w", UID: "uid-w",
			Mechanism: ownership.TrackingLabels,
		},
		index: []string{"uid-w"},
	}, {
		name:  "A recreated owner does not own its predecessor's referenced child",
		child: set(t, owner, configMap("apps", "c", "")),
		owner: recreated,
		owns:  false,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "w", UID: "uid-w",
			Mechanism: ownership.ControllerReference,
		},
		index: []string{"uid-w"},
	}, {
		name:  "A recreated owner does not own its predecessor's tracked child",
		child: set(t, owner, configMap("other", "c", "")),
		owner: recreated,
		owns:  false,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "w", UID: "uid-w",
			Mechanism: ownership.TrackingLabels,
		},
		index: []string{"uid-w"},
	}, {
		name:  "A cluster-scoped owner's reference records the child's namespace",
		child: set(t, clusterOwner, configMap("apps", "c", "")),
		owner: clusterOwner,
		owns:  true,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Fixture", Namespace: "apps", Name: "f", UID: "uid-f",
			Mechanism: ownership.ControllerReference,
		},
		index: []string{"uid-f"},
	}, {
		name: "A reference without the controller flag is not ownership",
		child: func() client.Object {
			c := configMap("apps", "c", "")
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: "w", UID: "uid-w"}}
			return c
		}(),
		owner: owner,
		owns:  false,
	}, {
		name:  "An unowned child has no owner",
		child: configMap("apps", "c", ""),
		owner: owner,
		owns:  false,
	}, {
		name:  "An owner without a UID owns nothing",
		child: configMap("apps", "c", ""),
		owner: widget("apps", "w", ""),
		owns:  false,
	}, {
		name: "A child marked by two owners reports its owner reference first, and is indexed under both",
		child: func() client.Object {
			c := set(t, owner, configMap("apps", "c", ""))
			c.SetLabels(map[string]string{ownership.LabelOwnerUID: "uid-x"})
			return c
		}(),
		owner: owner,
		owns:  true,
		controller: &ownership.Owner{
			Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "w", UID: "uid-w",
			Mechanism: ownership.ControllerReference,
		},
		index: []string{"uid-w", "uid-x"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(ownership.Owns(tt.owner, tt.child)).To(Equal(tt.owns))
			got, ok := ownership.OwnerOf(tt.child)
			g.Expect(ok).To(Equal(tt.controller != nil))
			if tt.controller != nil {
				g.Expect(got).To(Equal(*tt.controller), cmp.Diff(*tt.controller, got))
			}
			g.Expect(ownership.Index(tt.child)).To(Equal(tt.index))
		})
	}
}

func TestQueriesAcceptNil(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ownership.Owns(nil, configMap("apps", "c", ""))).To(BeFalse())
	g.Expect(ownership.Owns(widget("apps", "w", "u"), (*testtypes.Widget)(nil))).To(BeFalse())
	_, ok := ownership.OwnerOf(nil)
	g.Expect(ok).To(BeFalse())
	g.Expect(ownership.Index(nil)).To(BeEmpty())
	g.Expect(ownership.Release(nil, configMap("apps", "c", ""))).To(BeFalse())
}

func TestRelease(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d"}
	tests := []struct {
		name    string
		child   client.Object
		owner   client.Object
		changed bool
		want    marks
	}{{
		name: "Releasing a referenced child removes only the owner's reference",
		child: func() client.Object {
			c := configMap("apps", "c", "")
			c.OwnerReferences = []metav1.OwnerReference{other}
			c.Labels = map[string]string{"app": "demo"}
			return set(t, owner, c, ownership.AdoptAlways)
		}(),
		owner:   owner,
		changed: true,
		want:    marks{OwnerReferences: []metav1.OwnerReference{other}, Labels: map[string]string{"app": "demo"}},
	}, {
		name:    "Releasing a child whose only reference is the owner's leaves it none",
		child:   set(t, owner, configMap("apps", "only", "")),
		owner:   owner,
		changed: true,
		want:    marks{},
	}, {
		name: "Releasing a tracked child removes the tracking keys",
		child: func() client.Object {
			c := configMap("other", "c", "")
			c.Labels = map[string]string{"app": "demo"}
			return set(t, owner, c)
		}(),
		owner:   owner,
		changed: true,
		want:    marks{Labels: map[string]string{"app": "demo"}, Annotations: map[string]string{}},
	}, {
		name:    "Another owner's reference is not released",
		child:   set(t, widget("apps", "rival", "uid-rival"), configMap("apps", "c", "")),
		owner:   owner,
		changed: false,
		want: marks{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: "rival", UID: "uid-rival", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
	}, {
		name:    "Another owner's tracking is not released",
		child:   set(t, widget("apps", "rival", "uid-rival"), configMap("other", "c", "")),
		owner:   owner,
		changed: false,
		want: func() marks {
			labels, annotations := trackedBy(widget("apps", "rival", "uid-rival"))
			return marks{Labels: labels, Annotations: annotations}
		}(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(ownership.Release(tt.owner, tt.child)).To(Equal(tt.changed))
			g.Expect(marksOf(tt.child)).To(Equal(tt.want), cmp.Diff(tt.want, marksOf(tt.child)))
			g.Expect(ownership.Release(tt.owner, tt.child)).To(BeFalse(), "a second release changes nothing")
		})
	}
}
