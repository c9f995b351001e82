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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The control-plane processes are found, and watched, through /proc: envtest does not expose
// them. Where /proc does not exist these functions find nothing.

// controlPlaneProcesses returns the process IDs of the etcd and kube-apiserver processes that run
// for e, whether envtest or StartAPIServer started them: children of this process that run the
// binaries with e's directories. Other environments of the same test binary run the same binaries
// with directories of their own.
func (e *Environment) controlPlaneProcesses() (etcd, apiServer []int) {
	dataDir, certDir := e.env.ControlPlane.Etcd.DataDir, e.env.ControlPlane.GetAPIServer().CertDir
	for _, pid := range childrenRunning(e.bins.etcd) {
		if args, err := readCmdline(pid); err == nil && hasFlag(args, "--data-dir", dataDir) {
			etcd = append(etcd, pid)
		}
	}
	for _, pid := range childrenRunning(e.bins.apiServer) {
		if args, err := readCmdline(pid); err == nil && hasFlag(args, "--cert-dir", certDir) {
			apiServer = append(apiServer, pid)
		}
	}
	return etcd, apiServer
}

// childrenRunning returns the process IDs of this process's direct children that run one of the
// given executables. It reads /proc and returns nothing where /proc does not exist.
func childrenRunning(executables ...string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := make(map[string]bool, len(executables))
	for _, e := range executables {
		if resolved, err := filepath.EvalSymlinks(e); err == nil {
			e = resolved
		}
		want[e] = true
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) != self {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err == nil && want[exe] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentOf returns the parent process ID of pid from /proc/<pid>/stat, or -1.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name in field 2 is in parentheses and may contain spaces; fields after the last
	// ')' are: state, ppid, ...
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return -1
	}
	return ppid
}

// processAlive reports whether pid exists and is not a zombie waiting to be reaped: a zombie has
// exited and released its ports and files.
func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(stat[i+1:]), []byte("Z"))
}

// readCmdline returns the argv of process pid, from /proc/<pid>/cmdline.
func readCmdline(pid int) ([]string, error) {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("failed to read the command line of process %d: %w", pid, err)
	}
	s := strings.TrimSuffix(string(cmdline), "\x00")
	if s == "" {
		return nil, fmt.Errorf("failed to read the command line of process %d: it has exited", pid)
	}
	return strings.Split(s, "\x00"), nil
}

// hasFlag reports whether args set flag to value, as --flag=value or as --flag value.
func hasFlag(args []string, flag, value string) bool {
	if slices.Contains(args, flag+"="+value) {
		return true
	}
	i := slices.Index(args, flag)
	return i >= 0 && i+1 < len(args) && args[i+1] == value
}

// readCommand reads the executable, argv, environment and working directory of process pid.
func readCommand(pid int) (*apiServerCommand, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	args, err := readCmdline(pid)
	if err != nil {
		return nil, err
	}
	path, err := os.Readlink(filepath.Join(dir, "exe"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the executable of process %d: %w", pid, err)
	}
	environ, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the environment of process %d: %w", pid, err)
	}
	cwd, err := os.Readlink(filepath.Join(dir, "cwd"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the working directory of process %d: %w", pid, err)
	}
	// A non-nil, possibly empty, Env: nil would mean this process's environment.
	env := []string{}
	if s := strings.TrimSuffix(string(environ), "\x00"); s != "" {
		env = strings.Split(s, "\x00")
	}
	return &apiServerCommand{path: path, args: args, env: env, dir: cwd}, nil
}

// listening reports whether a TCP socket of this network namespace listens on port, from
// /proc/net/tcp and /proc/net/tcp6. Connecting to the port instead would make kube-apiserver log
// a TLS handshake error for every attempt.
func listening(port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			// sl local_address rem_address st ...; state 0A is LISTEN.
			fields := strings.Fields(line)
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], suffix) {
				return true
			}
		}
	}
	return false
}
