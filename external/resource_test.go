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

package external_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/external"
	"github.com/tenon-dev/tenon/requeue"
)

func TestACreateWhoseResponseWasLostIsAdoptedNotSentAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{}) // neither unique names nor request ids: a second Insert would make a second instance
	inserts := countInserts(w.cloud, once("Insert", faultLoseResponse))
	r := w.reconciler()
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(err).To(MatchError(ContainSubstring("request timed out")))
	latest, _ := w.get(db)
	w.g.Expect(stateOf(latest)).To(HaveKeyWithValue("phase", "Creating"), "the create is stored as under way before it is sent")
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(HaveField("Status", metav1.ConditionUnknown))

	w.settle(r, db, 10)
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(1))
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))
}

func TestACreateThatTimedOutIsSentAgainWithTheSameKeyWhenCreatesAreIdempotent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{honourRequestIDs: true})
	var keys []string
	w.cloud.fault = nil
	inserts := countInserts(w.cloud, once("Insert", faultTimeoutBefore))
	r := w.reconciler()
	provider := r.database.Provider
	r.database.Provider = keyRecorder{Provider: provider, keys: &keys}
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(err).To(HaveOccurred())
	w.settle(r, db, 10)

	w.g.Expect(inserts.Load()).To(BeEquivalentTo(2))
	w.g.Expect(keys).To(HaveLen(2))
	w.g.Expect(keys[1]).To(Equal(keys[0]), "the same attempt, the same key")
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))
}

func TestACreateWhoseOutcomeIsUnknownStallsWhenCreatesAreNotIdempotent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	inserts := countInserts(w.cloud, once("Insert", faultTimeoutBefore))
	r := w.reconciler()
	r.database.IdempotentCreate = false
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(err).To(HaveOccurred())
	_, err = w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))
	w.g.Expect(err).To(MatchError(ContainSubstring("remove annotation external.tenon.dev/database")))
	latest, _ := w.get(db)
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(HaveField("Reason", string(external.ReasonCreateOutcomeUnknown)))
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(HaveField("Reason", string(external.ReasonCreateOutcomeUnknown)))
	_, _ = w.reconcile(r, db)
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(1), "never sent again")

	// A person checked that nothing was created, and removes the annotation.
	latest, _ = w.get(db)
	delete(latest.Annotations, external.AnnotationPrefix+"database")
	w.g.Expect(w.api.Update(w.ctx, latest)).To(Succeed())
	w.settle(r, db, 10)
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(2))
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))
}

func TestADecisionFromAStaleCopyIsRefusedAndTakenAgainFromTheLatestState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	inserts := countInserts(w.cloud, nil)
	r := w.reconciler()
	db := w.create("orders", "small")
	_, err := w.reconcile(r, db) // the finalizer, then the create
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(1))

	// A cache that has not seen the marker: the copy read before it was written.
	stale, _ := w.get(db)
	delete(stale.Annotations, external.AnnotationPrefix+"database")
	w.cloud.Tick()
	w.cloud.DeleteBehindTheBack("db-" + string(db.UID)) // so that Observe finds nothing either
	res, err := r.database.Ensure(w.ctx, stale)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(2), "the guard refused the stale decision; the fresh state said: recreate")
	latest, _ := w.get(db)
	w.g.Expect(stateOf(latest)).To(HaveKeyWithValue("attempt", BeEquivalentTo(2)))
	w.g.Expect(res.RequeueAfter).To(BeNumerically(">", 0))
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))

	// The same with a stale copy that still shows the first attempt as under way.
	inserts.Store(0)
	stale2 := stale.DeepCopy()
	stale2.Annotations = map[string]string{external.AnnotationPrefix + "database": `{"name":"db-` + string(db.UID) + `","phase":"Creating","attempt":1}`}
	_, err = r.database.Ensure(w.ctx, stale2)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(inserts.Load()).To(BeZero(), "the fresh state has attempt 2's operation to poll")
}

func TestNoCreateIsDecidedAfterTheDeletionBegan(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	inserts := countInserts(w.cloud, nil)
	r := w.reconciler()
	db := w.create("orders", "small")
	w.settle(r, db, 10)
	live, _ := w.get(db)
	w.cloud.DeleteBehindTheBack("db-" + string(db.UID))

	w.g.Expect(w.api.Delete(w.ctx, live)).To(Succeed())
	// A cache that has not seen the deletion yet.
	res, err := r.database.Ensure(w.ctx, live)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(res).To(BeZero())
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(1), "only the first create")

	for range 5 {
		_, _ = w.reconcile(r, db)
	}
	_, exists := w.get(db)
	w.g.Expect(exists).To(BeFalse())
	w.g.Expect(inserts.Load()).To(BeEquivalentTo(1))
}

