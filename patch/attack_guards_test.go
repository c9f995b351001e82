package patch_test

// Attacks on two guards of the Helper's condition diff that look redundant and are not:
//  1. the test of an owned condition's lastTransitionTime when the write changes its status;
//  2. the test of the type of every kept, unchanged condition when conditions are dropped.
//
// On a list keyed by type (Widget's) neither changes the outcome; on a list that may hold two
// conditions of one type (Flux's GitRepository), each is what tells that another writer inserted
// a condition of a type the write touches: without them the Helper overwrote or removed the other
// writer's condition (see the tests with a second condition of a type).
//
// Each test makes a rival write between the Helper's snapshot and its write (the snapshot is
// base for the first request, so a rival write before Patch is exactly that race), then checks
// the outcome against the contract: nothing of the rival's lost, no edit reverted, the
// transition time the latest object's while the status stays and the write's when it changes.

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/realkinds"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
)

var (
	atkT0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	atkT1 = metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	atkT2 = metav1.NewTime(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))
)

func atkCond(t conditions.Type, s metav1.ConditionStatus, reason, msg string, ltt metav1.Time) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: reason, Message: msg, LastTransitionTime: ltt}
}

const atkSynced conditions.Type = "Synced"

// atkWidget creates a Widget with the given conditions in its status and returns it as the
// server has it (the reconcile's snapshot).
func atkWidget(t *testing.T, g Gomega, conds ...metav1.Condition) *testtypes.Widget {
	t.Helper()
	ctx := t.Context()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "w"}}
	g.Expect(env.Client().Create(ctx, w)).To(Succeed())
	w.Status.Conditions = conds
	g.Expect(env.Client().Status().Update(ctx, w)).To(Succeed())
	return w.DeepCopy()
}

// atkRival reads the Widget afresh, lets change edit it, and writes its status (an Update,
// guarded by the resourceVersion it read).
func atkRival(t *testing.T, g Gomega, key client.ObjectKey, change func(w *testtypes.Widget)) *testtypes.Widget {
	t.Helper()
	w := &testtypes.Widget{}
	g.Expect(env.Client().Get(t.Context(), key, w)).To(Succeed())
	change(w)
	g.Expect(env.Client().Status().Update(t.Context(), w)).To(Succeed())
	return w
}

func atkGet(t *testing.T, g Gomega, key client.ObjectKey) *testtypes.Widget {
	t.Helper()
	w := &testtypes.Widget{}
	g.Expect(env.Client().Get(t.Context(), key, w)).To(Succeed())
	return w
}

// Guard 1: another writer flips the owned Ready False->True->False (a new transition time)
// between the snapshot and our write of Ready=True. The status test still passes; ours is a
// transition from the latest False, so its time must be ours, and Synced (theirs) stays.
func TestAttackOwnedDoubleFlipBeforeOurTransition(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	snap := atkWidget(t, g,
		atkCond(conditions.Ready, metav1.ConditionFalse, "Waiting", "old", atkT0),
		atkCond(atkSynced, metav1.ConditionTrue, "Synced", "theirs", atkT0))
	key := client.ObjectKeyFromObject(snap)
	obj := snap.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())

	atkRival(t, g, key, func(w *testtypes.Widget) {
		w.Status.Conditions[0] = atkCond(conditions.Ready, metav1.ConditionTrue, "Up", "rival up", atkT1)
	})
	atkRival(t, g, key, func(w *testtypes.Widget) {
		w.Status.Conditions[0] = atkCond(conditions.Ready, metav1.ConditionFalse, "Down", "rival down", atkT2)
		w.Status.Conditions[1].Message = "theirs, later"
	})

	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "ours")
	ours := conditions.Get(obj, conditions.Ready).LastTransitionTime
	g.Expect(h.Patch(ctx, obj, patch.OwnedConditions{conditions.Ready})).To(Succeed())

	got := atkGet(t, g, key)
	r := conditions.Get(got, conditions.Ready)
	g.Expect(r.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(r.Message).To(Equal("ours"))
	g.Expect(r.LastTransitionTime.Equal(&ours)).To(BeTrue(), "a transition from the latest False is the write's: %v", r.LastTransitionTime)
	g.Expect(conditions.Get(got, atkSynced).Message).To(Equal("theirs, later"))
	g.Expect(got.Status.Conditions).To(HaveLen(2))
}

