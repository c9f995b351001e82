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
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
)

// startOwnEnvironment starts an environment for one test, so that stopping its API server cannot
// disturb the tests that share env. When the test ends it stops the environment, and checks that
// no process of it is left and that its watchdog was released: a watchdog that is not kills what
// it watches once the Environment is garbage collected.
func startOwnEnvironment(t *testing.T, opts Options) *Environment {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("restarting kube-apiserver needs /proc")
	}
	e := New(opts)
	start := time.Now()
	if err := e.Start(); err != nil {
		t.Fatalf("failed to start an environment: %v", err)
	}
	t.Logf("own environment started in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("failed to stop the environment: %v", err)
		}
		if etcd, apiServer := e.controlPlaneProcesses(); len(etcd)+len(apiServer) > 0 {
			t.Errorf("processes left after Stop: etcd %v, kube-apiserver %v", etcd, apiServer)
		}
		if e.reaper != nil {
			e.reaper.mu.Lock()
			defer e.reaper.mu.Unlock()
			if e.reaper.writer != nil {
				t.Error("Stop did not release the watchdog")
			}
		}
	})
	return e
}

func TestAnOperatorRecoversFromAnAPIServerRestart(t *testing.T) {
	e := startOwnEnvironment(t, Options{
		CRDDirectoryPaths: []string{testtypes.CRDDirectory()},
		Scheme:            testScheme(),
		GarbageCollector:  true,
	})
	g := NewWithT(t)
	ctx := t.Context()
	ns := e.Namespace(t)

	// Everything below exists before the restart and is not recreated after it.
	admin := e.Client()
	operator := e.NewUser(t, "operator", RoleFiles{roleFile}, RoleNamespace(ns))
	mgr := operator.NewManager(t, ctrl.Options{})
	r := &configReconciler{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), namespace: ns}
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named("config").Complete(r)).To(Succeed())
	StartManager(t, mgr)
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: ns}, Data: map[string]string{"k": "v"}}
	g.Expect(admin.Create(ctx, before)).To(Succeed())
	owner := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	g.Expect(admin.Create(ctx, owner)).To(Succeed())
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "child", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: testtypes.GroupVersion.String(), Kind: "Widget", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true),
		}},
	}}
	g.Expect(admin.Create(ctx, child)).To(Succeed())
	etcdBefore, apiServerBefore := e.controlPlaneProcesses()
	g.Expect(etcdBefore).To(HaveLen(1))
	g.Expect(apiServerBefore).To(HaveLen(1))

	start := time.Now()
	g.Expect(e.RestartAPIServer(ctx)).To(Succeed())
	t.Logf("kube-apiserver restarted in %s", time.Since(start).Round(time.Millisecond))

	etcdAfter, apiServerAfter := e.controlPlaneProcesses()
	g.Expect(etcdAfter).To(Equal(etcdBefore), "etcd must keep running")
	g.Expect(apiServerAfter).To(HaveLen(1))
	g.Expect(apiServerAfter).NotTo(Equal(apiServerBefore), "kube-apiserver must be a new process")

	t.Run("a client created before the restart reads and writes after it", func(t *testing.T) {
		g := NewWithT(t)
		var got corev1.ConfigMap
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(before), &got)).To(Succeed())
		g.Expect(got.Data).To(Equal(before.Data), "etcd's data must survive the restart")
		got.Data["k"] = "changed"
		g.Expect(admin.Update(ctx, &got)).To(Succeed())
		g.Expect(admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: ns}})).To(Succeed())
	})

	t.Run("a user created before the restart keeps its credentials and permissions", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(operator.Client().Get(ctx, client.ObjectKeyFromObject(before), &corev1.ConfigMap{})).To(Succeed())
		err := operator.Client().Delete(ctx, before)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the user's roles grant no delete: %v", err)
	})

	t.Run("a manager started before the restart sees and reconciles objects created after it", func(t *testing.T) {
		g := NewWithT(t)
		w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
		g.Expect(admin.Create(ctx, w)).To(Succeed())

		g.Eventually(func() error {
			return mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(w), &testtypes.Widget{})
		}).WithTimeout(30*time.Second).Should(Succeed(), "the manager's cache must reconnect")
		g.Eventually(func(g Gomega) {
			g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
			g.Expect(w.Status.Phase).To(Equal("Configured"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, &corev1.ConfigMap{})).To(Succeed())
		g.Expect(r.err()).NotTo(HaveOccurred())
	})

	t.Run("the garbage collector deletes the dependents of an owner deleted after the restart", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(admin.Delete(ctx, owner)).To(Succeed())

		g.Eventually(func() error {
			return admin.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
		}).WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		g.Expect(e.collector.hasExited()).To(BeFalse(), "kube-controller-manager must survive the restart")
	})
}