func TestAnOperationThatFailsTerminallyStallsAndTheNextAttemptGetsANewKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{honourRequestIDs: true})
	w.cloud.fault = once("Insert", faultOperationInvalid)
	var keys []string
	r := w.reconciler()
	r.database.Provider = keyRecorder{Provider: r.database.Provider, keys: &keys}
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.cloud.Tick()
	_, err = w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))
	w.g.Expect(err).To(MatchError(ContainSubstring("tier is not available")))
	latest, _ := w.get(db)
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(HaveField("Reason", string(external.ReasonCreateFailed)))
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", string(external.ReasonCreateFailed))))
	w.g.Expect(stateOf(latest)).To(HaveKeyWithValue("phase", "Failed"))

	// The user changes the spec; the next reconcile creates again, with a new key.
	latest.Spec.Tier = "medium"
	w.g.Expect(w.api.Update(w.ctx, latest)).To(Succeed())
	w.settle(r, db, 10)
	w.g.Expect(keys).To(HaveLen(2))
	w.g.Expect(keys[1]).NotTo(Equal(keys[0]))
	latest, _ = w.get(db)
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(BeNil())
	w.g.Expect(w.instancesOf(db)).To(ConsistOf(HaveField("Tier", "medium")))
}

func TestAnOperationThatFailsTransientlyIsRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{honourRequestIDs: true})
	w.cloud.fault = once("Resize", faultOperationFails)
	r := w.reconciler()
	db := w.create("orders", "small")
	w.settle(r, db, 10)

	latest, _ := w.get(db)
	latest.Spec.Tier = "large"
	w.g.Expect(w.api.Update(w.ctx, latest)).To(Succeed())
	_, err := w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.cloud.Tick()
	_, err = w.reconcile(r, db)
	w.g.Expect(err).To(MatchError(ContainSubstring("INTERNAL")))
	w.g.Expect(requeue.Classify(err)).NotTo(Equal(requeue.ClassTerminal))
	latest, _ = w.get(db)
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", string(external.ReasonUpdateFailed))),
		"an operation that failed says the change was not made")
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(BeNil())

	w.settle(r, db, 10)
	w.g.Expect(w.instancesOf(db)).To(ConsistOf(HaveField("Tier", "large")))
}

func TestAnOperationThatNeverFinishesIsPolledWithJitterAndHoldsTheDeletion(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	w.cloud.fault = once("Insert", faultOperationHangs)
	r := w.reconciler()
	r.database.PollInterval = 3 * time.Second
	db := w.create("orders", "small")

	for range 5 {
		res, err := w.reconcile(r, db)
		w.g.Expect(err).NotTo(HaveOccurred())
		w.g.Expect(res.RequeueAfter).To(And(BeNumerically(">=", 3*time.Second), BeNumerically("<", 3300*time.Millisecond)))
		w.cloud.Tick()
	}
	latest, _ := w.get(db)
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(And(
		HaveField("Reason", string(external.ReasonCreating)), HaveField("Message", ContainSubstring("operation op-2"))))

	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	for range 3 {
		_, err := w.reconcile(r, db)
		w.g.Expect(err).NotTo(HaveOccurred())
		w.cloud.Tick()
	}
	latest, exists := w.get(db)
	w.g.Expect(exists).To(BeTrue(), "an unfinished create may still make the instance: the deletion waits")
	w.g.Expect(conditions.Get(latest, conditions.Deleting)).To(HaveField("Message", ContainSubstring("waiting for operation op-2 (Create)")))
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))
}

func TestDriftIsCorrected(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{honourRequestIDs: true})
	var keys []string
	r := w.reconciler()
	r.database.Provider = keyRecorder{Provider: r.database.Provider, keys: &keys}
	db := w.create("orders", "small")
	w.settle(r, db, 10)
	name := "db-" + string(db.UID)

	// Resized behind the controller's back: resized back.
	w.g.Expect(w.cloud.ResizeBehindTheBack(name, "huge")).To(BeTrue())
	w.settle(r, db, 10)
	w.g.Expect(w.instancesOf(db)).To(ConsistOf(HaveField("Tier", "small")))

	// Deleted behind its back: created again, with a new key.
	w.g.Expect(w.cloud.DeleteBehindTheBack(name)).To(BeTrue())
	w.settle(r, db, 10)
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))
	w.g.Expect(keys).To(HaveLen(2))
	w.g.Expect(keys[1]).NotTo(Equal(keys[0]))
	latest, _ := w.get(db)
	w.g.Expect(stateOf(latest)).To(And(HaveKeyWithValue("phase", "Created"), HaveKeyWithValue("attempt", BeEquivalentTo(2))))
}

