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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tenon-dev/tenon/testing/faults"
)

// A conflict on the second status patch of one Pod, and only of that Pod.
func ExampleWrap() {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
	c, err := faults.Wrap(fake.NewClientBuilder().WithObjects(pod).Build(), faults.Plan{Rules: []faults.Rule{{
		Match: faults.Match{Verbs: faults.Verbs{faults.Patch}, Kind: "Pod", Name: "web-0", Subresource: "status"},
		Nth:   2,
		Fault: faults.Conflict,
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodRunning} {
		before := pod.DeepCopy()
		pod.Status.Phase = phase
		err := c.Status().Patch(ctx, pod, client.MergeFrom(before))
		fmt.Printf("patch to %s: conflict=%t\n", phase, apierrors.IsConflict(err))
	}
	for _, call := range c.Calls() {
		fmt.Println(call)
	}

	// Output:
	// patch to Pending: conflict=false
	// patch to Running: conflict=true
	// patch to Running: conflict=false
	// patch Pod default/web-0 status: ok
	// patch Pod default/web-0 status: injected (rule 0): Operation cannot be fulfilled on pods "web-0": the object has been modified; please apply your changes to the latest version and try again
	// patch Pod default/web-0 status: ok
}

// Record counts the requests of the code under test, here a status update that should be a
// single write.
func ExampleRecord() {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
	c := faults.Record(fake.NewClientBuilder().WithObjects(pod).Build())

	_ = c.Get(ctx, client.ObjectKeyFromObject(pod), pod)
	pod.Status.Phase = corev1.PodRunning
	_ = c.Status().Update(ctx, pod)

	fmt.Println("reads:", c.Count(faults.Reads))
	fmt.Println("writes:", c.Count(faults.Writes))
	fmt.Println("status writes:", c.Count(faults.Writes, faults.Status))
	fmt.Println("spec or metadata writes:", c.Count(faults.Writes, faults.Match{Subresource: faults.NoSubresource}))

	// Output:
	// reads: 1
	// writes: 1
	// status writes: 1
	// spec or metadata writes: 0
}

// A rule with a probability makes the same choices again for the same seed.
func ExamplePlan_seed() {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	plan := faults.Plan{Seed: 7, Rules: []faults.Rule{{
		Match:       faults.Match{Verbs: faults.Writes},
		Probability: 0.25,
		Fault:       faults.InternalError,
	}}}

	for run := 1; run <= 2; run++ {
		c, _ := faults.Wrap(fake.NewClientBuilder().WithObjects(cm.DeepCopy()).Build(), plan)
		latest := &corev1.ConfigMap{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(cm), latest)
		for i := range 12 {
			latest.Data = map[string]string{"revision": fmt.Sprint(i)}
			_ = c.Update(ctx, latest)
		}
		var failed []int
		for i, call := range c.Writes() {
			if call.Outcome == faults.Injected {
				failed = append(failed, i+1)
			}
		}
		fmt.Printf("run %d, seed %d: updates %v failed\n", run, c.Seed(), failed)
	}

	// Output:
	// run 1, seed 7: updates [8 12] failed
	// run 2, seed 7: updates [8 12] failed
}

// A lost response: the update reaches the API server, but the caller sees a timeout, as after
// a real one. A controller must not assume its write failed.
func ExampleRule_lostResponse() {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}
	inner := fake.NewClientBuilder().WithObjects(cm).Build()
	c, _ := faults.Wrap(inner, faults.Plan{Rules: []faults.Rule{{
		Match: faults.Match{Verbs: faults.Verbs{faults.Update}},
		Every: 10, Fault: faults.Timeout, LostResponse: true,
	}}})

	_ = c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	var err error
	for i := 1; i <= 10 && err == nil; i++ {
		cm.Data = map[string]string{"revision": fmt.Sprint(i)}
		err = c.Update(ctx, cm)
	}
	fmt.Println("timeout:", apierrors.IsTimeout(err))

	stored := &corev1.ConfigMap{}
	_ = inner.Get(ctx, client.ObjectKeyFromObject(cm), stored)
	fmt.Println("stored revision:", stored.Data["revision"])

	// Output:
	// timeout: true
	// stored revision: 10
}