// Guard 1: another writer flips the owned Ready to True, the status we write, before our write.
// The status guard fails; the retry must keep the latest time (the status stays from latest).
func TestAttackOwnedFlippedToOurStatusKeepsTheirTime(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	snap := atkWidget(t, g,
		atkCond(conditions.Ready, metav1.ConditionFalse, "Waiting", "old", atkT0),
		atkCond(atkSynced, metav1.ConditionTrue, "Synced", "theirs", atkT0))
	key := client.ObjectKeyFromObject(snap)
	obj := snap.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())

	atkRival(t, g, key, func(w *testtypes.Widget) {
		w.Status.Conditions[0] = atkCond(conditions.Ready, metav1.ConditionTrue, "Up", "rival up", atkT1)
	})
	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "ours")
	g.Expect(h.Patch(ctx, obj, patch.OwnedConditions{conditions.Ready})).To(Succeed())

	got := atkGet(t, g, key)
	r := conditions.Get(got, conditions.Ready)
	g.Expect(r.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(r.Message).To(Equal("ours"))
	g.Expect(r.LastTransitionTime.Equal(&atkT1)).To(BeTrue(), "the status stays from latest: latest's time, got %v", r.LastTransitionTime)
}

// Guard 1: a stale worker of the same controller (same field manager, same Helper code) already
// wrote Ready=True, then a third writer set it back to False with a later time. Our stale
// write of True is a transition again: our time, and the other conditions untouched.
func TestAttackStaleWorkerThenThirdWriterBeforeOurTransition(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	snap := atkWidget(t, g,
		atkCond(conditions.Ready, metav1.ConditionFalse, "Waiting", "old", atkT0),
		atkCond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "working", atkT0),
		atkCond(atkSynced, metav1.ConditionTrue, "Synced", "theirs", atkT0))
	key := client.ObjectKeyFromObject(snap)

	// The stale worker: same snapshot, same Helper, writes Ready=True and drops Reconciling.
	other := snap.DeepCopy()
	ho, err := patch.NewHelper(other, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	conditions.Set(other, atkCond(conditions.Ready, metav1.ConditionTrue, "Up", "worker", atkT1))
	conditions.Delete(other, conditions.Reconciling)
	g.Expect(ho.Patch(ctx, other, patch.OwnedConditions{conditions.Ready, conditions.Reconciling})).To(Succeed())
	// A third writer: Ready back to False, at T2.
	atkRival(t, g, key, func(w *testtypes.Widget) {
		conditions.Set(w, atkCond(conditions.Ready, metav1.ConditionFalse, "Down", "third", atkT2))
	})

	obj := snap.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "ours")
	conditions.Delete(obj, conditions.Reconciling)
	ours := conditions.Get(obj, conditions.Ready).LastTransitionTime
	g.Expect(h.Patch(ctx, obj, patch.OwnedConditions{conditions.Ready, conditions.Reconciling})).To(Succeed())

	got := atkGet(t, g, key)
	g.Expect(got.Status.Conditions).To(HaveLen(2))
	r := conditions.Get(got, conditions.Ready)
	g.Expect(r.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(r.LastTransitionTime.Equal(&ours)).To(BeTrue(), "got %v", r.LastTransitionTime)
	g.Expect(conditions.Get(got, atkSynced).Message).To(Equal("theirs"))
}

