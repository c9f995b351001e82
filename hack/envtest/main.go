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

// Command envtest builds the control-plane binaries that envtest needs (etcd, kube-apiserver,
// kube-controller-manager and kubectl) from their Go modules, so that tests run on machines that cannot reach
// the download site setup-envtest uses but can reach a Go module proxy.
//
// The binaries are installed where setup-envtest would put them,
// $XDG_DATA_HOME/kubebuilder-envtest/k8s/<version>-<os>-<arch> (~/.local/share when XDG_DATA_HOME
// is unset), so the same tests find them whichever way they were obtained. The versions are the
// ones this module's go.mod requires: k8s.io/kubernetes for kube-apiserver,
// kube-controller-manager and kubectl, go.etcd.io/etcd/server/v3 for etcd.
//
// A run that finds binaries reporting the right versions does nothing. Otherwise it builds the
// missing ones in a single `go build` (they share most packages), printing progress, and moves
// each binary into place only when it is complete.
//
// Usage, from this directory:
//
//	go run .             # build what is missing, print the directory
//	go run . -print-dir  # only print the directory
//	go run . -binaries kube-controller-manager -dir DIR
//	                     # only kube-controller-manager, next to binaries setup-envtest downloaded
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	kubernetesModule = "k8s.io/kubernetes"
	etcdModule       = "go.etcd.io/etcd/server/v3"
)

// binary is one program to install.
type binary struct {
	name    string // file name in the assets directory
	pkg     string // package to build
	module  string // module whose version the binary must report
	version string // that module's version, without the leading "v"
}

// versionOK reports whether the installed binary at path reports b.version.
func (b binary) versionOK(ctx context.Context, path string) bool {
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
		return bytes.Contains(out, []byte("etcd Version: "+b.version+"\n"))
	case "kubectl":
		// "Client Version: v1.37.2\nKustomize Version: v5.x"
		return bytes.HasPrefix(out, []byte("Client Version: v"+b.version+"\n"))
	default:
		// "Kubernetes v1.37.2"
		return strings.TrimSpace(string(out)) == "Kubernetes v"+b.version
	}
}

func main() {
	var o options
	flag.BoolVar(&o.printDir, "print-dir", false, "print the assets directory and exit")
	flag.StringVar(&o.dir, "dir", "", "install into this directory instead of setup-envtest's standard one")
	flag.StringVar(&o.only, "binaries", "", "comma-separated subset of etcd,kube-apiserver,kube-controller-manager,kubectl to install")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	printDir bool
	dir      string
	only     string
}

func run(ctx context.Context, o options) error {
	versions, err := moduleVersions(ctx, kubernetesModule, etcdModule)
	if err != nil {
		return err
	}
	k8sVersion := versions[kubernetesModule]
	dir := o.dir
	if dir == "" {
		if dir, err = assetsDir(k8sVersion); err != nil {
			return err
		}
	}
	if o.printDir {
		fmt.Println(dir)
		return nil
	}

	binaries := []binary{
		{name: "etcd", pkg: "./etcd", module: etcdModule, version: versions[etcdModule]},
		{name: "kube-apiserver", pkg: kubernetesModule + "/cmd/kube-apiserver", module: kubernetesModule, version: k8sVersion},
		{name: "kube-controller-manager", pkg: kubernetesModule + "/cmd/kube-controller-manager", module: kubernetesModule, version: k8sVersion},
		{name: "kubectl", pkg: kubernetesModule + "/cmd/kubectl", module: kubernetesModule, version: k8sVersion},
	}
	if o.only != "" {
		wanted := strings.Split(o.only, ",")
		binaries = slices.DeleteFunc(binaries, func(b binary) bool { return !slices.Contains(wanted, b.name) })
		if len(binaries) != len(wanted) {
			return fmt.Errorf("-binaries %q: each name must be one of etcd, kube-apiserver, kube-controller-manager, kubectl", o.only)
		}
	}
	var missing []binary
	for _, b := range binaries {
		if b.versionOK(ctx, filepath.Join(dir, b.name)) {
			continue
		}
		missing = append(missing, b)
	}
	if len(missing) == 0 {
		var names []string
		for _, b := range binaries {
			names = append(names, b.name+" "+b.version)
		}
		fmt.Fprintf(os.Stderr, "envtest: %s up to date in %s\n", strings.Join(names, ", "), dir)
		fmt.Println(dir)
		return nil
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	if err := build(ctx, dir, k8sVersion, missing); err != nil {
		return err
	}
	for _, b := range missing {
		if !b.versionOK(ctx, filepath.Join(dir, b.name)) {
			return fmt.Errorf("built %s does not report version %s", b.name, b.version)
		}
	}
	fmt.Println(dir)
	return nil
}

// moduleVersions returns the versions (without "v") of the given modules in this module's build list.
func moduleVersions(ctx context.Context, modules ...string) (map[string]string, error) {
	args := append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, modules...)
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("failed to list module versions: %w", exitDetail(err))
	}
	versions := make(map[string]string, len(modules))
	for line := range strings.Lines(string(out)) {
		path, version, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok {
			versions[path] = strings.TrimPrefix(version, "v")
		}
	}
	for _, m := range modules {
		if versions[m] == "" {
			return nil, fmt.Errorf("module %s is not in the build list of hack/envtest", m)
		}
	}
	return versions, nil
}

