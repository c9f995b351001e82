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

				var alreadyOwned *ownership.AlreadyOwnedError
				var notAdopted *ownership.NotAdoptedError
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
					g.Expect(errors.As(err, &notAdopted)).To(BeTrue(), "want a *NotAdoptedError, got %v", err)
					g.Expect(notAdopted.Policy).To(Equal(p.policy))
				case refusesAlreadyOwned, refusesPreviousIncarnation:
					g.Expect(errors.As(err, &alreadyOwned)).To(BeTrue(), "want an *AlreadyOwnedError, got %v", err)
					g.Expect(alreadyOwned.PreviousIncarnation).To(Equal(p.want == refusesPreviousIncarnation))
					g.Expect(alreadyOwned.Owner.UID).NotTo(Equal(owner.UID))
				}
				if p.want != takes {
					g.Expect(child).To(Equal(before), cmp.Diff(before, child))
				}
			})
		}
	}
}

func TestAlreadyOwnedErrorNamesTheCurrentOwner(t *testing.T) {
	g := NewWithT(t)
	rival := widget("apps", "rival", "uid-rival")
	child := configMap("other", "c", "uid-c")
	_, _, err := ownership.Set(rival, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())

	_, _, err = ownership.Set(widget("apps", "w", "uid-w"), child, scheme, ownership.AdoptAlways)
	var alreadyOwned *ownership.AlreadyOwnedError
	g.Expect(errors.As(err, &alreadyOwned)).To(BeTrue())
	want := ownership.Owner{
		Reference: ownership.Reference{Group: "test.tenon.dev", Kind: "Widget", Namespace: "apps", Name: "rival", UID: "uid-rival"},
		Mechanism: ownership.TrackingLabels,
	}
	g.Expect(alreadyOwned.Owner).To(Equal(want), cmp.Diff(want, alreadyOwned.Owner))
	g.Expect(alreadyOwned.Child).To(Equal(ownership.Reference{Kind: "ConfigMap", Namespace: "other", Name: "c", UID: "uid-c"}))
	g.Expect(err.Error()).To(Equal("ConfigMap other/c is already controlled by Widget.test.tenon.dev apps/rival (uid uid-rival, through tracking labels)"))
}