// Guard 2: we drop Reconciling while another writer changes the kept conditions: removes one,
// reorders, inserts one at the front (indexes shift), or empties the list.
func TestAttackDropWhileRivalEditsKeptConditions(t *testing.T) {
	type tc struct {
		name  string
		rival func(w *testtypes.Widget)
		want  []string // types, in order
	}
	cases := []tc{
		{"rival removes a kept condition after the removed one", func(w *testtypes.Widget) {
			conditions.Delete(w, atkSynced)
		}, []string{"Ready", "Extra"}},
		{"rival removes the anchor", func(w *testtypes.Widget) {
			conditions.Delete(w, conditions.Ready)
		}, []string{"Extra", "Synced"}},
		{"rival removes every kept condition", func(w *testtypes.Widget) {
			conditions.Delete(w, conditions.Ready)
			conditions.Delete(w, atkSynced)
			conditions.Delete(w, "Extra")
		}, nil},
		{"rival reorders the kept conditions after the anchor", func(w *testtypes.Widget) {
			c := w.Status.Conditions
			w.Status.Conditions = []metav1.Condition{c[0], c[1], c[3], c[2]}
		}, []string{"Ready", "Synced", "Extra"}},
		{"rival swaps Reconciling and a kept one", func(w *testtypes.Widget) {
			c := w.Status.Conditions
			w.Status.Conditions = []metav1.Condition{c[0], c[2], c[1], c[3]}
		}, []string{"Ready", "Extra", "Synced"}},
		{"rival inserts a condition at the front", func(w *testtypes.Widget) {
			w.Status.Conditions = append([]metav1.Condition{atkCond("Aaa", metav1.ConditionTrue, "X", "theirs", atkT1)}, w.Status.Conditions...)
		}, []string{"Aaa", "Ready", "Extra", "Synced"}},
		{"rival replaces a kept condition by another type at its index", func(w *testtypes.Widget) {
			w.Status.Conditions[2] = atkCond("Other", metav1.ConditionTrue, "X", "theirs", atkT1)
		}, []string{"Ready", "Other", "Synced"}},
		{"rival empties the list", func(w *testtypes.Widget) {
			w.Status.Conditions = nil
		}, nil},
	}
	for _, c := range cases {
		for _, owned := range []bool{true, false} {
			name := c.name
			if owned {
				name += "/owned"
			}
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				ctx := t.Context()
				snap := atkWidget(t, g,
					atkCond(conditions.Ready, metav1.ConditionTrue, "Up", "ready", atkT0),
					atkCond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "working", atkT0),
					atkCond("Extra", metav1.ConditionTrue, "X", "extra", atkT0),
					atkCond(atkSynced, metav1.ConditionTrue, "Synced", "theirs", atkT0))
				key := client.ObjectKeyFromObject(snap)
				obj := snap.DeepCopy()
				h, err := patch.NewHelper(obj, env.Client())
				g.Expect(err).NotTo(HaveOccurred())
				atkRival(t, g, key, c.rival)
				conditions.Delete(obj, conditions.Reconciling)
				var opts []patch.Option
				if owned {
					opts = append(opts, patch.OwnedConditions{conditions.Reconciling})
				}
				g.Expect(h.Patch(ctx, obj, opts...)).To(Succeed())

				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(testtypes.GroupVersion.WithKind("Widget"))
				g.Expect(env.Client().Get(ctx, key, got)).To(Succeed())
				list, has, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
				var types []string
				for _, e := range list {
					types = append(types, e.(map[string]any)["type"].(string))
				}
				g.Expect(types).To(Equal(c.want))
				if c.want == nil {
					g.Expect(has).To(BeFalse(), "an emptied list is removed, not left empty")
				}
			})
		}
	}
}

// Guard 1 and 2 together: the write flips Ready (owned) and drops Reconciling; the rival flips
// Ready twice and removes Synced; the outcome is the model's.
func TestAttackFlipAndDropWhileRivalFlipsAndRemoves(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	snap := atkWidget(t, g,
		atkCond(conditions.Ready, metav1.ConditionFalse, "Waiting", "old", atkT0),
		atkCond(conditions.Reconciling, metav1.ConditionTrue, "Progressing", "working", atkT0),
		atkCond(atkSynced, metav1.ConditionTrue, "Synced", "theirs", atkT0))
	key := client.ObjectKeyFromObject(snap)
	obj := snap.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	atkRival(t, g, key, func(w *testtypes.Widget) {
		conditions.Set(w, atkCond(conditions.Ready, metav1.ConditionTrue, "Up", "rival", atkT1))
	})
	atkRival(t, g, key, func(w *testtypes.Widget) {
		conditions.Set(w, atkCond(conditions.Ready, metav1.ConditionFalse, "Down", "rival", atkT2))
		conditions.Delete(w, atkSynced)
	})
	conditions.MarkTrue(obj, conditions.Ready, conditions.ReasonSucceeded, "ours")
	conditions.Delete(obj, conditions.Reconciling)
	ours := conditions.Get(obj, conditions.Ready).LastTransitionTime
	g.Expect(h.Patch(ctx, obj, patch.OwnedConditions{conditions.Ready, conditions.Reconciling})).To(Succeed())
	got := atkGet(t, g, key)
	g.Expect(got.Status.Conditions).To(HaveLen(1))
	g.Expect(got.Status.Conditions[0].Type).To(Equal("Ready"))
	g.Expect(got.Status.Conditions[0].LastTransitionTime.Equal(&ours)).To(BeTrue())
}