// assetsDir returns setup-envtest's directory for this Kubernetes version, os and architecture.
func assetsDir(k8sVersion string) (string, error) {
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("failed to find the home directory (set XDG_DATA_HOME): %w", err)
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "kubebuilder-envtest", "k8s",
		fmt.Sprintf("%s-%s-%s", k8sVersion, runtime.GOOS, runtime.GOARCH)), nil
}

// build compiles the binaries in one go build, into a temporary directory next to dir, and moves
// each into dir once all are built, so an interrupted build never leaves a partial binary behind.
func build(ctx context.Context, dir, k8sVersion string, bins []binary) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return fmt.Errorf("failed to create a build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	major, minor, _ := strings.Cut(k8sVersion, ".")
	minor, _, _ = strings.Cut(minor, ".")
	var ldflags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ldflags = append(ldflags,
			"-X", pkg+".gitVersion=v"+k8sVersion,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".buildDate="+time.Now().UTC().Format(time.RFC3339),
		)
	}
	args := []string{"build", "-v", "-trimpath", "-ldflags", "-s -w " + strings.Join(ldflags, " "), "-o", tmp + string(filepath.Separator)}
	var names []string
	for _, b := range bins {
		args = append(args, b.pkg)
		names = append(names, b.name)
	}

	fmt.Fprintf(os.Stderr, "envtest: building %s into %s\n", strings.Join(names, ", "), dir)
	fmt.Fprintf(os.Stderr, "envtest: a cold build takes about 10-15 minutes on 2 cores; later builds reuse the Go build cache\n")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("failed to capture go build output: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("failed to start go build: %w", err)
	}

	// go build -v names each package as it compiles it; count them for progress and keep every
	// other line (compiler errors) to print if the build fails.
	var compiled atomic.Int64
	var diagnostics bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		scanner := bufio.NewScanner(stderr)
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
	waitErr := make(chan error, 1)
	go func() { <-done; waitErr <- cmd.Wait() }()
	for {
		select {
		case <-ticker.C:
			fmt.Fprintf(os.Stderr, "envtest: %s elapsed, %d packages compiled\n",
				time.Since(start).Round(time.Second), compiled.Load())
			continue
		case err := <-waitErr:
			if err != nil {
				_, _ = io.Copy(os.Stderr, &diagnostics)
				return fmt.Errorf("go build failed after %s: %w", time.Since(start).Round(time.Second), err)
			}
		}
		break
	}
	for _, b := range bins {
		if err := os.Rename(filepath.Join(tmp, b.name), filepath.Join(dir, b.name)); err != nil {
			return fmt.Errorf("failed to install %s: %w", b.name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "envtest: built %s in %s (%d packages compiled)\n",
		strings.Join(names, ", "), time.Since(start).Round(time.Second), compiled.Load())
	return nil
}

// exitDetail adds a command's standard error to its exit error.
func exitDetail(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(exitErr.Stderr))
	}
	return err
}
