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

package faults_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/testing/faults"
)

func TestEachFaultKindOnTheFakeClient(t *testing.T) { proveFaultKinds(t, fakeBackend) }

func TestALostResponseWritesAndFailsOnTheFakeClient(t *testing.T) {
	proveLostResponse(t, fakeBackend)
}

func TestLatencyOnTheFakeClient(t *testing.T) { proveLatency(t, fakeBackend) }

func TestNotFoundOnTheFirstGetAfterDeleteOnTheFakeClient(t *testing.T) {
	proveNotFoundAfterDelete(t, fakeBackend)
}

// injectedSeqs runs 200 gets of ConfigMaps under a 30% InternalError plan and returns which of
// them failed.
func injectedSeqs(t *testing.T, seed int64) []int {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}}
	c := faults.New(t, fake.NewClientBuilder().WithObjects(cm).Build(), faults.Plan{Seed: seed, Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Get}}, Probability: 0.3, Fault: faults.InternalError},
		// A second rule draws too; it must not change the first rule's choices.
		{Match: faults.Match{Kind: "ConfigMap"}, Probability: 0.5, Latency: 1},
	}})
	for range 200 {
		_ = c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	}
	var seqs []int
	for _, call := range c.Calls(faults.Injected) {
		seqs = append(seqs, call.Seq)
	}
	return seqs
}

func TestTheSameSeedInjectsTheSameFaults(t *testing.T) {
	g := NewWithT(t)
	first := injectedSeqs(t, 42)
	g.Expect(len(first)).To(BeNumerically("~", 60, 25), "about 30%% of 200 calls")
	if diff := cmp.Diff(first, injectedSeqs(t, 42)); diff != "" {
		t.Errorf("a replay with the same seed injected different faults (-first +replay):\n%s", diff)
	}
	g.Expect(injectedSeqs(t, 43)).NotTo(Equal(first), "another seed makes other choices")
}

func TestAPlanWithoutASeedTakesItFromTheEnvironment(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(faults.SeedEnvVar, "42")
	c, err := faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Seed()).To(Equal(int64(42)))
	g.Expect(injectedSeqs(t, 0)).To(Equal(injectedSeqs(t, 42)))

	t.Setenv(faults.SeedEnvVar, "forty-two")
	_, err = faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{})
	g.Expect(err).To(MatchError(`failed to read the fault plan seed: TENON_FAULTS_SEED="forty-two" is not a non-zero integer`))
}

func TestAPlanWithoutASeedGetsARandomOne(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(faults.SeedEnvVar, "")
	a, err := faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{})
	g.Expect(err).NotTo(HaveOccurred())
	b, err := faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.Seed()).NotTo(BeZero())
	g.Expect(a.Seed()).NotTo(Equal(b.Seed()))
}

// recordingTB is a faults.TB that records what New logs and what fails it, with a failed state
// the test sets, and runs its cleanups when told.
type recordingTB struct {
	failed   bool
	logs     []string
	errors   []string
	fatal    string
	cleanups []func()
}

func (r *recordingTB) Helper()                  {}
func (r *recordingTB) Name() string             { return "recordingTB" }
func (r *recordingTB) Context() context.Context { return context.Background() }
func (r *recordingTB) Cleanup(f func())         { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Failed() bool             { return r.failed }
func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.failed = true
}
func (r *recordingTB) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func (r *recordingTB) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

var _ faults.TB = (*recordingTB)(nil)

func TestNewLogsTheSeedWhenTheTestFails(t *testing.T) {
	tests := []struct {
		name   string
		seed   int64
		failed bool
		logs   []string
	}{
		{"a failed test with a random seed", 0, true, []string{"faults: the fault plan used seed 42; replay this run with TENON_FAULTS_SEED=42"}},
		{"a passed test", 0, false, nil},
		{"a failed test with the seed in the plan", 7, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv(faults.SeedEnvVar, "42") // stands in for the random choice, to know the message
			tb := &recordingTB{}

			c := faults.New(tb, fake.NewClientBuilder().Build(), faults.Plan{Seed: tt.seed})
			tb.failed = tt.failed
			tb.end()

			g.Expect(c).NotTo(BeNil())
			g.Expect(tb.fatal).To(BeEmpty())
			g.Expect(tb.errors).To(BeEmpty())
			g.Expect(tb.logs).To(Equal(tt.logs))
		})
	}
}

func TestNewFailsTheTestOnAnInvalidPlan(t *testing.T) {
	g := NewWithT(t)
	tb := &recordingTB{}

	c := faults.New(tb, fake.NewClientBuilder().Build(), faults.Plan{Rules: []faults.Rule{{Fault: "Gone"}, {Probability: 2, Latency: 1}}})

	g.Expect(c).To(BeNil())
	g.Expect(tb.fatal).To(Equal(`faults: invalid fault plan: rule 0: unknown fault "Gone"` + "\n" +
		"rule 1: probability 2 is not between 0 and 1"))
}

