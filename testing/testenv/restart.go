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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ErrRestartNotSupported is returned (wrapped) by [Environment.StopAPIServer] and
// [Environment.RestartAPIServer] on systems without /proc, such as macOS, where the environment
// cannot find the kube-apiserver process that envtest started. Tests that must also run there can
// skip on it:
//
//	if err := env.RestartAPIServer(ctx); errors.Is(err, testenv.ErrRestartNotSupported) {
//		t.Skip(err)
//	}
var ErrRestartNotSupported = errors.New("restarting kube-apiserver is not supported on this system: it needs /proc")

const (
	// apiServerStartAttempts is how often StartAPIServer starts kube-apiserver when it exits at
	// once because its port is still in use.
	apiServerStartAttempts = 5
	// apiServerDrainTime is how long kube-apiserver may take, once it has stopped listening, to
	// finish the requests in flight before it is killed.
	apiServerDrainTime = 2 * time.Second
	// killWait bounds the wait for a process after SIGKILL.
	killWait = 10 * time.Second
)

// apiServerCommand is how envtest ran kube-apiserver: StartAPIServer runs it again exactly so.
type apiServerCommand struct {
	path string   // the executable
	args []string // the whole argv, argv[0] included
	env  []string
	dir  string
}

// StopAPIServer stops kube-apiserver and returns once its process has exited. etcd keeps
// running, and with it every object; so does the garbage collector, which reconnects by itself.
// Until [Environment.StartAPIServer], every request fails the way it does when a real API server
// is down: the connection is refused.
//
//   - kube-apiserver gets SIGTERM, so it stops accepting connections and finishes the requests
//     in flight, as in a cluster. It would then hold open watches (every manager and the garbage
//     collector have some) for up to a minute, so 2 seconds after it stopped listening it is
//     killed, which breaks them as a crash would. It is also killed when ctx is done; either way
//     StopAPIServer returns once the process is gone.
//   - Stopping an API server that is already stopped is an error, as is stopping one of an
//     environment that is not started or already stopped: a test that does either has lost track
//     of the state it means to test.
//   - When a kube-apiserver that StartAPIServer started has exited by itself since, StopAPIServer
//     returns an error with its last output, and the API server counts as stopped.
//   - It needs /proc to find the process envtest started; without it, it returns
//     [ErrRestartNotSupported].
//
// The API server is shared by every test that uses the environment; see "Restarting the API
// server" in the package documentation.
func (e *Environment) StopAPIServer(ctx context.Context) error {
	e.apiMu.Lock()
	defer e.apiMu.Unlock()
	return e.stopAPIServer(ctx)
}

// StartAPIServer starts kube-apiserver again after [Environment.StopAPIServer], with the same
// executable, flags, environment, certificates, port and etcd, and returns once it answers
// /readyz with 200 OK and its RBAC authorizer has loaded the roles and bindings (before then a
// restarting kube-apiserver denies requests RBAC allows). Every client, user and manager
// created before the restart keeps working with the configuration it has: nothing about the
// server's identity or its clients' credentials changes. With [Options.GarbageCollector], StartAPIServer also waits until the collector, which
// reconnects by itself, has proved again that it works on a probe object, as [Environment.Start]
// does.
//
//   - Each wait, for /readyz and for the collector, is bounded by ctx and by
//     [Options.StartTimeout]. When kube-apiserver exits at once because its port is not free yet,
//     it is started again, up to 5 times.
//   - On failure the error ends with the last lines kube-apiserver printed, and the API server is
//     left stopped, so that StartAPIServer may be called again.
//   - Starting an API server that is running is an error, as is starting one of an environment
//     that is not started or already stopped.
//   - The new process runs in its own process group, sends its output to
//     [Options.ControlPlaneOutput], is stopped by [Environment.Stop], and is killed by the watchdog
//     if the test process dies first.
func (e *Environment) StartAPIServer(ctx context.Context) error {
	e.apiMu.Lock()
	defer e.apiMu.Unlock()
	return e.startAPIServer(ctx)
}

// RestartAPIServer stops kube-apiserver and starts it again: [Environment.StopAPIServer], then
// [Environment.StartAPIServer], with no other call of either in between. Use it to prove that an
// operator recovers from an API server restart without being restarted itself:
//
//	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())
//	g.Expect(env.CreateAndWait(ctx, obj, mgr.GetCache())).To(Succeed()) // the cache reconnected
//
// It returns an error when the API server is stopped.
func (e *Environment) RestartAPIServer(ctx context.Context) error {
	e.apiMu.Lock()
	defer e.apiMu.Unlock()
	if err := e.stopAPIServer(ctx); err != nil {
		return err
	}
	return e.startAPIServer(ctx)
}