func TestASteadyStateWritesNothingAndPollsForDrift(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	db := w.create("orders", "small")
	w.settle(r, db, 10)
	_, _ = w.reconcile(r, db)

	w.writes.Store(0)
	res, err := w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(w.writes.Load()).To(BeZero())
	w.g.Expect(res.RequeueAfter).To(And(BeNumerically(">=", external.DefaultDriftInterval), BeNumerically("<", external.DefaultDriftInterval*11/10)))
	latest, _ := w.get(db)
	w.g.Expect(conditions.IsReady(latest)).To(BeTrue())
	w.g.Expect(latest.Status.Endpoint).NotTo(BeEmpty())
}

func TestAClosedFenceRefusesEveryCallThatChangesSomething(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	inserts := countInserts(w.cloud, nil)
	r := w.reconciler()
	r.database.Fence = fenced{}
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassFenced))
	latest, _ := w.get(db)
	w.g.Expect(stateOf(latest)).To(BeNil(), "checked before the marker too: nothing is stored for a call that is not made")
	w.g.Expect(inserts.Load()).To(BeZero())

	r.database.Fence = nil
	w.settle(r, db, 10)
	r.database.Fence = fenced{}
	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	_, err = w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassFenced))
	w.g.Expect(w.instancesOf(db)).To(ConsistOf(HaveField("State", stateRunning)), "no Delete sent")
}

func TestRetainKeepsTheInstanceAndReleasesTheObject(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	r.lifecycle.Retain = func(*Database) bool { return true }
	db := w.create("orders", "small")
	w.settle(r, db, 10)

	latest, _ := w.get(db)
	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	_, err := w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	_, exists := w.get(db)
	w.g.Expect(exists).To(BeFalse())
	w.g.Expect(w.instancesOf(db)).To(ConsistOf(HaveField("State", stateRunning)))
}

func TestAnInstanceWhoseObjectHasNoAnnotationIsDeletedWithIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	db := w.create("orders", "small")
	w.settle(r, db, 10)
	w.g.Expect(w.instancesOf(db)).To(HaveLen(1))

	// The instance was made before the controller kept its state (an upgrade), or a person
	// removed the annotation: the deletion still finds it by its name, and deletes it.
	latest, _ := w.get(db)
	w.g.Expect(w.api.Patch(w.ctx, latest, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/metadata/annotations/external.tenon.dev~1database"}]`)))).To(Succeed())
	w.g.Expect(stateOf(latest)).To(BeNil())
	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r.lifecycle.Clock = clock
	for range 20 {
		if _, exists := w.get(db); !exists {
			break
		}
		_, _ = w.reconcile(r, db)
		w.cloud.Tick()
		clock.SetTime(clock.Now().Add(time.Minute)) // past each Waiting step's poll
	}
	_, exists := w.get(db)
	w.g.Expect(exists).To(BeFalse())
	w.g.Expect(w.instancesOf(db)).To(BeEmpty(), "no instance left behind")
}

func TestAnAnnotationRemovedWhileTheDeletionStepRunsLeavesNoInstance(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	db := w.create("orders", "small")
	w.settle(r, db, 10)

	// A resize under way when the Database is deleted: the step first records that it finished.
	latest, _ := w.get(db)
	latest.Spec.Tier = "large"
	w.g.Expect(w.api.Update(w.ctx, latest)).To(Succeed())
	_, err := w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	latest, _ = w.get(db)
	w.g.Expect(stateOf(latest)).To(HaveKeyWithValue("operationKind", "Update"))
	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	w.cloud.Tick()

	// Just before that write, a person removes the annotation: the write is refused as stale,
	// and the step goes on from the object as it now is, which has no annotation.
	var removed atomic.Bool
	r.database.Client = interceptor.NewClient(w.api, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if removed.CompareAndSwap(false, true) {
				w.g.Expect(c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.JSONPatchType,
					[]byte(`[{"op":"remove","path":"/metadata/annotations/external.tenon.dev~1database"}]`)))).To(Succeed())
			}
			return c.Patch(ctx, obj, p, opts...)
		},
	})
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r.lifecycle.Clock = clock
	for range 20 {
		if _, exists := w.get(db); !exists {
			break
		}
		_, _ = w.reconcile(r, db)
		w.cloud.Tick()
		clock.SetTime(clock.Now().Add(time.Minute))
	}
	w.g.Expect(removed.Load()).To(BeTrue(), "the annotation was removed during the step")
	_, exists := w.get(db)
	w.g.Expect(exists).To(BeFalse())
	w.g.Expect(w.instancesOf(db)).To(BeEmpty(), "the instance is found by its name and deleted")
}

