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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

var scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(testtypes.AddToScheme(s))
	return s
}

func widget(namespace, name string, uid types.UID) *testtypes.Widget {
	return &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid}}
}

func fixture(name string, uid types.UID) *testtypes.Fixture {
	return &testtypes.Fixture{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
}

func configMap(namespace, name string, uid types.UID) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid}}
}

// controllerRef is the owner reference Set writes for w.
func controllerRef(w *testtypes.Widget) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: w.Name, UID: w.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// trackedBy returns the labels and annotations Set writes for w.
func trackedBy(w *testtypes.Widget) (labels, annotations map[string]string) {
	return map[string]string{ownership.LabelOwnerUID: string(w.UID)},
		map[string]string{
			ownership.AnnotationOwnerKind:      "Widget.test.tenon.dev",
			ownership.AnnotationOwnerNamespace: w.Namespace,
			ownership.AnnotationOwnerName:      w.Name,
		}
}

// marks is what ownership metadata a child carries.
type marks struct {
	OwnerReferences []metav1.OwnerReference
	Labels          map[string]string
	Annotations     map[string]string
}

func marksOf(obj client.Object) marks {
	return marks{OwnerReferences: obj.GetOwnerReferences(), Labels: obj.GetLabels(), Annotations: obj.GetAnnotations()}
}

func TestSetPicksTheMechanismKubernetesAllows(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	clusterOwner := fixture("f", "uid-f")
	labels, annotations := trackedBy(owner)
	tests := []struct {
		name   string
		owner  client.Object
		child  client.Object
		opts   []ownership.SetOption
		want   ownership.Mechanism
		result marks
	}{{
		name:   "A child in the owner's namespace gets a controller reference",
		owner:  owner,
		child:  configMap("apps", "c", ""),
		want:   ownership.ControllerReference,
		result: marks{OwnerReferences: []metav1.OwnerReference{controllerRef(owner)}},
	}, {
		name:   "A child in another namespace is tracked",
		owner:  owner,
		child:  configMap("other", "c", ""),
		want:   ownership.TrackingLabels,
		result: marks{Labels: labels, Annotations: annotations},
	}, {
		name:   "A cluster-scoped child of a namespaced owner is tracked",
		owner:  owner,
		child:  fixture("c", ""),
		want:   ownership.TrackingLabels,
		result: marks{Labels: labels, Annotations: annotations},
	}, {
		name:  "A cluster-scoped owner references a namespaced child",
		owner: clusterOwner,
		child: configMap("apps", "c", ""),
		want:  ownership.ControllerReference,
		result: marks{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "test.tenon.dev/v1", Kind: "Fixture", Name: "f", UID: "uid-f", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
	}, {
		name:  "A cluster-scoped owner references a cluster-scoped child",
		owner: clusterOwner,
		child: fixture("c", ""),
		want:  ownership.ControllerReference,
		result: marks{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "test.tenon.dev/v1", Kind: "Fixture", Name: "f", UID: "uid-f", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
	}, {
		name:  "A cluster-scoped owner that must track records no namespace",
		owner: clusterOwner,
		child: configMap("apps", "c", ""),
		opts:  []ownership.SetOption{ownership.RequireMechanism(ownership.TrackingLabels)},
		want:  ownership.TrackingLabels,
		result: marks{
			Labels:      map[string]string{ownership.LabelOwnerUID: "uid-f"},
			Annotations: map[string]string{ownership.AnnotationOwnerKind: "Fixture.test.tenon.dev", ownership.AnnotationOwnerName: "f"},
		},
	}, {
		name:   "Requiring tracking tracks a child in the owner's namespace",
		owner:  owner,
		child:  configMap("apps", "c", ""),
		opts:   []ownership.SetOption{ownership.RequireMechanism(ownership.TrackingLabels)},
		want:   ownership.TrackingLabels,
		result: marks{Labels: labels, Annotations: annotations},
	}, {
		name:  "Without BlockOwnerDeletion the reference does not block",
		owner: owner,
		child: configMap("apps", "c", ""),
		opts:  []ownership.SetOption{ownership.BlockOwnerDeletion(false)},
		want:  ownership.ControllerReference,
		result: marks{OwnerReferences: []metav1.OwnerReference{func() metav1.OwnerReference {
			r := controllerRef(owner)
			r.BlockOwnerDeletion = ptr.To(false)
			return r
		}()}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mechanism, changed, err := ownership.Set(tt.owner, tt.child, scheme, tt.opts...)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mechanism).To(Equal(tt.want))
			g.Expect(changed).To(BeTrue())
			g.Expect(marksOf(tt.child)).To(Equal(tt.result), cmp.Diff(tt.result, marksOf(tt.child)))
			g.Expect(ownership.Owns(tt.owner, tt.child)).To(BeTrue(), "the owner owns the child")

			// A second call changes nothing: a steady-state reconcile writes nothing.
			before := tt.child.DeepCopyObject()
			mechanism, changed, err = ownership.Set(tt.owner, tt.child, scheme, tt.opts...)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mechanism).To(Equal(tt.want))
			g.Expect(changed).To(BeFalse())
			g.Expect(tt.child).To(Equal(before), cmp.Diff(before, tt.child))
		})
	}
}