// --- Kinds whose condition list is not keyed by type (no x-kubernetes-list-type: map): Flux's
// GitRepository, Cluster API v1beta1, KEDA. Another writer can add a second condition of a type.
// The model's mergeAppendedDuplicates is the table's row for it: in place only while the server
// still has the snapshot's types at the snapshot's indexes (and, for an owned condition
// replaced, its status and transition time); otherwise the list is one both changed: a
// conflict.

func gitRepoKind(t *testing.T) realkinds.Kind {
	t.Helper()
	for _, k := range realkinds.Kinds() {
		if k.GVK.Kind == "GitRepository" {
			return k
		}
	}
	t.Fatal("no GitRepository kind")
	return realkinds.Kind{}
}

func ucond(typ, status, reason, msg string, ltt metav1.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg,
		"lastTransitionTime": ltt.UTC().Format(time.RFC3339)}
}

// atkGitRepo creates a GitRepository with conds and returns it as the server has it.
func atkGitRepo(t *testing.T, g Gomega, conds ...any) *unstructured.Unstructured {
	t.Helper()
	k := gitRepoKind(t)
	u := realkinds.Object(k, env.Namespace(t), "repo")
	u.Object["status"] = map[string]any{"conditions": conds}
	got, err := realkinds.CreateObject(t.Context(), env.Client(), k, u)
	g.Expect(err).NotTo(HaveOccurred())
	return got.DeepCopy()
}

// atkJSONPatch applies ops to the status of u's object as another writer.
func atkJSONPatch(t *testing.T, g Gomega, u *unstructured.Unstructured, ops ...map[string]any) {
	t.Helper()
	raw, err := json.Marshal(ops)
	g.Expect(err).NotTo(HaveOccurred())
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(u.GroupVersionKind())
	o.SetNamespace(u.GetNamespace())
	o.SetName(u.GetName())
	g.Expect(env.Client().Status().Patch(t.Context(), o, client.RawPatch(types.JSONPatchType, raw))).To(Succeed())
}

func atkConditions(t *testing.T, g Gomega, u *unstructured.Unstructured) []any {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	g.Expect(env.Client().Get(t.Context(), client.ObjectKeyFromObject(u), got)).To(Succeed())
	l, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	return l
}

// normalizeJSON round-trips v through JSON, so that it compares with what the server returns.
func normalizeJSON(g Gomega, v any) any {
	raw, err := json.Marshal(v)
	g.Expect(err).NotTo(HaveOccurred())
	var out any
	g.Expect(json.Unmarshal(raw, &out)).To(Succeed())
	return out
}

// checkAgainstTheModel runs the Helper's write (after has the reconcile's conditions) after the
// rival made s1, and compares the outcome with the model: the model's list, or a conflict and
// s1 left as it is.
func checkAgainstTheModel(t *testing.T, g Gomega, u *unstructured.Unstructured, h *patch.Helper, obj *unstructured.Unstructured, owned []conditions.Type, s0, s1 []any) {
	t.Helper()
	a, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	isOwned := func(t string) bool {
		for _, o := range owned {
			if string(o) == t {
				return true
			}
		}
		return false
	}
	want, _, ok := mergeAppendedDuplicates(normalizeJSON(g, s0), normalizeJSON(g, a), normalizeJSON(g, s1), isOwned)
	err := h.Patch(t.Context(), obj, patch.OwnedConditions(owned))
	got := atkConditions(t, g, u)
	t.Logf("snapshot %v\nrival    %v\nours     %v\nmodel ok=%v %v\nPatch: %v\nserver   %v", s0, s1, a, ok, want, err, got)
	if ok {
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), "the model writes in place")
		return
	}
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "the model finds a list both changed: a conflict, and nothing written; Patch returned %v and the server now holds %v", err, got)
	g.Expect(got).To(Equal(normalizeJSON(g, s1)))
}

