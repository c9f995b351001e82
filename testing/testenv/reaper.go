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
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// reaperScript runs in a small shell that outlives the test process. Each line it reads is the
// process group of a control-plane process; when its standard input reaches end of file, which
// happens when the test process exits for any reason (return, panic, os.Exit, a signal, SIGKILL),
// it kills those process groups and removes the environment's working directory. A line "done"
// means the environment was stopped cleanly and there is nothing left to do.
const reaperScript = `
groups=""
while read -r line; do
  case "$line" in
    done) exit 0 ;;
    *) groups="$groups $line" ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
rm -rf -- "$1"
`

// reaper makes sure that no control-plane process outlives the test binary that started it, even
// when the binary panics or is killed before Stop runs. controller-runtime starts etcd and
// kube-apiserver in their own process groups, so they would otherwise be left running.
type reaper struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	writer *os.File
}

// startReaper starts the watchdog shell. A failure is not fatal for the environment: the
// processes are still stopped by Stop; only the guarantee for crashed test binaries is lost.
func startReaper(workDir string) (*reaper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("failed to create the reaper pipe: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "tenon-testenv-reaper", workDir)
	cmd.Stdin = r
	// Its own process group, so a Ctrl-C delivered to the test's process group does not kill the
	// reaper before it has done its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("failed to start the reaper: %w", err)
	}
	_ = r.Close() // the child holds its own copy
	go func() { _ = cmd.Wait() }()
	return &reaper{cmd: cmd, writer: w}, nil
}

// watch asks the reaper to kill process group pgid if the test process dies.
func (r *reaper) watch(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writer != nil {
		_, _ = fmt.Fprintf(r.writer, "%d\n", pgid)
	}
}

// release tells the reaper that everything was stopped cleanly, and lets it exit.
func (r *reaper) release() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writer != nil {
		_, _ = r.writer.WriteString("done\n")
		_ = r.writer.Close()
		r.writer = nil
	}
}