func TestSetRefusesWhatKubernetesWouldReject(t *testing.T) {
	owner := widget("apps", "w", "uid-w")
	tests := []struct {
		name   string
		owner  client.Object
		child  client.Object
		scheme *runtime.Scheme // defaults to the test scheme
		opts   []ownership.SetOption
		check  func(g Gomega, err error)
	}{{
		name:  "An owner reference across namespaces is a scope error",
		owner: owner,
		child: configMap("other", "c", ""),
		opts:  []ownership.SetOption{ownership.RequireMechanism(ownership.ControllerReference)},
		check: func(g Gomega, err error) {
			var scopeErr *ownership.ScopeError
			g.Expect(errors.As(err, &scopeErr)).To(BeTrue())
			g.Expect(err).To(MatchError("cannot make Widget.test.tenon.dev apps/w the owner of ConfigMap other/c through an owner reference: owner references cannot cross namespaces"))
		},
	}, {
		name:  "An owner reference from a cluster-scoped child to a namespaced owner is a scope error",
		owner: owner,
		child: fixture("c", ""),
		opts:  []ownership.SetOption{ownership.RequireMechanism(ownership.ControllerReference)},
		check: func(g Gomega, err error) {
			var scopeErr *ownership.ScopeError
			g.Expect(errors.As(err, &scopeErr)).To(BeTrue())
			g.Expect(err).To(MatchError(ContainSubstring("a cluster-scoped object cannot have a namespaced owner")))
		},
	}, {
		name:  "An owner without a UID is an error",
		owner: widget("apps", "w", ""),
		child: configMap("apps", "c", ""),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("has no UID")))
		},
	}, {
		name:  "An owner without a name is an error",
		owner: widget("apps", "", "uid-w"),
		child: configMap("apps", "c", ""),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("has no name")))
		},
	}, {
		name:  "An owner whose UID is not a label value is an error",
		owner: widget("apps", "w", "not a label value!"),
		child: configMap("other", "c", ""),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("not a valid label value")))
		},
	}, {
		name:  "An object cannot own itself",
		owner: configMap("apps", "c", "uid-c"),
		child: configMap("apps", "c", "uid-c"),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("cannot own itself")))
		},
	}, {
		name:   "An owner of a kind the scheme does not know is an error",
		owner:  owner,
		child:  configMap("apps", "c", ""),
		scheme: runtime.NewScheme(),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("failed to find the kind of the owner")))
		},
	}, {
		name:  "An unknown adoption policy is an error",
		owner: owner,
		child: configMap("apps", "c", ""),
		opts:  []ownership.SetOption{ownership.AdoptionPolicy("Sometimes")},
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring(`unknown adoption policy "Sometimes"`)))
		},
	}, {
		name:  "An unknown mechanism is an error",
		owner: owner,
		child: configMap("apps", "c", ""),
		opts:  []ownership.SetOption{ownership.RequireMechanism("Telepathy")},
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring(`unknown mechanism "Telepathy"`)))
		},
	}, {
		name:  "A nil child is an error",
		owner: owner,
		child: (*corev1.ConfigMap)(nil),
		check: func(g Gomega, err error) {
			g.Expect(err).To(MatchError(ContainSubstring("must not be nil")))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := tt.scheme
			if s == nil {
				s = scheme
			}
			var before runtime.Object
			if tt.child != (*corev1.ConfigMap)(nil) {
				before = tt.child.DeepCopyObject()
			}
			mechanism, changed, err := ownership.Set(tt.owner, tt.child, s, tt.opts...)
			g.Expect(err).To(HaveOccurred())
			tt.check(g, err)
			g.Expect(mechanism).To(BeEmpty())
			g.Expect(changed).To(BeFalse())
			if before != nil {
				g.Expect(tt.child).To(Equal(before), "an error leaves the child as it was")
			}
		})
	}
}