// checkAPIServerState returns an error unless the environment is running and its API server is
// stopped (wantStopped) or running (!wantStopped). e.apiMu must be held.
func (e *Environment) checkAPIServerState(verb string, wantStopped bool) error {
	switch {
	case e.stopped:
		return fmt.Errorf("failed to %s kube-apiserver: the environment is stopped", verb)
	case e.config == nil:
		return fmt.Errorf("failed to %s kube-apiserver: the environment is not started", verb)
	case e.apiStopped && !wantStopped:
		return fmt.Errorf("failed to %s kube-apiserver: it is already stopped", verb)
	case !e.apiStopped && wantStopped:
		return fmt.Errorf("failed to %s kube-apiserver: it is already running", verb)
	}
	return nil
}

// stopAPIServer implements StopAPIServer; e.apiMu must be held.
func (e *Environment) stopAPIServer(ctx context.Context) error {
	if err := e.checkAPIServerState("stop", false); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("failed to stop kube-apiserver: %w", err)
	}

	if p := e.apiServer; p != nil {
		// Started by StartAPIServer: this process is ours and Wait tells when it has exited.
		if p.hasExited() {
			e.apiServer, e.apiStopped = nil, true
			return fmt.Errorf("failed to stop kube-apiserver: it had already exited (%s); its last output:\n%s", p.cmd.ProcessState, p.tail)
		}
		if err := e.terminateAPIServer(ctx, p.cmd.Process.Pid, p.exited); err != nil {
			return fmt.Errorf("failed to stop kube-apiserver: %w", err)
		}
		e.apiServer, e.apiStopped = nil, true
		return nil
	}

	// Started by envtest, which waits for it: find it in /proc, remember how it was started,
	// and watch /proc until it is gone. This happens once: StartAPIServer runs its successors.
	pid, err := e.findEnvtestAPIServer()
	if err != nil {
		return fmt.Errorf("failed to stop kube-apiserver: %w", err)
	}
	if e.apiCommand, err = readCommand(pid); err != nil {
		return fmt.Errorf("failed to stop kube-apiserver: %w", err)
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exited := make(chan struct{})
	go func() {
		gone := func(context.Context) (bool, error) { return !processAlive(pid) || parentOf(pid) != os.Getpid(), nil }
		if wait.PollUntilContextCancel(watchCtx, 20*time.Millisecond, true, gone) == nil {
			close(exited)
		}
	}()
	// envtest starts its processes in process groups of their own, so pid is also the group.
	if err := e.terminateAPIServer(ctx, pid, exited); err != nil {
		return fmt.Errorf("failed to stop kube-apiserver: %w", err)
	}
	e.apiStopped = true
	return nil
}

// startAPIServer implements StartAPIServer; e.apiMu must be held.
func (e *Environment) startAPIServer(ctx context.Context) error {
	if err := e.checkAPIServerState("start", true); err != nil {
		return err
	}
	readyCtx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	p, err := e.runAPIServer(readyCtx)
	if err != nil {
		return fmt.Errorf("failed to start kube-apiserver: %w", err)
	}
	e.apiServer, e.apiStopped = p, false
	// A failure from here on leaves the API server stopped, as documented, so that
	// StartAPIServer may be called again.
	fail := func(err error) error {
		if stopErr := e.stopAPIServer(context.WithoutCancel(ctx)); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return fmt.Errorf("failed to start kube-apiserver: it is ready, but %w", err)
	}
	if err := e.waitUntilAuthorizing(readyCtx); err != nil {
		return fail(err)
	}
	if e.collector != nil {
		probeCtx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
		defer cancel()
		if err := e.collector.probe(probeCtx, e.client); err != nil {
			return fail(err)
		}
	}
	return nil
}

// runAPIServer runs e.apiCommand and waits until kube-apiserver is ready. When it exits because
// its port is still in use, as the previous process's port may be for a moment, it runs it again,
// up to apiServerStartAttempts times.
func (e *Environment) runAPIServer(ctx context.Context) (*ownedProcess, error) {
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(e.apiCommand.path)
		cmd.Args, cmd.Env, cmd.Dir = e.apiCommand.args, e.apiCommand.env, e.apiCommand.dir
		p, err := startOwnedProcess(cmd, e.opts.ControlPlaneOutput, e.reaper)
		if err != nil {
			return nil, err
		}
		err = e.waitUntilReady(ctx, p)
		if err == nil {
			return p, nil
		}
		p.stop(killWait)
		err = fmt.Errorf("%w; its last output:\n%s", err, p.tail)
		if !strings.Contains(p.tail.String(), "address already in use") {
			return nil, err
		}
		if attempt == apiServerStartAttempts {
			return nil, fmt.Errorf("its port was still in use after %d attempts: %w", attempt, err)
		}
		timer := time.NewTimer(time.Duration(attempt) * 200 * time.Millisecond)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, err
		}
	}
}

