package ownership_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/ownership"
)

// blindClient is a cache-like client whose List sees nothing.
func blindClient(g Gomega) (direct, blind client.WithWatch) {
	direct, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	blind = interceptor.NewClient(direct, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return nil },
	})
	return direct, blind
}

func TestAttackAPIReaderCountsAMissedChildStillFinalizing(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	child := configMap(remote, "held", "")
	child.Finalizers = []string{"attack.tenon.dev/hold"}
	g.Expect(createOwned(t, owner, child)).To(Equal(ownership.TrackingLabels))
	fx := fixture(ns+"-fx", "")
	deleteAtEnd(t, fx)
	g.Expect(createOwned(t, owner, fx)).To(Equal(ownership.TrackingLabels))
	direct, blind := blindClient(g)
	lists := []client.ObjectList{&corev1.ConfigMapList{}, &testtypes.FixtureList{}}

	remaining, err := ownership.DeleteTracked(ctx, blind, owner, lists, ownership.APIReader(direct))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(Equal(2), "both missed children found on the API server and deleted")
	g.Eventually(gone(ctx, fx)).WithTimeout(30 * time.Second).Should(Succeed())

	// The held child is still there, being deleted: never 0.
	for range 3 {
		remaining, err = ownership.DeleteTracked(ctx, blind, owner, lists, ownership.APIReader(direct), ownership.UseIndex(true))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(remaining).To(Equal(1), "a finalizing tracked child exists on the server")
	}

	held := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(child), held)).To(Succeed())
	g.Expect(held.DeletionTimestamp).NotTo(BeNil())
	held.Finalizers = nil
	g.Expect(c.Update(ctx, held)).To(Succeed())
	g.Eventually(gone(ctx, child)).WithTimeout(30 * time.Second).Should(Succeed())
	remaining, err = ownership.DeleteTracked(ctx, blind, owner, lists, ownership.APIReader(direct))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remaining).To(BeZero())
}

// A cache that lists a child's predecessor (same name, old UID) and not the tracked child now of
// that name: the UID precondition makes the stale one not count, and the API reader must still
// find and count the new one.
func TestAttackAPIReaderFindsAChildReplacedBehindTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c := env.Client()
	ns, remote := env.Namespace(t), env.Namespace(t)
	owner := widget(ns, "owner", "")
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	first := configMap(remote, "child", "")
	g.Expect(createOwned(t, owner, first)).To(Equal(ownership.TrackingLabels))
	stale := first.DeepCopy()
	g.Expect(c.Delete(ctx, first)).To(Succeed())
	g.Eventually(gone(ctx, first)).WithTimeout(30 * time.Second).Should(Succeed())
	second := configMap(remote, "child", "")
	g.Expect(createOwned(t, owner, second)).To(Equal(ownership.TrackingLabels))
	g.Expect(second.UID).NotTo(Equal(stale.UID))

	direct, err := client.NewWithWatch(env.Config(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	lagging := interceptor.NewClient(direct, interceptor.Funcs{
		List: func(_ context.Context, _ client.WithWatch, list client.ObjectList, _ ...client.ListOption) error {
			if l, ok := list.(*corev1.ConfigMapList); ok {
				l.Items = []corev1.ConfigMap{*stale.DeepCopy()}
			}
			return nil
		},
	})
	lists := []client.ObjectList{&corev1.ConfigMapList{}}

	remaining, err := ownership.DeleteTracked(ctx, lagging, owner, lists, ownership.APIReader(direct))
	t.Logf("remaining=%d err=%v", remaining, err)
	g.Expect(remaining).To(BeNumerically(">", 0), "the tracked child of that name exists on the server")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(gone(ctx, second)).WithTimeout(30 * time.Second).Should(Succeed())
}