func TestStopAndStartAPIServer(t *testing.T) {
	e := startOwnEnvironment(t, Options{})
	g := NewWithT(t)
	ctx := t.Context()
	c := e.Client()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "kept-", Namespace: metav1.NamespaceDefault}, Data: map[string]string{"k": "v"}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())
	etcd, apiServer := e.controlPlaneProcesses()
	g.Expect(etcd).To(HaveLen(1))
	g.Expect(apiServer).To(HaveLen(1))

	g.Expect(e.StopAPIServer(ctx)).To(Succeed())

	g.Expect(processAlive(apiServer[0])).To(BeFalse(), "StopAPIServer must return once kube-apiserver has exited")
	g.Expect(processAlive(etcd[0])).To(BeTrue(), "etcd must keep running")
	err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	g.Expect(err).To(MatchError(ContainSubstring("connection refused")))
	g.Expect(e.StopAPIServer(ctx)).To(MatchError("failed to stop kube-apiserver: it is already stopped"))

	g.Expect(e.StartAPIServer(ctx)).To(Succeed())

	var got corev1.ConfigMap
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)).To(Succeed())
	g.Expect(got.Data).To(Equal(cm.Data))
	g.Expect(e.StartAPIServer(ctx)).To(MatchError("failed to start kube-apiserver: it is already running"))

	// Restart the restarted process, twice at once: the calls take turns.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = e.RestartAPIServer(ctx) })
	}
	wg.Wait()
	g.Expect(errs).To(HaveEach(Not(HaveOccurred())))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)).To(Succeed())
	_, restarted := e.controlPlaneProcesses()
	g.Expect(restarted).To(HaveLen(1))

	// A kube-apiserver that died by itself: StopAPIServer says so, and it can be started again.
	g.Expect(syscall.Kill(restarted[0], syscall.SIGKILL)).To(Succeed())
	g.Eventually(func() bool {
		e.apiMu.Lock()
		defer e.apiMu.Unlock()
		return e.apiServer.hasExited()
	}).Should(BeTrue())
	g.Expect(e.StopAPIServer(ctx)).To(MatchError(ContainSubstring("failed to stop kube-apiserver: it had already exited (signal: killed)")))
	g.Expect(e.StartAPIServer(ctx)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)).To(Succeed())
	_, restarted = e.controlPlaneProcesses()
	g.Expect(restarted).To(HaveLen(1))

	g.Expect(e.Stop()).To(Succeed())

	g.Expect(processAlive(restarted[0])).To(BeFalse(), "Stop must stop the restarted kube-apiserver")
	etcd, apiServer = e.controlPlaneProcesses()
	g.Expect(etcd).To(BeEmpty())
	g.Expect(apiServer).To(BeEmpty())
	g.Expect(e.StartAPIServer(ctx)).To(MatchError("failed to start kube-apiserver: the environment is stopped"))
	g.Expect(e.RestartAPIServer(ctx)).To(MatchError("failed to stop kube-apiserver: the environment is stopped"))
}

func TestStopWhileTheAPIServerIsStopped(t *testing.T) {
	e := startOwnEnvironment(t, Options{})
	g := NewWithT(t)
	g.Expect(e.StopAPIServer(t.Context())).To(Succeed())
	etcd, _ := e.controlPlaneProcesses()
	g.Expect(etcd).To(HaveLen(1))

	g.Expect(e.Stop()).To(Succeed())

	g.Expect(processAlive(etcd[0])).To(BeFalse(), "Stop must stop etcd")
	g.Expect(e.workDir).NotTo(BeADirectory())
}

// signalWriter is an output that tells when a given text is written to it.
type signalWriter struct {
	want string

	mu   sync.Mutex
	buf  []byte
	seen chan struct{} // nil unless armed
}

// arm returns a channel that is closed once want is written.
func (w *signalWriter) arm() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf, w.seen = nil, make(chan struct{})
	return w.seen
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if strings.Contains(string(w.buf), w.want) {
		close(w.seen)
		w.buf, w.seen = nil, nil
	} else if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-len(w.want):]
	}
	return len(p), nil
}

func TestStartAPIServerRetriesWhileItsPortIsTaken(t *testing.T) {
	output := &signalWriter{want: "address already in use"}
	e := startOwnEnvironment(t, Options{ControlPlaneOutput: output})
	g := NewWithT(t)
	ctx := t.Context()
	port, err := e.apiServerPort()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.StopAPIServer(ctx)).To(Succeed())
	g.Expect(listening(port)).To(BeFalse())

	// Taken for good: every attempt fails, and the API server stays stopped.
	taken, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listening(port)).To(BeTrue())
	err = e.StartAPIServer(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("failed to start kube-apiserver: its port was still in use after 5 attempts")))
	g.Expect(err).To(MatchError(ContainSubstring("bind: address already in use")), "the error must end with kube-apiserver's output")
	_, apiServer := e.controlPlaneProcesses()
	g.Expect(apiServer).To(BeEmpty())
	g.Expect(e.StopAPIServer(ctx)).To(MatchError("failed to stop kube-apiserver: it is already stopped"))

	// Taken for a moment: released after the first attempt failed, it is free for a later one.
	seen := output.arm()
	started := make(chan error, 1)
	go func() { started <- e.StartAPIServer(ctx) }()
	select {
	case <-seen:
	case err := <-started:
		t.Fatalf("StartAPIServer returned before kube-apiserver found its port taken: %v", err)
	}
	g.Expect(taken.Close()).To(Succeed())
	g.Expect(<-started).To(Succeed())
	g.Expect(e.Client().List(ctx, &corev1.ConfigMapList{})).To(Succeed())
}

func TestRestartingAnEnvironmentThatIsNotStartedIsAnError(t *testing.T) {
	g := NewWithT(t)
	e := New(Options{})

	g.Expect(e.StopAPIServer(t.Context())).To(MatchError("failed to stop kube-apiserver: the environment is not started"))
	g.Expect(e.StartAPIServer(t.Context())).To(MatchError("failed to start kube-apiserver: the environment is not started"))
}

func TestHasFlag(t *testing.T) {
	args := []string{"kube-apiserver", "--cert-dir=/tmp/a", "--secure-port", "6443", "--etcd-servers"}
	tests := []struct {
		name        string
		flag, value string
		want        bool
	}{
		{"flag=value", "--cert-dir", "/tmp/a", true},
		{"flag value", "--secure-port", "6443", true},
		{"another value", "--cert-dir", "/tmp/b", false},
		{"a flag without a value at the end", "--etcd-servers", "", false},
		{"a missing flag", "--data-dir", "/tmp/a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(hasFlag(args, tt.flag, tt.value)).To(Equal(tt.want))
		})
	}
}
