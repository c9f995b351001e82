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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/ownership"
)

// outcome is what Set does with a child under a policy.
type outcome int

const (
	takes outcome = iota
	refusesNotAdopted
	refusesAlreadyOwned
	refusesPreviousIncarnation
)

func TestAdoptionPolicies(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	previous := widget("apps", "w", "uid-w-old")
	rival := widget("apps", "rival", "uid-rival")
	dependent := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d"}
	trackedLabels := func(w client.Object, child client.Object) client.Object {
		_, _, err := ownership.Set(w, child, scheme, ownership.RequireMechanism(ownership.TrackingLabels))
		if err != nil {
			t.Fatal(err)
		}
		return child
	}
	referenced := func(w client.Object, child client.Object) client.Object {
		_, _, err := ownership.Set(w, child, scheme, ownership.RequireMechanism(ownership.ControllerReference))
		if err != nil {
			t.Fatal(err)
		}
		return child
	}
	withRefs := func(child *corev1.ConfigMap, refs ...metav1.OwnerReference) *corev1.ConfigMap {
		child.OwnerReferences = refs
		return child
	}

	tests := []struct {
		name   string
		child  func() client.Object // the child as Set sees it
		live   func() client.Object // passed with Existing when not nil
		never  outcome
		unown  outcome
		always outcome
	}{{
		name:  "A child being created is taken under every policy",
		child: func() client.Object { return configMap("apps", "c", "") },
		never: takes, unown: takes, always: takes,
	}, {
		name:  "A child the owner controls already is kept under every policy",
		child: func() client.Object { return referenced(owner, configMap("apps", "c", "uid-c")) },
		never: takes, unown: takes, always: takes,
	}, {
		name:  "A child the owner tracks already is kept under every policy",
		child: func() client.Object { return trackedLabels(owner, configMap("other", "c", "uid-c")) },
		never: takes, unown: takes, always: takes,
	}, {
		name:  "An existing unowned child is adopted unless the policy is Never",
		child: func() client.Object { return configMap("apps", "c", "uid-c") },
		never: refusesNotAdopted, unown: takes, always: takes,
	}, {
		name:  "An existing child with another owner's non-controller reference is adopted only under Always",
		child: func() client.Object { return withRefs(configMap("apps", "c", "uid-c"), dependent) },
		never: refusesNotAdopted, unown: refusesNotAdopted, always: takes,
	}, {
		name:  "A child another owner controls by reference is never taken",
		child: func() client.Object { return referenced(rival, configMap("apps", "c", "uid-c")) },
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name:  "A child another owner tracks is never taken",
		child: func() client.Object { return trackedLabels(rival, configMap("other", "c", "uid-c")) },
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name: "A child another owner controls is never taken, even before it exists",
		child: func() client.Object {
			return withRefs(configMap("apps", "c", ""), metav1.OwnerReference{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "uid-rs", Controller: ptr.To(true),
			})
		},
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name: "A child of an owner of the same name in another namespace is never taken",
		child: func() client.Object {
			return trackedLabels(widget("elsewhere", "w", "uid-w-2"), configMap("other", "c", "uid-c"))
		},
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name:  "A child a previous incarnation referenced is taken only under Always",
		child: func() client.Object { return referenced(previous, configMap("apps", "c", "uid-c")) },
		never: refusesPreviousIncarnation, unown: refusesPreviousIncarnation, always: takes,
	}, {
		name: "A child controlled by a Widget of the same name in the child's namespace is another owner's, not an incarnation",
		child: func() client.Object {
			return referenced(widget("other", "w", "uid-w-other"), configMap("other", "c", "uid-c"))
		},
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name:  "A child a previous incarnation tracked is taken only under Always",
		child: func() client.Object { return trackedLabels(previous, configMap("other", "c", "uid-c")) },
		never: refusesPreviousIncarnation, unown: refusesPreviousIncarnation, always: takes,
	}, {
		name:  "With server-side apply, the live object's owner is never robbed",
		child: func() client.Object { return configMap("apps", "c", "") },
		live:  func() client.Object { return referenced(rival, configMap("apps", "c", "uid-c")) },
		never: refusesAlreadyOwned, unown: refusesAlreadyOwned, always: refusesAlreadyOwned,
	}, {
		name:  "With server-side apply, the policy applies to the live object",
		child: func() client.Object { return configMap("apps", "c", "") },
		live:  func() client.Object { return withRefs(configMap("apps", "c", "uid-c"), dependent) },
		never: refusesNotAdopted, unown: refusesNotAdopted, always: takes,
	}, {
		name:  "With server-side apply, a live object that was not found is created",
		child: func() client.Object { return configMap("apps", "c", "") },
		live:  func() client.Object { return &corev1.ConfigMap{} },
		never: takes, unown: takes, always: takes,
	}}
	for _, tt := range tests {
		for _, p := range []struct {
			policy ownership.AdoptionPolicy
			want   outcome
		}{{ownership.AdoptNever, tt.never}, {ownership.AdoptIfUnowned, tt.unown}, {ownership.AdoptAlways, tt.always}} {
			t.Run(tt.name+"/"+string(p.policy), func(t *testing.T) {
				g := NewWithT(t)
				child := tt.child()
				opts := []ownership.SetOption{p.policy}
				if tt.live != nil {
					opts = append(opts, ownership.Existing{Object: tt.live()})
				}
				before := child.DeepCopyObject().(client.Object)
				_, _, err := ownership.Set(owner, child, scheme, opts...)

				var refused *ownership.AdoptionError
				switch p.want {
				case takes:
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(ownership.Owns(owner, child)).To(BeTrue())
					current, _ := ownership.OwnerOf(child)
					g.Expect(current.UID).To(Equal(owner.UID), "the owner is the only controller")
					for _, o := range []client.Object{previous, rival} {
						g.Expect(ownership.Owns(o, child)).To(BeFalse(), "no mark of %s is left", o.GetUID())
					}
				case refusesNotAdopted:
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
					g.Expect(refused.Policy).To(Equal(p.policy))
					g.Expect(refused.Owner).To(BeNil(), "nobody controls the child")
				case refusesAlreadyOwned, refusesPreviousIncarnation:
					g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
					g.Expect(refused.Policy).To(Equal(p.policy))
					g.Expect(refused.PreviousIncarnation).To(Equal(p.want == refusesPreviousIncarnation))
					g.Expect(refused.Owner).NotTo(BeNil(), "the error names the current owner")
					g.Expect(refused.Owner.UID).NotTo(Equal(owner.UID))
				}
				if p.want != takes {
					g.Expect(child).To(Equal(before), cmp.Diff(before, child))
				}
			})
		}
	}
}

