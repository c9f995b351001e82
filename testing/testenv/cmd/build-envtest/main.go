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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// defaultVersion is the Kubernetes version built without -version: testenv.KubernetesVersion,
// the one testenv looks for first (a test checks that they agree).
const defaultVersion = "1.37.2"

// options are the command-line flags.
type options struct {
	version  string
	dir      string
	binaries string
	printDir bool
}

func main() {
	var o options
	flags := flag.NewFlagSet("build-envtest", flag.ExitOnError)
	flags.StringVar(&o.version, "version", defaultVersion,
		"Kubernetes version to build (k8s.io/kubernetes v<version>); etcd is built at the version it requires")
	flags.StringVar(&o.dir, "dir", "",
		"install into this directory instead of setup-envtest's standard one for the version")
	flags.StringVar(&o.binaries, "binaries", strings.Join(binaryNames(), ","),
		"comma-separated binaries to install; those already there at the right version are kept")
	flags.BoolVar(&o.printDir, "print-dir", false, "only print the directory and exit")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: build-envtest [flags]\n\n"+
			"Builds etcd, kube-apiserver, kube-controller-manager and kubectl from Go modules into\n"+
			"setup-envtest's directory for envtest and tenon's testing/testenv, and prints the directory.\n\n")
		flags.PrintDefaults()
	}
	_ = flags.Parse(os.Args[1:]) // ExitOnError
	if flags.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "build-envtest: unexpected arguments %q\n", flags.Args())
		flags.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	dir, err := run(ctx, o, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "build-envtest:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}

// run installs what o asks for and returns the directory, logging progress to log.
func run(ctx context.Context, o options, log io.Writer) (string, error) {
	v, err := parseVersion(o.version)
	if err != nil {
		return "", err
	}
	dir, err := assetsDirOf(o, v)
	if err != nil || o.printDir {
		return dir, err
	}
	wanted, err := selectBinaries(o.binaries)
	if err != nil {
		return "", err
	}
	var missing []binary
	for _, b := range wanted {
		if !b.upToDate(ctx, filepath.Join(dir, b.name), v.kubernetes) {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		fmt.Fprintf(log, "build-envtest: %s up to date in %s\n", strings.Join(names(wanted), ", "), dir)
		return dir, nil
	}
	if err := buildInto(ctx, log, v, dir, missing); err != nil {
		return "", err
	}
	return dir, nil
}

// assetsDirOf returns the absolute path of the directory the binaries go in: -dir, or else the
// one of version v that testenv looks in.
func assetsDirOf(o options, v version) (string, error) {
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = assetsDir(v.kubernetes); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("failed to find the absolute path of -dir: %w", err)
	}
	return abs, nil
}

// buildInto builds the missing binaries of version v in a temporary module and installs them
// into dir, checking that each reports v once there.
func buildInto(ctx context.Context, log io.Writer, v version, dir string, missing []binary) error {
	work, err := os.MkdirTemp("", "build-envtest-")
	if err != nil {
		return fmt.Errorf("failed to create a working directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	mod, err := writeModule(ctx, work, v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	out, err := os.MkdirTemp(work, "bin-")
	if err != nil {
		return fmt.Errorf("failed to create a build directory: %w", err)
	}
	if err := build(ctx, log, mod, out, dir, missing); err != nil {
		return err
	}
	if err := install(out, dir, missing); err != nil {
		return err
	}
	for _, b := range missing {
		if !b.upToDate(ctx, filepath.Join(dir, b.name), v.kubernetes) {
			return fmt.Errorf("the %s built into %s does not report version %s", b.name, dir, b.version(mod))
		}
	}
	return nil
}

// version is a Kubernetes version and the matching version of its staging modules.
type version struct {
	kubernetes string // "1.37.2"
	staging    string // "v0.37.2"
}

// parseVersion accepts "1.37.2" or "v1.37.2", with an optional pre-release ("1.38.0-rc.1").
func parseVersion(s string) (version, error) {
	k := strings.TrimPrefix(strings.TrimSpace(s), "v")
	core, pre, hasPre := strings.Cut(k, "-")
	parts := strings.Split(core, ".")
	valid := len(parts) == 3 && parts[0] == "1" && (!hasPre || pre != "")
	for _, p := range parts {
		valid = valid && p != "" && strings.Trim(p, "0123456789") == ""
	}
	if !valid {
		return version{}, fmt.Errorf("-version %q: want a Kubernetes release such as %s", s, defaultVersion)
	}
	return version{kubernetes: k, staging: "v0." + strings.TrimPrefix(k, "1.")}, nil
}

// assetsDir returns setup-envtest's directory for this Kubernetes version, OS and architecture.
func assetsDir(kubernetes string) (string, error) {
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("failed to find the home directory (set XDG_DATA_HOME or -dir): %w", err)
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "kubebuilder-envtest", "k8s",
		fmt.Sprintf("%s-%s-%s", kubernetes, runtime.GOOS, runtime.GOARCH)), nil
}

// selectBinaries returns the binaries named in list, in build order.
func selectBinaries(list string) ([]binary, error) {
	var wanted []string
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name != "" && !slices.Contains(wanted, name) {
			wanted = append(wanted, name)
		}
	}
	if len(wanted) == 0 {
		return nil, errors.New("-binaries is empty: name at least one of " + strings.Join(binaryNames(), ", "))
	}
	var out []binary
	for _, b := range binaries {
		if slices.Contains(wanted, b.name) {
			out = append(out, b)
		}
	}
	if len(out) != len(wanted) {
		return nil, fmt.Errorf("-binaries %q: each name must be one of %s", list, strings.Join(binaryNames(), ", "))
	}
	return out, nil
}

func names(bins []binary) []string {
	out := make([]string, 0, len(bins))
	for _, b := range bins {
		out = append(out, b.name)
	}
	return out
}

func binaryNames() []string { return names(binaries) }