// waitUntilAuthorizing waits until kube-apiserver's RBAC authorizer has loaded the roles and
// bindings from etcd: requests that reach a restarting kube-apiserver before then are denied
// with 403 Forbidden although RBAC allows them, so a test that starts right after
// StartAPIServer must not see such denials. It asks, as the administrator (whose group bypasses RBAC),
// whether an authenticated user may do what the bootstrap ClusterRole system:basic-user allows
// every authenticated user. The answer is yes once the authorizer's ClusterRole and
// ClusterRoleBinding informers have synced; its Role and RoleBinding informers start at the same
// time and, in practice, have synced too.
func (e *Environment) waitUntilAuthorizing(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return fmt.Errorf("failed to create a clientset: %w", err)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "testenv-authorization-probe",
		Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews",
		},
	}}
	last := "no answer"
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("allowed=%v %s", got.Status.Allowed, got.Status.Reason)
		return got.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("its RBAC authorizer did not load the bindings (last answer: %s): %w", last, err)
	}
	return nil
}

// waitUntilReady polls kube-apiserver's /readyz, as the administrator, until it answers 200 OK.
// It fails early when p exits.
func (e *Environment) waitUntilReady(ctx context.Context, p *ownedProcess) error {
	httpClient, err := rest.HTTPClientFor(e.config)
	if err != nil {
		return fmt.Errorf("failed to create an HTTP client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(e.config)
	if err != nil {
		return fmt.Errorf("failed to parse the API server's URL: %w", err)
	}
	readyz := base.JoinPath("readyz").String()
	last := "no answer"
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if p.hasExited() {
			return false, fmt.Errorf("kube-apiserver exited (%s)", p.cmd.ProcessState)
		}
		// A request must not outlive the process: whatever holds the port after it exited may
		// accept the connection and never answer.
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		go func() {
			select {
			case <-p.exited:
				cancel()
			case <-reqCtx.Done():
			}
		}()
		req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, readyz, http.NoBody)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			if p.hasExited() {
				return false, fmt.Errorf("kube-apiserver exited (%s)", p.cmd.ProcessState)
			}
			last = err.Error()
			return false, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver did not become ready (last answer to GET /readyz: %s): %w", last, err)
	}
	return nil
}

// findEnvtestAPIServer returns the process ID of the kube-apiserver envtest started for e. Call it
// only while no kube-apiserver that StartAPIServer started runs.
func (e *Environment) findEnvtestAPIServer() (int, error) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		return 0, fmt.Errorf("%w (%w)", ErrRestartNotSupported, err)
	}
	_, pids := e.controlPlaneProcesses()
	if len(pids) != 1 {
		return 0, fmt.Errorf("found %d processes that run %s with --cert-dir=%s, want 1",
			len(pids), e.bins.apiServer, e.env.ControlPlane.GetAPIServer().CertDir)
	}
	return pids[0], nil
}

// terminateAPIServer sends SIGTERM to kube-apiserver's process group pgid and waits until exited
// is closed. kube-apiserver then stops listening and finishes the requests in flight, but keeps
// open watches open until its request timeout (a minute) has passed, so it is killed
// apiServerDrainTime after it stopped listening, when ctx is done, or after
// controlPlaneStopTimeout, whichever comes first.
func (e *Environment) terminateAPIServer(ctx context.Context, pgid int, exited <-chan struct{}) error {
	port, err := e.apiServerPort()
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to send SIGTERM to process group %d: %w", pgid, err)
	}
	if waitForExit(ctx, port, exited) {
		return nil
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to kill process group %d: %w", pgid, err)
	}
	killTimer := time.NewTimer(killWait)
	defer killTimer.Stop()
	select {
	case <-exited:
		return nil
	case <-killTimer.C:
		return fmt.Errorf("process group %d did not exit %s after SIGKILL", pgid, killWait)
	}
}

// waitForExit reports whether exited is closed before kube-apiserver, told to stop, has stopped
// listening on port for apiServerDrainTime, ctx is done, or controlPlaneStopTimeout has passed.
func waitForExit(ctx context.Context, port int, exited <-chan struct{}) bool {
	timeout := time.NewTimer(controlPlaneStopTimeout)
	defer timeout.Stop()
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	var drained <-chan time.Time // set once kube-apiserver has stopped listening
	for {
		select {
		case <-exited:
			return true
		case <-ctx.Done():
			return false
		case <-timeout.C:
			return false
		case <-drained:
			return false
		case <-ticker.C:
			if drained == nil && !listening(port) {
				drained = time.After(apiServerDrainTime)
			}
		}
	}
}

// apiServerPort returns the TCP port kube-apiserver serves on.
func (e *Environment) apiServerPort() (int, error) {
	u, _, err := rest.DefaultServerUrlFor(e.config)
	if err != nil {
		return 0, fmt.Errorf("failed to parse the API server's URL: %w", err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("failed to parse the API server's port in %s: %w", u, err)
	}
	return port, nil
}