func TestANameTakenByAnotherOwnerStallsAndIsNeverDeleted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	r.database.Provider = takenName{Provider: r.database.Provider}
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))
	latest, _ := w.get(db)
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(HaveField("Reason", string(external.ReasonNameTaken)))
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(HaveField("Message", ContainSubstring("belongs to team-b")))

	w.g.Expect(w.api.Delete(w.ctx, latest)).To(Succeed())
	_, err = w.reconcile(r, db)
	w.g.Expect(err).NotTo(HaveOccurred())
	_, exists := w.get(db)
	w.g.Expect(exists).To(BeFalse(), "nothing of the object's to delete")
}

func TestATerminalErrorWithAReasonOfTheProvidersStallsWithThatReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	r.database.Provider = refusedToken{Provider: r.database.Provider}
	db := w.create("orders", "small")

	_, err := w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))
	latest, _ := w.get(db)
	w.g.Expect(conditions.Get(latest, conditions.Stalled)).To(HaveField("Reason", "InvalidCredentials"))
	w.g.Expect(conditions.Get(latest, DatabaseReady)).To(And(HaveField("Status", metav1.ConditionFalse),
		HaveField("Reason", "InvalidCredentials"), HaveField("Message", ContainSubstring("the token was refused"))))
	w.g.Expect(w.instancesOf(db)).To(BeEmpty())
}

func TestAnAnnotationThatIsNotValidIsReportedByName(t *testing.T) {
	t.Parallel()
	w := newWorld(t, cloudOptions{})
	r := w.reconciler()
	db := w.create("orders", "small")
	_, _ = w.reconcile(r, db)
	latest, _ := w.get(db)
	latest.Annotations[external.AnnotationPrefix+"database"] = `{"name":"x","phase":"Maybe"}`
	w.g.Expect(w.api.Update(w.ctx, latest)).To(Succeed())

	_, err := w.reconcile(r, db)
	w.g.Expect(requeue.Classify(err)).To(Equal(requeue.ClassTerminal))
	w.g.Expect(err).To(MatchError(ContainSubstring(`annotation external.tenon.dev/database of ` + w.ns + `/orders is not valid (unknown phase "Maybe")`)))
}

func TestAResourceThatCannotWorkSaysWhy(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	r := &external.Resource[*Database]{Name: "Database", Condition: "DatabaseReady"}
	_, err := r.Ensure(t.Context(), &Database{ObjectMeta: metav1.ObjectMeta{Name: "orders"}})
	g.Expect(err).To(MatchError(`failed to reconcile external resource "Database": Name "Database" is not a DNS label; ` +
		`Provider is nil; Client is nil; orders has no uid: read it from the API server`))
}

// keyRecorder records the keys of the creates its Provider is asked for.
// refusedToken is a provider whose credentials are refused: Observe fails terminally, with a
// reason of its own.
type refusedToken struct {
	external.Provider[*Database]
}

func (refusedToken) Observe(context.Context, *Database, string) (external.Observation, error) {
	return external.Observation{}, fmt.Errorf("failed to list instances: %w",
		requeue.TerminalError("InvalidCredentials", errors.New("the token was refused")))
}

type keyRecorder struct {
	external.Provider[*Database]
	keys *[]string
}

func (k keyRecorder) Create(ctx context.Context, db *Database, name, key string) (external.Operation, error) {
	*k.keys = append(*k.keys, key)
	return k.Provider.Create(ctx, db, name, key)
}

func (k keyRecorder) OperationDone(ctx context.Context, db *Database, op external.Operation) (bool, error) {
	return k.Provider.(external.Operations[*Database]).OperationDone(ctx, db, op)
}

// takenName observes every name as taken by team-b.
type takenName struct {
	external.Provider[*Database]
}

func (takenName) Observe(context.Context, *Database, string) (external.Observation, error) {
	return external.Observation{}, fmt.Errorf("%w: instance belongs to team-b", external.ErrNameTaken)
}