// Guard 2 on a list not keyed by type: we drop Reconciling; another writer inserts a newer
// Reconciling of its own in front of the old one. The type test of Synced at its index is what
// catches the shift when Reconciling is owned (its removal tests its type alone): without it the
// Helper removed the other writer's new Reconciling and left the stale one it meant to remove.
// When Reconciling is not owned, its removal tests the whole condition, which fails too.
func TestAttackDropWhileRivalInsertsASecondConditionOfTheDroppedType(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owned []conditions.Type
	}{
		{"owned", []conditions.Type{conditions.Reconciling}},
		{"not owned", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s0 := []any{
				ucond("Ready", "True", "Up", "ready", atkT0),
				ucond("Reconciling", "True", "Progressing", "old progress", atkT0),
				ucond("Synced", "True", "Synced", "theirs", atkT0),
			}
			u := atkGitRepo(t, g, s0...)
			obj := u.DeepCopy()
			h, err := patch.NewHelper(obj, env.Client())
			g.Expect(err).NotTo(HaveOccurred())

			newer := ucond("Reconciling", "True", "Progressing", "rival's newer progress", atkT1)
			atkJSONPatch(t, g, u, map[string]any{"op": "add", "path": "/status/conditions/1", "value": newer})
			s1 := []any{s0[0], newer, s0[1], s0[2]}

			list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			g.Expect(unstructured.SetNestedSlice(obj.Object, []any{list[0], list[2]}, "status", "conditions")).To(Succeed())
			checkAgainstTheModel(t, g, u, h, obj, tc.owned, s0, s1)
		})
	}
}

// Guard 1 on a list not keyed by type: we flip the owned Ready False->True; another writer puts
// a newer Ready (False, a later time) in front of the old one. Type and status at index 0 pass;
// the test of the transition time is what tells the condition there is not the one the
// snapshot had.
func TestAttackOwnedFlipWhileRivalInsertsASecondConditionOfItsType(t *testing.T) {
	g := NewWithT(t)
	s0 := []any{
		ucond("Ready", "False", "Waiting", "old", atkT0),
		ucond("Synced", "True", "Synced", "theirs", atkT0),
	}
	u := atkGitRepo(t, g, s0...)
	obj := u.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	newer := ucond("Ready", "False", "Down", "rival's newer failure", atkT2)
	atkJSONPatch(t, g, u, map[string]any{"op": "add", "path": "/status/conditions/0", "value": newer})
	s1 := []any{newer, s0[0], s0[1]}
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	ready := list[0].(map[string]any)
	ready["status"], ready["reason"], ready["message"] = "True", "Succeeded", "ours"
	ready["lastTransitionTime"] = metav1.Now().UTC().Format(time.RFC3339)
	g.Expect(unstructured.SetNestedSlice(obj.Object, list, "status", "conditions")).To(Succeed())
	checkAgainstTheModel(t, g, u, h, obj, []conditions.Type{conditions.Ready}, s0, s1)
}

// Guard 1 on a list not keyed by type, the model's own case: the snapshot's types stay at their
// indexes (a second Ready is appended at the end), and the other writer changed the owned
// Ready's transition time (a double flip) but not its status.
func TestAttackOwnedFlipWhileRivalDoubleFlipsAndAppendsASecondOfItsType(t *testing.T) {
	g := NewWithT(t)
	s0 := []any{
		ucond("Ready", "False", "Waiting", "old", atkT0),
		ucond("Synced", "True", "Synced", "theirs", atkT0),
	}
	u := atkGitRepo(t, g, s0...)
	obj := u.DeepCopy()
	h, err := patch.NewHelper(obj, env.Client())
	g.Expect(err).NotTo(HaveOccurred())
	flipped := ucond("Ready", "False", "Down", "rival's newer failure", atkT2)
	dup := ucond("Ready", "Unknown", "Probing", "rival's second", atkT2)
	atkJSONPatch(t, g, u,
		map[string]any{"op": "replace", "path": "/status/conditions/0", "value": flipped},
		map[string]any{"op": "add", "path": "/status/conditions/-", "value": dup})
	s1 := []any{flipped, s0[1], dup}
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	ready := list[0].(map[string]any)
	ready["status"], ready["reason"], ready["message"] = "True", "Succeeded", "ours"
	ready["lastTransitionTime"] = metav1.Now().UTC().Format(time.RFC3339)
	g.Expect(unstructured.SetNestedSlice(obj.Object, list, "status", "conditions")).To(Succeed())
	checkAgainstTheModel(t, g, u, h, obj, []conditions.Type{conditions.Ready}, s0, s1)
}
