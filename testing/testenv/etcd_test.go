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

package testenv

import (
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestCompactEtcdThenRestartRefusesAWatchFromBefore(t *testing.T) {
	e := startOwnEnvironment(t, Options{})
	g := NewWithT(t)
	ctx := t.Context()
	c := e.Client()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "compacted-", Namespace: metav1.NamespaceDefault}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())
	before := cm.ResourceVersion
	for i := range 3 {
		cm.Data = map[string]string{"i": strconv.Itoa(i)}
		g.Expect(c.Update(ctx, cm)).To(Succeed())
	}

	rev, err := e.CompactEtcd(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	last, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rev).To(BeNumerically(">=", last), "etcd's revision is at least the last write's resourceVersion")
	// Compacting again at the same revision is refused by etcd: the error says so.
	_, err = e.CompactEtcd(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("required revision has been compacted")))

	g.Expect(e.RestartAPIServer(ctx)).To(Succeed())
	wc, err := client.NewWithWatch(e.Config(), client.Options{Scheme: e.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(metav1.NamespaceDefault),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: before}})
	if err == nil {
		// The refusal arrives as the watch's first event.
		defer w.Stop()
		ev, ok := <-w.ResultChan()
		g.Expect(ok).To(BeTrue(), "the watch ended without an event")
		g.Expect(ev.Type).To(Equal(watch.Error), "a watch from a compacted resourceVersion must be refused, got %s", ev.Type)
		err = apierrors.FromObject(ev.Object)
	}
	g.Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(BeTrue(), "want 410 Gone, got %v", err)

	// The object itself is as it was.
	var got corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)).To(Succeed())
	g.Expect(got.Data).To(Equal(map[string]string{"i": "2"}))
}

func TestCompactEtcdOfAnEnvironmentNotStartedIsAnError(t *testing.T) {
	_, err := New(Options{}).CompactEtcd(t.Context())
	NewWithT(t).Expect(err).To(MatchError("failed to compact etcd: the environment is not started"))
}