func TestRequiringAnOwnerReferenceWhereKubernetesForbidsOneIsAScopeError(t *testing.T) {
	tests := []struct {
		name         string
		owner, child client.Object
		want         string // the ScopeError's message; empty when the reference is allowed
	}{
		{"Owner and child in one namespace may be referenced", widget("apps", "w", "u"), configMap("apps", "c", ""), ""},
		{"A cluster-scoped owner may be referenced from any namespace", fixture("f", "u"), configMap("apps", "c", ""), ""},
		{"A cluster-scoped owner may be referenced from a cluster-scoped child", fixture("f", "u"), fixture("c", ""), ""},
		{
			"A namespaced owner may not be referenced from another namespace", widget("apps", "w", "u"), configMap("other", "c", ""),
			"cannot make Widget.test.tenon.dev apps/w the owner of ConfigMap other/c through an owner reference: owner references cannot cross namespaces",
		},
		{
			"A namespaced owner may not be referenced from a cluster-scoped child", widget("apps", "w", "u"), fixture("c", ""),
			"cannot make Widget.test.tenon.dev apps/w the owner of Fixture.test.tenon.dev c through an owner reference: a cluster-scoped object cannot have a namespaced owner",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			mechanism, _, err := ownership.Set(tt.owner, tt.child, scheme, ownership.RequireMechanism(ownership.ControllerReference))
			if tt.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(mechanism).To(Equal(ownership.ControllerReference))
				return
			}
			var scopeErr *ownership.ScopeError
			g.Expect(errors.As(err, &scopeErr)).To(BeTrue(), "want a *ScopeError, got %v", err)
			g.Expect(err.Error()).To(Equal(tt.want))
		})
	}
}

func TestSetKeepsWhatIsNotItsOwn(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d"}
	child := configMap("other", "c", "")
	child.Labels = map[string]string{"app": "demo"}
	child.Annotations = map[string]string{"note": "keep me"}
	child.OwnerReferences = []metav1.OwnerReference{other}

	_, _, err := ownership.Set(owner, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	labels, annotations := trackedBy(owner)
	labels["app"] = "demo"
	annotations["note"] = "keep me"
	want := marks{OwnerReferences: []metav1.OwnerReference{other}, Labels: labels, Annotations: annotations}
	g.Expect(marksOf(child)).To(Equal(want), cmp.Diff(want, marksOf(child)))
}

func TestSetLeavesOneMarkWhenTheMechanismChanges(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d"}
	child := configMap("apps", "c", "uid-c")
	child.OwnerReferences = []metav1.OwnerReference{other}
	child.Labels = map[string]string{"app": "demo"}

	_, _, err := ownership.Set(owner, child, scheme, ownership.AdoptAlways)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(child.OwnerReferences).To(Equal([]metav1.OwnerReference{other, controllerRef(owner)}))

	mechanism, changed, err := ownership.Set(owner, child, scheme, ownership.RequireMechanism(ownership.TrackingLabels))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mechanism).To(Equal(ownership.TrackingLabels))
	g.Expect(changed).To(BeTrue())
	labels, annotations := trackedBy(owner)
	labels["app"] = "demo"
	want := marks{OwnerReferences: []metav1.OwnerReference{other}, Labels: labels, Annotations: annotations}
	g.Expect(marksOf(child)).To(Equal(want), cmp.Diff(want, marksOf(child)))

	mechanism, changed, err = ownership.Set(owner, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mechanism).To(Equal(ownership.ControllerReference))
	g.Expect(changed).To(BeTrue())
	want = marks{OwnerReferences: []metav1.OwnerReference{other, controllerRef(owner)}, Labels: map[string]string{"app": "demo"}, Annotations: map[string]string{}}
	g.Expect(marksOf(child)).To(Equal(want), cmp.Diff(want, marksOf(child)))
}

