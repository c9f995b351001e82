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
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/conditions/observe"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
)

// TestPreviousIsTheServersObjectWhenTheMetadataIsWrittenFirst reconciles from a snapshot
// older than the server's object: the server already holds Ready=True (an earlier reconcile
// wrote it; the cache has not delivered it). This reconcile sets an annotation and Ready=True.
// Patch writes the annotation, then merges the status onto the object that request returned,
// finds Ready already True and sends nothing more. Helper.Previous promises "the object as the
// API server held it when the last Patch merged the reconcile's changes onto it, before that
// Patch wrote anything", so that observe.RecordEvents(Previous, after) records no transition:
// Ready was True before and after this Patch.
func TestPreviousIsTheServersObjectWhenTheMetadataIsWrittenFirst(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	stale := w.DeepCopy() // what the cache holds: no conditions yet

	// The earlier reconcile's status write, which the cache has not delivered.
	earlier := w.DeepCopy()
	h, err := patch.NewHelper(earlier, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(earlier, conditions.Ready, conditions.ReasonSucceeded, "")
	g.Expect(h.Patch(ctx, earlier, patch.OwnedConditions{conditions.Ready})).To(Succeed())

	// This reconcile, from the stale snapshot.
	obj := stale.DeepCopy()
	h, err = patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	metav1.SetMetaDataAnnotation(&obj.ObjectMeta, "example.com/config-hash", "abc")
	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "")
	g.Expect(h.Patch(ctx, obj, patch.OwnedConditions{conditions.Ready})).To(Succeed())

	previous := h.Previous().(*testtypes.Widget)
	recorder := events.NewFakeRecorder(10)
	observe.RecordEvents(recorder, obj, previous.Status.Conditions, obj.Status.Conditions)
	g.Expect(conditions.IsTrue(previous, conditions.Ready)).To(BeTrue(),
		"the server held Ready=True when this Patch merged its status onto it, yet Previous has %v", previous.Status.Conditions)
	g.Expect(recorder.Events).To(BeEmpty(), "Ready was True before and after: no transition to record")
}

// TestTwoControllerReferencesMergedByTheHelperAreAConflictNotAnInvalidObject has a
// reconcile adopt a child it read unowned (controllerutil.SetControllerReference, then Patch)
// while another controller adopted it after that read. The Helper merges owner references as a
// set by uid, which here yields two controller references, and the API server refuses the
// object with a 422 ("Only one reference can have Controller set to true"). The package
// documentation promises that "where both changed the same thing and the change cannot be
// merged, the write is refused with a conflict rather than lose theirs"; a 422 is classed as an
// invalid request (requeue makes it terminal: the owner is marked Stalled over a lost race).
func TestTwoControllerReferencesMergedByTheHelperAreAConflictNotAnInvalidObject(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ours"}}
	rival := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rival"}}
	g.Expect(env.Client().Create(ctx, owner)).To(Succeed())
	g.Expect(env.Client().Create(ctx, rival)).To(Succeed())
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}, Data: map[string]string{"k": "v"}}
	g.Expect(env.Client().Create(ctx, child)).To(Succeed())
	read := child.DeepCopy()

	// The rival adopts the child after our read.
	theirs := child.DeepCopy()
	g.Expect(controllerutil.SetControllerReference(rival, theirs, env.Scheme())).To(Succeed())
	g.Expect(env.Client().Update(ctx, theirs)).To(Succeed())

	h, err := patch.NewHelper(read, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(controllerutil.SetControllerReference(owner, read, env.Scheme())).To(Succeed())
	err = h.Patch(ctx, read)

	g.Expect(err).To(HaveOccurred(), "the child is the rival's: it cannot be ours too")
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "a lost race is a conflict, not %v (invalid: %v, class %v)",
		err, apierrors.IsInvalid(err), requeue.Classify(err))
	live := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(child), live)).To(Succeed())
	g.Expect(metav1.GetControllerOf(live).UID).To(Equal(rival.UID))
}

