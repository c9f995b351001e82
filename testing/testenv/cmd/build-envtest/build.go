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

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// binary is one program to install.
type binary struct {
	name string // file name in the assets directory
	pkg  string // package to build, in the tools module
}

// binaries are the programs build-envtest installs, in the order setup-envtest lists them.
var binaries = []binary{
	{name: "etcd", pkg: "./etcd"},
	{name: "kube-apiserver", pkg: kubernetesModule + "/cmd/kube-apiserver"},
	{name: "kube-controller-manager", pkg: kubernetesModule + "/cmd/kube-controller-manager"},
	{name: "kubectl", pkg: kubernetesModule + "/cmd/kubectl"},
}

// version is the version the built binary reports, for messages.
func (b binary) version(m module) string {
	if b.name == "etcd" {
		return m.etcd
	}
	return m.kubernetes
}

// upToDate reports whether the program at path runs and reports Kubernetes version kubernetes
// ("1.37.2"). Any etcd that reports a version will do: setup-envtest ships an etcd of its own
// choosing with each Kubernetes release, and envtest does not mind which.
func (b binary) upToDate(ctx context.Context, path, kubernetes string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := []string{"--version"}
	if b.name == "kubectl" {
		args = []string{"version", "--client"}
	}
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return false
	}
	switch b.name {
	case "etcd":
		// "etcd Version: 3.7.0\nGit SHA: ..."
		return bytes.HasPrefix(out, []byte("etcd Version: "))
	case "kubectl":
		// "Client Version: v1.37.2\nKustomize Version: v5.x"
		return bytes.HasPrefix(out, []byte("Client Version: v"+kubernetes+"\n"))
	default:
		// "Kubernetes v1.37.2"
		return strings.TrimSpace(string(out)) == "Kubernetes v"+kubernetes
	}
}

// build compiles bins in the tools module m, in one go build (they share most packages), into
// out, printing progress to log.
func build(ctx context.Context, log io.Writer, m module, out, dir string, bins []binary) error {
	args := buildArgs(m, out, bins)

	fmt.Fprintf(log, "build-envtest: building %s (%s %s, etcd %s) for %s\n",
		strings.Join(names(bins), ", "), kubernetesModule, m.kubernetes, m.etcd, dir)
	fmt.Fprintf(log, "build-envtest: a cold build takes minutes (about 10 on two cores for all four); later builds reuse the Go build cache\n")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = m.dir
	cmd.Env = goEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("failed to capture go build output: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("failed to start go build: %w", err)
	}

	// go build -v names each package as it compiles it; count them for progress and keep every
	// other line (downloads, compiler errors) to print if the build fails.
	var compiled atomic.Int64
	var diagnostics bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		scanner := bufio.NewScanner(stderr)
		scanner.Buffer(make([]byte, 64*1024), 1024*1024)
		for scanner.Scan() {
			line := scanner.Text()
			if strings.HasPrefix(line, "#") || strings.Contains(line, ": ") || strings.HasPrefix(line, "\t") {
				diagnostics.WriteString(line + "\n")
				continue
			}
			compiled.Add(1)
		}
	}()
	ticker := time.NewTicker(20 * time.Second)
	defer ticker.Stop()
	for waiting := true; waiting; {
		select {
		case <-ticker.C:
			fmt.Fprintf(log, "build-envtest: %s elapsed, %d packages compiled\n",
				time.Since(start).Round(time.Second), compiled.Load())
		case <-done:
			waiting = false
		}
	}
	if err := cmd.Wait(); err != nil {
		_, _ = io.Copy(log, &diagnostics)
		return fmt.Errorf("go build failed after %s: %w", time.Since(start).Round(time.Second), err)
	}
	fmt.Fprintf(log, "build-envtest: built %s in %s (%d packages compiled)\n",
		strings.Join(names(bins), ", "), time.Since(start).Round(time.Second), compiled.Load())
	return nil
}

// buildArgs returns the arguments of the go build of bins in m into out, with the version
// information Kubernetes' own build stamps (hack/lib/version.sh), so that discovery and --version
// report the release rather than v0.0.0-master.
func buildArgs(m module, out string, bins []binary) []string {
	kube := strings.TrimPrefix(m.kubernetes, "v")
	major, minor, _ := strings.Cut(kube, ".")
	minor, _, _ = strings.Cut(minor, ".")
	var ldflags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ldflags = append(ldflags,
			"-X", pkg+".gitVersion="+m.kubernetes,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".buildDate="+time.Now().UTC().Format(time.RFC3339),
		)
	}
	args := []string{"build", "-v", "-trimpath", "-ldflags", "-s -w " + strings.Join(ldflags, " "), "-o", out + string(filepath.Separator)}
	for _, b := range bins {
		args = append(args, b.pkg)
	}
	return args
}

// install moves each of bins from out into dir, replacing what is there. A directory that
// setup-envtest made read-only (it leaves its version directories at mode 0555) is made
// writable for the moves and given its mode back afterwards.
func install(out, dir string, bins []binary) (err error) {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("failed to install into %s: %w", dir, err)
	}
	if mode := info.Mode().Perm(); mode&0o200 == 0 {
		if err := os.Chmod(dir, mode|0o200); err != nil {
			return fmt.Errorf("failed to make %s writable for the install (setup-envtest leaves it read-only): %w", dir, err)
		}
		defer func() {
			if chErr := os.Chmod(dir, mode); chErr != nil {
				err = errors.Join(err, fmt.Errorf("failed to make %s read-only again: %w", dir, chErr))
			}
		}()
	}
	for _, b := range bins {
		if err := move(filepath.Join(out, b.name), filepath.Join(dir, b.name)); err != nil {
			return fmt.Errorf("failed to install %s into %s: %w", b.name, dir, err)
		}
	}
	return nil
}

// move renames src to dst, or copies it where they are on different file systems (the build
// directory is in the system's temporary directory). A copy is written next to dst and renamed
// over it, so dst is never a partial binary.
func move(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+"-")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := io.Copy(tmp, in); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
