package patch_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/patch"
)

// staleReconcile runs a Patch on a stale snapshot with the History.
func staleReconcile(g Gomega, t *testing.T, snapshot *corev1.ConfigMap, hist *patch.History, mutate func(*corev1.ConfigMap)) {
	cm := snapshot.DeepCopy()
	h, err := patch.NewWriter(env.Client(), patch.WriterOptions{History: hist}).NewHelper(cm)
	g.Expect(err).NotTo(HaveOccurred())
	mutate(cm)
	g.Expect(h.Patch(t.Context(), cm)).To(Succeed())
}

func TestAttackHistoryStaleSnapshotKeepsOtherWritersChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)
	var hist patch.History

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}, Data: map[string]string{"a": "0"}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())
	stale := cm.DeepCopy() // rv R0, what a lagging cache would still show

	// The controller's own write (rv N), recorded in the History.
	staleReconcile(g, t, stale, &hist, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl" })

	// Another writer (a user) changes a, the controller's field, and adds b (rv N+1).
	other := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), other)).To(Succeed())
	base := other.DeepCopy()
	other.Data["a"] = "user"
	other.Data["b"] = "other"
	g.Expect(c.Patch(ctx, other, client.MergeFrom(base))).To(Succeed())

	// A stale reconcile (snapshot R0 < N) wants a=ctrl again: merged onto the recorded write, nothing
	// to send; the user's edit of a and b must survive.
	staleReconcile(g, t, stale, &hist, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl" })
	got := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
	g.Expect(got.Data).To(Equal(map[string]string{"a": "user", "b": "other"}), "no user edit reverted, no change dropped")

	// A stale reconcile that changes something new (c) and also deletes a key it saw (none here),
	// must send c guarded, conflict with N+1, re-read and keep a=user, b=other.
	staleReconcile(g, t, stale, &hist, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl"; o.Data["c"] = "new" })
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
	g.Expect(got.Data).To(Equal(map[string]string{"a": "user", "b": "other", "c": "new"}))

	// Now the recorded write (the c write) carries a=user. A stale reconcile that again sets a=ctrl
	// (its snapshot says a=0) behaves as a reconcile that read that write would: it sets a=ctrl.
	// That is the promised fresh-read equivalence, not a dropped change: b and c stay.
	staleReconcile(g, t, stale, &hist, func(o *corev1.ConfigMap) {
		o.Data["a"] = "ctrl"
		o.Data["c"] = "new"
		o.Labels = map[string]string{"l": "x"}
	})
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
	g.Expect(got.Data).To(Equal(map[string]string{"a": "ctrl", "b": "other", "c": "new"}))
	g.Expect(got.Labels).To(Equal(map[string]string{"l": "x"}))

	// Baseline without History: the same stale reconcile after another user edit of a re-reads on
	// conflict and its own change of a wins the same way.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), other)).To(Succeed())
	base = other.DeepCopy()
	other.Data["a"] = "user2"
	g.Expect(c.Patch(ctx, other, client.MergeFrom(base))).To(Succeed())
	staleReconcile(g, t, stale, nil, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl" })
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
	t.Logf("without History, a stale reconcile setting a=ctrl after a user set a=user2 leaves %v", got.Data)
}

func TestAttackHistoryIgnoresAPredecessorWithTheSameName(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns := env.Namespace(t)
	var hist patch.History

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}, Data: map[string]string{"a": "0"}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())
	staleReconcile(g, t, cm, &hist, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl"; o.Data["x"] = "old" })

	g.Expect(c.Delete(ctx, cm)).To(Succeed())
	re := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}, Data: map[string]string{"a": "0"}}
	g.Expect(c.Create(ctx, re)).To(Succeed())
	g.Expect(re.UID).NotTo(Equal(cm.UID))

	// The new incarnation's reconcile sets a=ctrl: it must be sent (the old entry says a=ctrl).
	staleReconcile(g, t, re, &hist, func(o *corev1.ConfigMap) { o.Data["a"] = "ctrl" })
	got := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(re), got)).To(Succeed())
	g.Expect(got.UID).To(Equal(re.UID))
	g.Expect(got.Data).To(Equal(map[string]string{"a": "ctrl"}), "nothing of the predecessor's entry applied")

	// A snapshot of the predecessor (a cache that has not seen the deletion) patched with the
	// History: the write must not land on the new incarnation with the old entry's content (x).
	stale := cm.DeepCopy()
	cmc := stale.DeepCopy()
	h, err := patch.NewWriter(c, patch.WriterOptions{History: &hist}).NewHelper(cmc)
	g.Expect(err).NotTo(HaveOccurred())
	cmc.Data["a"] = "ctrl"
	cmc.Data["y"] = "fromstale"
	err = h.Patch(ctx, cmc)
	t.Logf("patch of predecessor snapshot: %v", err)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(re), got)).To(Succeed())
	g.Expect(got.Data).NotTo(HaveKey("x"), "the predecessor's recorded content must not reach the new incarnation")
	t.Logf("new incarnation after: %v", got.Data)
}
