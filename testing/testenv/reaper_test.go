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
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// helperEnvVar makes the test binary act as a crashing test process for
// TestNoProcessOutlivesACrashedTestBinary.
const helperEnvVar = "TENON_TESTENV_HELPER"

// TestHelperCrashAfterStart is not a test: run by TestNoProcessOutlivesACrashedTestBinary in a
// child process, it starts an environment, reports its processes and working directory, and
// then crashes the way a test binary does when a test panics.
func TestHelperCrashAfterStart(t *testing.T) {
	mode := os.Getenv(helperEnvVar)
	if mode == "" {
		t.Skip("helper process only")
	}
	e := New(Options{GarbageCollector: true})
	if err := e.Start(); err != nil {
		fmt.Printf("START-ERROR %v\n", err)
		os.Exit(3)
	}
	pids := childrenRunning(e.bins.etcd, e.bins.apiServer, e.bins.controllerManager)
	fmt.Printf("PIDS %s\nWORKDIR %s\n", strings.Trim(fmt.Sprint(pids), "[]"), e.workDir)
	switch mode {
	case "panic":
		panic("a test panicked")
	case "exit":
		os.Exit(1) // e.g. log.Fatal in a test: deferred calls and Stop do not run
	}
}

func TestNoProcessOutlivesACrashedTestBinary(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("the watchdog needs /proc")
	}
	for _, mode := range []string{"panic", "exit"} {
		t.Run(mode, func(t *testing.T) {
			g := NewWithT(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashAfterStart$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnvVar+"="+mode)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout

			err := cmd.Run()

			g.Expect(err).To(HaveOccurred(), "the helper must crash; output:\n%s", stdout.String())
			pids, workDir := parseHelperOutput(t, stdout.String())
			g.Expect(pids).To(HaveLen(3), "etcd, kube-apiserver and kube-controller-manager; output:\n%s", stdout.String())
			for _, pid := range pids {
				g.Eventually(func() bool { return processAlive(pid) }).WithTimeout(10*time.Second).
					Should(BeFalse(), "process %d outlived the crashed test binary", pid)
			}
			g.Eventually(func() error { _, err := os.Stat(workDir); return err }).WithTimeout(10 * time.Second).
				Should(MatchError(os.ErrNotExist))
		})
	}
}

func parseHelperOutput(t *testing.T, out string) (pids []int, workDir string) {
	t.Helper()
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		line := scanner.Text()
		if rest, ok := strings.CutPrefix(line, "PIDS "); ok {
			for _, f := range strings.Fields(rest) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("bad pid %q", f)
				}
				pids = append(pids, pid)
			}
		}
		if rest, ok := strings.CutPrefix(line, "WORKDIR "); ok {
			workDir = rest
		}
	}
	if workDir == "" {
		t.Fatalf("helper reported no working directory; output:\n%s", out)
	}
	return pids, workDir
}
