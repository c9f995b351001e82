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
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// ownedProcess is a control-plane process that the environment runs itself rather than through
// envtest: kube-controller-manager, and kube-apiserver once [Environment.StartAPIServer] has
// restarted it. It runs in its own process group, which the reaper kills if the test process dies.
type ownedProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // the process's exit error, valid once exited is closed
	tail   *tailBuffer   // the end of its output, for error messages
}

// startOwnedProcess starts cmd in a process group of its own, sends its output to output (nil
// discards it) and keeps the last 8 KiB of it, and hands the group to r.
func startOwnedProcess(cmd *exec.Cmd, output io.Writer, r *reaper) (*ownedProcess, error) {
	p := &ownedProcess{cmd: cmd, exited: make(chan struct{}), tail: &tailBuffer{max: 8 << 10}}
	var out io.Writer = p.tail
	if output != nil {
		out = io.MultiWriter(p.tail, output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("failed to start %s: %w", cmd.Path, err)
	}
	r.watch(cmd.Process.Pid)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// hasExited reports whether the process has exited.
func (p *ownedProcess) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process and waits until it has exited; after timeout it kills the
// whole process group. It returns at once for a process that has already exited.
func (p *ownedProcess) stop(timeout time.Duration) {
	if p.hasExited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}
