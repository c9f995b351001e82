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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubernetesVersion is the version of the control plane that tenon is tested with, and the one
// [Environment] looks for first in setup-envtest's directory.
const KubernetesVersion = "1.37.2"

// buildEnvtestCommand is the command that builds the binaries, from the module of the tests
// (which requires tenon) or from anywhere with @<tenon version> after it.
const buildEnvtestCommand = "go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest"

// assetsEnvVar names the environment variable that points at a directory of envtest binaries; it
// is the variable setup-envtest and controller-runtime's envtest use.
const assetsEnvVar = "KUBEBUILDER_ASSETS"

const (
	etcdBinary              = "etcd"
	apiServerBinary         = "kube-apiserver"
	controllerManagerBinary = "kube-controller-manager"
	kubectlBinary           = "kubectl"
)

// ErrBinariesNotFound is returned (wrapped) by [Environment.Start] when no directory holds the
// control-plane binaries the environment needs.
var ErrBinariesNotFound = errors.New("envtest binaries not found")

// binaries are the paths of the control-plane programs an environment runs.
type binaries struct {
	dir               string
	etcd              string
	apiServer         string
	controllerManager string // empty unless the garbage collector was requested
}

// findBinaries locates the control-plane binaries, in this order: the explicit directory, the
// directory named by KUBEBUILDER_ASSETS, then setup-envtest's standard directory (KubernetesVersion
// first, else the newest version there). The first candidate that holds every needed binary wins.
func findBinaries(explicit string, needControllerManager bool) (binaries, error) {
	needed := []string{etcdBinary, apiServerBinary}
	if needControllerManager {
		needed = append(needed, controllerManagerBinary)
	}

	var candidates []string
	if explicit != "" {
		candidates = append(candidates, explicit)
	} else if dir := os.Getenv(assetsEnvVar); dir != "" {
		candidates = append(candidates, dir)
	} else if std, err := envtest.SetupEnvtestDefaultBinaryAssetsDirectory(); err == nil {
		candidates = append(candidates, standardCandidates(std)...)
		if len(candidates) == 0 {
			candidates = append(candidates, filepath.Join(std, KubernetesVersion+"-"+runtime.GOOS+"-"+runtime.GOARCH))
		}
	}

	var problems []string
	for _, dir := range candidates {
		var missing []string
		for _, name := range needed {
			if !isExecutable(filepath.Join(dir, name)) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			b := binaries{
				dir:       dir,
				etcd:      filepath.Join(dir, etcdBinary),
				apiServer: filepath.Join(dir, apiServerBinary),
			}
			if needControllerManager {
				b.controllerManager = filepath.Join(dir, controllerManagerBinary)
			}
			return b, nil
		}
		problems = append(problems, fmt.Sprintf("%s has no %s", dir, strings.Join(missing, ", ")))
	}
	if len(problems) == 0 {
		problems = append(problems, "no directory to search: set "+assetsEnvVar+" or HOME")
	}

	hint := "run `" + buildEnvtestCommand + "` (it builds them from Go modules: a Go module proxy is all it needs), " +
		"or `setup-envtest use " + KubernetesVersion + "` where the internet is reachable, " +
		"or point " + assetsEnvVar + " at a directory that holds them"
	if needControllerManager {
		hint += "; the garbage collector also needs kube-controller-manager, which setup-envtest does not " +
			"download: after setup-envtest, `" + buildEnvtestCommand + " -dir <its directory>` builds only that one"
	}
	return binaries{}, fmt.Errorf("%w (%s): %s", ErrBinariesNotFound, strings.Join(problems, "; "), hint)
}

// standardCandidates lists the version directories under setup-envtest's store for this OS and
// architecture: KubernetesVersion first, then the rest newest first.
func standardCandidates(std string) []string {
	entries, err := os.ReadDir(std)
	if err != nil {
		return nil
	}
	suffix := "-" + runtime.GOOS + "-" + runtime.GOARCH
	type candidate struct {
		dir string
		v   *version.Version
	}
	var found []candidate
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), suffix)
		if !ok || !e.IsDir() {
			continue
		}
		v, err := version.ParseGeneric(name)
		if err != nil {
			continue
		}
		found = append(found, candidate{dir: filepath.Join(std, e.Name()), v: v})
	}
	preferred := version.MustParseGeneric(KubernetesVersion)
	slices.SortFunc(found, func(a, b candidate) int {
		switch {
		case a.v.EqualTo(preferred):
			return -1
		case b.v.EqualTo(preferred):
			return 1
		case a.v.GreaterThan(b.v):
			return -1
		case b.v.GreaterThan(a.v):
			return 1
		}
		return 0
	})
	dirs := make([]string, 0, len(found))
	for _, c := range found {
		dirs = append(dirs, c.dir)
	}
	return dirs
}

// isExecutable reports whether path is a regular file with an execute bit set.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