// The owner's controller reference, the child's only one, goes when the owner tracks the child
// instead.
func TestSetRemovesTheOnlyReferenceWhenTheOwnerTracksInstead(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	child := configMap("apps", "c", "uid-c")
	_, _, err := ownership.Set(owner, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(child.OwnerReferences).To(Equal([]metav1.OwnerReference{controllerRef(owner)}))

	_, changed, err := ownership.Set(owner, child, scheme, ownership.RequireMechanism(ownership.TrackingLabels))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(child.OwnerReferences).To(BeEmpty())
}

// A cluster-scoped owner's previous incarnation is found by a namespaced child's controller
// reference too: an owner reference names no namespace.
func TestAClusterScopedOwnersPreviousIncarnationIsKnownFromANamespacedChild(t *testing.T) {
	g := NewWithT(t)
	previous := fixture("f", "uid-f-old")
	child := configMap("apps", "c", "uid-c")
	_, _, err := ownership.Set(previous, child, scheme)
	g.Expect(err).NotTo(HaveOccurred())

	_, _, err = ownership.Set(fixture("f", "uid-f"), child, scheme)
	var refused *ownership.AdoptionError
	g.Expect(errors.As(err, &refused)).To(BeTrue(), "%v", err)
	g.Expect(refused.PreviousIncarnation).To(BeTrue())
	_, _, err = ownership.Set(fixture("f", "uid-f"), child, scheme, ownership.AdoptAlways)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(child.OwnerReferences).To(HaveLen(1))
	g.Expect(child.OwnerReferences[0].UID).To(BeEquivalentTo("uid-f"))
}

func TestSetUpgradesTheOwnersOwnReferenceToController(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	child := configMap("apps", "c", "uid-c")
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "test.tenon.dev/v1", Kind: "Widget", Name: "w", UID: "uid-w"}}

	_, changed, err := ownership.Set(owner, child, scheme, ownership.AdoptNever)
	g.Expect(err).NotTo(HaveOccurred(), "a child that references the owner already is not adopted, whatever the policy")
	g.Expect(changed).To(BeTrue())
	g.Expect(child.OwnerReferences).To(Equal([]metav1.OwnerReference{controllerRef(owner)}))
}

func TestSetDoesNotModifyMapsSharedBetweenChildren(t *testing.T) {
	g := NewWithT(t)
	owner := widget("apps", "w", "uid-w")
	shared := map[string]string{"app": "demo"}
	remote, local := configMap("other", "remote", ""), configMap("apps", "local", "")
	remote.Labels, local.Labels = shared, shared
	remote.Annotations, local.Annotations = shared, shared

	set(t, owner, remote)
	set(t, owner, local)
	g.Expect(shared).To(Equal(map[string]string{"app": "demo"}))
	g.Expect(remote.Labels).To(HaveKeyWithValue(ownership.LabelOwnerUID, "uid-w"))
	g.Expect(local.Labels).NotTo(HaveKey(ownership.LabelOwnerUID))
}

// A child in another namespace whose controller reference names the owner's uid (one the API
// server accepts, though the garbage collector never resolves it across namespaces) loses it
// when the owner tracks the child: the reference is the owner's, whatever namespace the child is
// in.
func TestSetRemovesTheOwnersReferenceFromAChildInAnotherNamespace(t *testing.T) {
	g := NewWithT(t)
	owner := widget("a", "web", "uid-web")
	child := configMap("b", "c", "uid-c")
	child.OwnerReferences = []metav1.OwnerReference{controllerRef(owner)}

	mechanism, changed, err := ownership.Set(owner, child, scheme)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mechanism).To(Equal(ownership.TrackingLabels))
	g.Expect(changed).To(BeTrue())
	g.Expect(child.OwnerReferences).To(BeEmpty())
}