func TestRulesFireOnTheCallsTheirConditionsSelect(t *testing.T) {
	tests := []struct {
		name string
		rule faults.Rule
		want []int // the Seq of the gets that fail, out of 10 gets of cm-a then 10 of cm-b, alternating
	}{
		{"Nth fires once", faults.Rule{Nth: 3}, []int{3}},
		{"Every fires on multiples", faults.Rule{Every: 4}, []int{4, 8, 12, 16, 20}},
		{"Times limits Every", faults.Rule{Every: 4, Times: 2}, []int{4, 8}},
		{"Times alone fires on the first calls", faults.Rule{Times: 3}, []int{1, 2, 3}},
		{"Name counts only that object's calls", faults.Rule{Match: faults.Match{Name: "cm-b"}, Nth: 2}, []int{4}},
		{"Kind with a group matches the group", faults.Rule{Match: faults.Match{Kind: "ConfigMap."}, Nth: 1}, []int{1}},
		{"Kind with another group matches nothing", faults.Rule{Match: faults.Match{Kind: "ConfigMap.apps"}}, nil},
		{"Namespace matches the object's namespace", faults.Rule{Match: faults.Match{Namespace: "other"}}, nil},
		{"NoSubresource matches calls on the object", faults.Rule{Match: faults.Match{Subresource: faults.NoSubresource}, Nth: 1}, []int{1}},
		{"a subresource does not match calls on the object", faults.Rule{Match: faults.Match{Subresource: "status"}}, nil},
		{"another verb matches nothing", faults.Rule{Match: faults.Match{Verbs: faults.Writes}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-a", Namespace: "default"}}
			b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-b", Namespace: "default"}}
			rule := tt.rule
			rule.Fault = faults.InternalError
			c := faults.New(t, fake.NewClientBuilder().WithObjects(a, b).Build(), faults.Plan{Rules: []faults.Rule{rule}})
			for i := range 20 {
				obj := a
				if i%2 == 1 {
					obj = b
				}
				_ = c.Get(t.Context(), client.ObjectKeyFromObject(obj), &corev1.ConfigMap{})
			}
			var got []int
			for _, call := range c.Calls(faults.Injected) {
				got = append(got, call.Seq)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("faulted calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheFirstFiringRuleDecidesTheErrorAndLatenciesAddUp(t *testing.T) {
	g := NewWithT(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}}
	c := faults.New(t, fake.NewClientBuilder().WithObjects(cm).Build(), faults.Plan{Rules: []faults.Rule{
		{Latency: 2},
		{Fault: faults.Conflict, Latency: 3},
		{Fault: faults.NotFound},
	}})

	err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})

	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
	call := c.Calls()[0]
	g.Expect(call.Rule).To(Equal(1))
	g.Expect(call.Latency).To(BeEquivalentTo(5))
}

func TestInvalidPlansAreRefusedWithEveryProblem(t *testing.T) {
	g := NewWithT(t)
	_, err := faults.Wrap(fake.NewClientBuilder().Build(), faults.Plan{Rules: []faults.Rule{
		{Fault: faults.Conflict},
		{Match: faults.Match{Verbs: faults.Verbs{"fetch"}}, Fault: "Teapot", Probability: 2},
		{},
		{LostResponse: true, Latency: 1},
		{Fault: faults.Conflict, Err: fmt.Errorf("boom"), Nth: -1},
	}})

	g.Expect(err).To(HaveOccurred())
	want := []string{
		`invalid fault plan: rule 1: unknown verb "fetch"; unknown fault "Teapot"; probability 2 is not between 0 and 1`,
		`rule 2: no effect: set Fault, Err or Latency`,
		`rule 3: LostResponse needs a Fault or Err to return`,
		`rule 4: both Fault and Err are set; Nth, Every and Times must not be negative`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestEveryCallIsRecordedWithWhatItActedOn(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	inner := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testtypes.Widget{}).Build()
	c := faults.Record(inner)

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: "default"}}
	g.Expect(c.Create(ctx, w)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(c.List(ctx, &testtypes.WidgetList{}, client.InNamespace("default"))).To(Succeed())
	before := w.DeepCopy()
	w.Status.Phase = "Running"
	g.Expect(c.Status().Patch(ctx, w, client.MergeFrom(before))).To(Succeed())
	g.Expect(c.Status().Update(ctx, w)).To(Succeed())
	cm := corev1ac.ConfigMap("applied", "default").WithData(map[string]string{"k": "v"})
	g.Expect(c.Apply(ctx, cm, client.FieldOwner("test"))).To(Succeed())
	g.Expect(c.Delete(ctx, w)).To(Succeed())
	g.Expect(c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"))).To(Succeed())
	watcher, err := c.Watch(ctx, &corev1.ConfigMapList{})
	g.Expect(err).NotTo(HaveOccurred())
	watcher.Stop()

	var got []string
	for _, call := range c.Calls() {
		got = append(got, fmt.Sprintf("%d %s", call.Seq, call))
	}
	want := []string{
		"1 create Widget default/" + w.Name + ": ok",
		"2 get Widget default/" + w.Name + ": ok",
		"3 list Widget in default: ok",
		"4 patch Widget default/" + w.Name + " status: ok",
		"5 update Widget default/" + w.Name + " status: ok",
		"6 apply ConfigMap default/applied: ok",
		"7 delete Widget default/" + w.Name + ": ok",
		"8 deletecollection ConfigMap in default: ok",
		"9 watch ConfigMap: ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}

	g.Expect(c.Count(faults.Writes)).To(Equal(6))
	g.Expect(c.Writes()).To(HaveLen(6))
	g.Expect(c.Count(faults.Reads)).To(Equal(3))
	g.Expect(c.Count(faults.Writes, faults.Status)).To(Equal(2))
	g.Expect(c.Count(faults.Patch, faults.Status)).To(Equal(1))
	g.Expect(c.Count(faults.Match{Kind: "Widget", Subresource: faults.NoSubresource})).To(Equal(4))
	g.Expect(c.Count(faults.SelectorFunc(func(call faults.Call) bool { return call.IsWrite() && call.GVK.Group == "" }))).To(Equal(2))

	patch := c.Calls(faults.Patch)[0]
	g.Expect(string(patch.Patch)).To(Equal(`{"status":{"phase":"Running"}}`))
	g.Expect(patch.Object).To(BeAssignableToTypeOf(&testtypes.Widget{}))
	g.Expect(patch.Object.(*testtypes.Widget).Status.Phase).To(Equal("Running"))
	g.Expect(patch.ResourceVersion).NotTo(BeEmpty())
	apply := c.Calls(faults.Apply)[0]
	g.Expect(apply.Object).To(BeAssignableToTypeOf(&unstructured.Unstructured{}))
	g.Expect(apply.ResourceVersion).NotTo(BeEmpty())
	g.Expect(string(apply.Patch)).To(ContainSubstring(`"data":{"k":"v"}`))

	c.Reset()
	g.Expect(c.Calls()).To(BeEmpty())
	g.Expect(c.List(ctx, &corev1.ConfigMapList{})).To(Succeed())
	g.Expect(c.Calls()[0].Seq).To(Equal(10), "Seq keeps counting after Reset")
	g.Expect(c.Unwrap()).To(BeIdenticalTo(inner))
}

func TestAFailedCallIsRecordedWithTheAPIServersError(t *testing.T) {
	g := NewWithT(t)
	c := faults.Record(fake.NewClientBuilder().Build())

	err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "missing"}, &corev1.ConfigMap{})

	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	call := c.Calls()[0]
	g.Expect(call.Outcome).To(Equal(faults.Failed))
	g.Expect(call.Rule).To(Equal(-1))
	g.Expect(call.Forwarded).To(BeTrue())
	g.Expect(call.String()).To(Equal(`get ConfigMap default/missing: failed: configmaps "missing" not found`))
}

func TestAClientWithoutWatchFailsToWatch(t *testing.T) {
	g := NewWithT(t)
	c := faults.Record(struct{ client.Client }{fake.NewClientBuilder().Build()})

	_, err := c.Watch(t.Context(), &corev1.ConfigMapList{})

	g.Expect(err).To(MatchError(ContainSubstring("cannot watch")))
}

func TestConcurrentCallsAreAllRecordedAndCounted(t *testing.T) {
	g := NewWithT(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}}
	c := faults.New(t, fake.NewClientBuilder().WithObjects(cm).Build(), faults.Plan{Rules: []faults.Rule{
		{Match: faults.Match{Verbs: faults.Verbs{faults.Get}}, Every: 10, Fault: faults.ServiceUnavailable},
	}})

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				_ = c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
				_ = c.List(t.Context(), &corev1.ConfigMapList{})
			}
		})
	}
	wg.Wait()

	g.Expect(c.Count(faults.Get)).To(Equal(200))
	g.Expect(c.Count(faults.List)).To(Equal(200))
	g.Expect(c.Count(faults.Injected)).To(Equal(20), "every 10th of 200 gets")
	seqs := map[int]bool{}
	for _, call := range c.Calls() {
		seqs[call.Seq] = true
	}
	g.Expect(seqs).To(HaveLen(400), "every call has its own Seq")
}