func TestAdoptionErrorNamesTheCurrentOwner(t *testing.T) {
	g := NewWithT(t)
	rival := widget("apps", "rival", "uid-rival")
	child := configMap("other", "c", "uid-c")
	_, _, err := ownership.Set(rival, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())

	_, _, err = ownership.Set(widget("apps", "w", "uid-w"), child, scheme, ownership.AdoptAlways)
	var refused *ownership.AdoptionError
	g.Expect(errors.As(err, &refused)).To(BeTrue())
	want := &ownership.Owner{Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "rival", UID: "uid-rival", Mechanism: ownership.TrackingLabels}
	g.Expect(refused.Owner).To(Equal(want), cmp.Diff(want, refused.Owner))
	g.Expect(err.Error()).To(Equal("ConfigMap other/c is already controlled by Widget.test.tenon.dev apps/rival (uid uid-rival, through tracking labels)"))
}

func TestAdoptionErrorSaysWhyAnUnownedChildIsRefused(t *testing.T) {
	dependent := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d"}
	for _, tt := range []struct {
		name   string
		child  *corev1.ConfigMap
		policy ownership.AdoptionPolicy
		refs   []metav1.OwnerReference
		want   string
	}{{
		name:   "Never refuses any existing child",
		child:  configMap("apps", "c", "uid-c"),
		policy: ownership.AdoptNever,
		want:   "refusing to adopt existing ConfigMap apps/c: the adoption policy is Never",
	}, {
		name: "IfUnowned refuses a child with other owners' references and names them",
		child: func() *corev1.ConfigMap {
			c := configMap("apps", "c", "uid-c")
			c.OwnerReferences = []metav1.OwnerReference{dependent}
			return c
		}(),
		policy: ownership.AdoptIfUnowned,
		refs:   []metav1.OwnerReference{dependent},
		want:   "refusing to adopt existing ConfigMap apps/c: it has owner references to Deployment.apps d, and the adoption policy is IfUnowned",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, _, err := ownership.Set(widget("apps", "w", "uid-w"), tt.child, scheme, tt.policy)
			var refused *ownership.AdoptionError
			g.Expect(errors.As(err, &refused)).To(BeTrue(), "want an *AdoptionError, got %v", err)
			g.Expect(refused.Owner).To(BeNil())
			g.Expect(refused.PreviousIncarnation).To(BeFalse())
			g.Expect(refused.Policy).To(Equal(tt.policy))
			g.Expect(refused.OwnerReferences).To(Equal(tt.refs), cmp.Diff(tt.refs, refused.OwnerReferences))
			g.Expect(err.Error()).To(Equal(tt.want))
		})
	}
}
