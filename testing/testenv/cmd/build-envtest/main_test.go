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
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/tenon-dev/tenon/testing/testenv"
)

func TestTheDefaultVersionIsTheOneTestenvLooksForFirst(t *testing.T) {
	NewWithT(t).Expect(defaultVersion).To(Equal(testenv.KubernetesVersion))
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name, in string
		want     version
		wantErr  bool
	}{
		{name: "a release", in: "1.37.2", want: version{kubernetes: "1.37.2", staging: "v0.37.2"}},
		{name: "a release with a v", in: "v1.37.2", want: version{kubernetes: "1.37.2", staging: "v0.37.2"}},
		{name: "a release candidate", in: "1.38.0-rc.1", want: version{kubernetes: "1.38.0-rc.1", staging: "v0.38.0-rc.1"}},
		{name: "a minor version alone is refused", in: "1.37", wantErr: true},
		{name: "a staging version is refused", in: "0.37.2", wantErr: true},
		{name: "a name is refused", in: "latest", wantErr: true},
		{name: "an empty pre-release is refused", in: "1.37.2-", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := parseVersion(tt.in)
			if tt.wantErr {
				g.Expect(err).To(MatchError(ContainSubstring("want a Kubernetes release such as " + defaultVersion)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestSelectBinaries(t *testing.T) {
	g := NewWithT(t)
	bins, err := selectBinaries("kubectl, kube-controller-manager,kubectl")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names(bins)).To(Equal([]string{"kube-controller-manager", "kubectl"}), "build order, each once")

	_, err = selectBinaries("kube-scheduler")
	g.Expect(err).To(MatchError(ContainSubstring("each name must be one of etcd, kube-apiserver, kube-controller-manager, kubectl")))
	_, err = selectBinaries(" , ")
	g.Expect(err).To(MatchError(ContainSubstring("-binaries is empty")))
}

func TestAssetsDirIsSetupEnvtestsStandardDirectory(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("XDG_DATA_HOME", "/data")
	dir, err := assetsDir("1.37.2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dir).To(MatchRegexp(`^/data/kubebuilder-envtest/k8s/1\.37\.2-[a-z0-9]+-[a-z0-9]+$`))
}

func TestToolsGoModMapsEveryStagingModuleToItsPublishedVersion(t *testing.T) {
	g := NewWithT(t)
	upstream := goModFile{
		Go:      "1.26.0",
		GoDebug: []struct{ Key, Value string }{{Key: "default", Value: "go1.26"}},
		Require: []modVersion{
			{Path: "go.etcd.io/etcd/client/v3", Version: "v3.7.0"},
			{Path: etcdModule, Version: "v3.7.0"},
			{Path: "k8s.io/api", Version: "v0.0.0"},
		},
		Replace: []replacement{
			{Old: modVersion{Path: "k8s.io/api"}, New: modVersion{Path: "./staging/src/k8s.io/api"}},
			{Old: modVersion{Path: "k8s.io/client-go"}, New: modVersion{Path: "./staging/src/k8s.io/client-go"}},
			{Old: modVersion{Path: "k8s.io/sample-controller"}, New: modVersion{Path: "./staging/src/k8s.io/sample-controller"}},
			{Old: modVersion{Path: "example.com/forked", Version: "v1.0.0"}, New: modVersion{Path: "example.com/fork", Version: "v1.0.1"}},
		},
		Exclude: []modVersion{{Path: "example.com/broken", Version: "v0.1.0"}},
	}

	goMod, etcd, err := toolsGoMod(upstream, "v1.37.2", "v0.37.2")

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(etcd).To(Equal("v3.7.0"))
	g.Expect(string(goMod)).To(Equal(`module build-envtest.local/tools

go 1.26.0

godebug default=go1.26

require (
	k8s.io/kubernetes v1.37.2
	go.etcd.io/etcd/server/v3 v3.7.0
)

// The staging modules of k8s.io/kubernetes v1.37.2, published as v0.37.2.
require (
	k8s.io/api v0.37.2
)

replace (
	k8s.io/api => k8s.io/api v0.37.2
	k8s.io/client-go => k8s.io/client-go v0.37.2
	k8s.io/sample-controller => k8s.io/sample-controller v0.37.2
	example.com/forked v1.0.0 => example.com/fork v1.0.1
)

exclude (
	example.com/broken v0.1.0
)
`))
}

func TestToolsGoModRefusesWhatItCannotBuild(t *testing.T) {
	staging := []replacement{
		{Old: modVersion{Path: "k8s.io/api"}, New: modVersion{Path: "./staging/src/k8s.io/api"}},
	}
	etcd := []modVersion{{Path: etcdModule, Version: "v3.7.0"}}
	tests := []struct {
		name     string
		upstream goModFile
		want     string
	}{
		{name: "no etcd requirement", upstream: goModFile{Replace: staging}, want: "it does not require " + etcdModule},
		{name: "no staging module", upstream: goModFile{Require: etcd}, want: "it replaces no staging module"},
		{
			name: "a directory that is not a k8s.io module",
			upstream: goModFile{Require: etcd, Replace: append(staging, replacement{
				Old: modVersion{Path: "example.com/local"}, New: modVersion{Path: "../local"},
			})},
			want: "it replaces example.com/local with the directory ../local",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := toolsGoMod(tt.upstream, "v1.37.2", "v0.37.2")
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

// TestTheToolsModuleOfTheDefaultVersionResolves writes the tools module from the real go.mod of
// k8s.io/kubernetes (from the module cache, or the Go module proxy), and checks that the go
// command can load the packages build-envtest builds, at the published versions.
func TestTheToolsModuleOfTheDefaultVersionResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Go module proxy or a module cache that holds k8s.io/kubernetes")
	}
	g := NewWithT(t)
	v, err := parseVersion(defaultVersion)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()

	m, err := writeModule(t.Context(), dir, v)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.kubernetes).To(Equal("v" + defaultVersion))
	g.Expect(m.etcd).To(HavePrefix("v3."))
	args := []string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}
	for _, b := range binaries {
		args = append(args, b.pkg)
	}
	out, err := goCommand(t.Context(), dir, args...)
	g.Expect(err).NotTo(HaveOccurred())
	modules := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if path, version, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			modules[path] = version
		}
	}
	g.Expect(modules).To(HaveKeyWithValue(kubernetesModule, m.kubernetes))
	g.Expect(modules).To(HaveKeyWithValue(etcdModule, m.etcd))
	g.Expect(modules).To(HaveKeyWithValue("k8s.io/apiserver", v.staging), "a staging module at its published version, not v0.0.0")
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Count(goMod, []byte(" => "))).To(BeNumerically(">=", 30), "about 33 staging modules:\n%s", goMod)
}