// TestAFinalizerAddedByTheHelperToAnObjectDeletedMeanwhileIsNoInvalidRequest follows the
// package's headline example (controllerutil.AddFinalizer, a condition, one deferred Patch) on
// an object that was deleted after the reconcile read it (another finalizer holds it). The
// finalizer package documents that "patch.Helper writes the list just as safely" as
// finalizer.Ensure, which returns false and no error when the object is being deleted ("Never
// add a finalizer to an object being deleted ... Ensure returns false and no error instead").
// The Helper returns the API server's 422, which requeue classes as invalid, terminal.
func TestAFinalizerAddedByTheHelperToAnObjectDeletedMeanwhileIsNoInvalidRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Finalizers: []string{"other.example.com/keep"}}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	read := w.DeepCopy()
	g.Expect(env.Client().Delete(ctx, w)).To(Succeed())
	t.Cleanup(func() {
		live := &testtypes.Widget{}
		if env.Client().Get(context.Background(), client.ObjectKeyFromObject(w), live) == nil {
			live.Finalizers = nil
			_ = env.Client().Update(context.Background(), live)
		}
	})

	h, err := patch.NewHelper(read, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	controllerutil.AddFinalizer(read, "apps.example.com/cleanup")
	conditions.MarkTrue(read, conditions.Ready, conditions.ReasonSucceeded, "")
	err = h.Patch(ctx, read, patch.OwnedConditions{conditions.Ready})

	g.Expect(err == nil || requeue.Classify(err) != requeue.ClassInvalid).To(BeTrue(),
		"a deletion that raced the reconcile is no invalid request: %v (class %v)", err, requeue.Classify(err))
}

// oldGateway is Gateway API's Gateway as the Go types of an older release, or a trimmed-down
// copy in an operator, know it: a listener has a name, a port and a protocol, and no hostname.
type oldGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              oldGatewaySpec `json:"spec"`
}

type oldGatewaySpec struct {
	GatewayClassName string        `json:"gatewayClassName"`
	Listeners        []oldListener `json:"listeners"`
}

type oldListener struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
}

func (g *oldGateway) DeepCopyObject() runtime.Object {
	out := *g
	g.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Listeners = slices.Clone(g.Spec.Listeners)
	return &out
}

// TestAListWrittenFromATypeThatLacksAFieldIsNotWrittenOverTheServersFields reconciles a
// Gateway with Go types that do not know a listener's hostname (the CRD was upgraded before the
// controller, as upgrades are done, or the operator keeps a trimmed copy of the types). A person
// set the hostname of the listener "http". The reconcile adds a listener. The Helper's guard
// sees that the list on the server is not the list the typed object shows, and the Helper then
// writes the list on the resourceVersion instead, silently dropping the hostname. The package
// promises that "another writer's data (a finalizer, a label, a condition, a list element, a
// field) is never dropped: where both changed the same thing and the change cannot be merged,
// the write is refused with a conflict rather than lose theirs".
func TestAListWrittenFromATypeThatLacksAFieldIsNotWrittenOverTheServersFields(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	gv := schema.GroupVersion{Group: "gateway.networking.k8s.io", Version: "v1"}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("Gateway"), &oldGateway{})
	metav1.AddToGroupVersion(scheme, gv)
	base, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	c := countRequests(base)

	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "Gateway",
		"metadata": map[string]any{"namespace": ns, "name": "web"},
		"spec": map[string]any{"gatewayClassName": "example", "listeners": []any{
			map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP", "hostname": "www.example.com"},
		}},
	}}
	g.Expect(env.Client().Create(ctx, gw)).To(Succeed())

	obj := &oldGateway{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gw), obj)).To(Succeed())
	h, err := patch.NewHelper(obj, c)
	g.Expect(err).NotTo(HaveOccurred())
	obj.Spec.Listeners = append(obj.Spec.Listeners, oldListener{Name: "alt", Port: 8080, Protocol: "HTTP"})
	err = h.Patch(ctx, obj)
	t.Logf("requests: %v", c.take())

	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gw.GroupVersionKind())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(gw), live)).To(Succeed())
	listeners, _, _ := unstructured.NestedSlice(live.Object, "spec", "listeners")
	hostname, _, _ := unstructured.NestedString(listeners[0].(map[string]any), "hostname")
	g.Expect(hostname == "www.example.com" || apierrors.IsConflict(err)).To(BeTrue(),
		"Patch returned %v and the listeners are now %v: the hostname is gone", err, listeners)
}
