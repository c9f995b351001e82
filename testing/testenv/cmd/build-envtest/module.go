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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	kubernetesModule = "k8s.io/kubernetes"
	etcdModule       = "go.etcd.io/etcd/server/v3"
	// toolsModule is the path of the temporary module the binaries are built in.
	toolsModule = "build-envtest.local/tools"
)

// etcdMain is the main package of etcd's server: go.etcd.io/etcd/server/v3 has none of its own.
const etcdMain = `// Command etcd is etcd's server, built from the go.etcd.io/etcd/server/v3 module for envtest.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
`

// goModFile is the part of `go mod edit -json`'s output the tools module is made from.
type goModFile struct {
	Go      string
	GoDebug []struct{ Key, Value string }
	Require []modVersion
	Replace []replacement
	Exclude []modVersion
}

type modVersion struct{ Path, Version string }

// replacement is a replace directive of go.mod.
type replacement struct{ Old, New modVersion }

// module is the temporary tools module the binaries are built in.
type module struct {
	dir        string
	kubernetes string // k8s.io/kubernetes's version, "v1.37.2"
	etcd       string // etcd's server's version, "v3.7.0"
}

// writeModule writes the tools module for v into dir: a go.mod made from k8s.io/kubernetes's
// own, and etcd's main package.
func writeModule(ctx context.Context, dir string, v version) (module, error) {
	kube := "v" + v.kubernetes
	var dl struct{ Path, Version, GoMod, Error string }
	out, err := goCommand(ctx, dir, "mod", "download", "-json", kubernetesModule+"@"+kube)
	// go mod download -json reports a module it cannot fetch in the JSON, and exits non-zero.
	if jsonErr := json.Unmarshal(out, &dl); jsonErr != nil || dl.Error != "" {
		if dl.Error != "" {
			return module{}, fmt.Errorf("failed to download %s@%s: %s", kubernetesModule, kube, dl.Error)
		}
		return module{}, fmt.Errorf("failed to download %s@%s: %w", kubernetesModule, kube, errors.Join(err, jsonErr))
	}
	out, err = goCommand(ctx, dir, "mod", "edit", "-json", dl.GoMod)
	if err != nil {
		return module{}, fmt.Errorf("failed to read the go.mod of %s@%s: %w", kubernetesModule, kube, err)
	}
	var upstream goModFile
	if err := json.Unmarshal(out, &upstream); err != nil {
		return module{}, fmt.Errorf("failed to read the go.mod of %s@%s: %w", kubernetesModule, kube, err)
	}
	goMod, etcd, err := toolsGoMod(upstream, kube, v.staging)
	if err != nil {
		return module{}, fmt.Errorf("failed to make a module from the go.mod of %s@%s: %w", kubernetesModule, kube, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), goMod, 0o644); err != nil {
		return module{}, fmt.Errorf("failed to write the tools module: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "etcd"), 0o755); err != nil {
		return module{}, fmt.Errorf("failed to write the tools module: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etcd", "main.go"), []byte(etcdMain), 0o644); err != nil {
		return module{}, fmt.Errorf("failed to write the tools module: %w", err)
	}
	return module{dir: dir, kubernetes: kube, etcd: etcd}, nil
}

// toolsGoMod returns the go.mod of the tools module for k8s.io/kubernetes at version kube, whose
// go.mod is upstream, and the version of etcd's server that upstream requires:
//
//   - the go version and godebug settings of upstream, so the binaries behave as Kubernetes'
//     own builds;
//   - k8s.io/kubernetes and etcd's server as requirements;
//   - each k8s.io module that upstream replaces by a directory (the staging modules) replaced,
//     and required if upstream requires it, at staging, the published version that matches
//     kube; any other replacement and every exclusion as upstream has it.
func toolsGoMod(upstream goModFile, kube, staging string) ([]byte, string, error) {
	var etcd string
	required := map[string]bool{}
	for _, r := range upstream.Require {
		required[r.Path] = true
		if r.Path == etcdModule {
			etcd = r.Version
		}
	}
	if etcd == "" {
		return nil, "", fmt.Errorf("it does not require %s", etcdModule)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "module %s\n\n", toolsModule)
	if upstream.Go != "" {
		fmt.Fprintf(&b, "go %s\n\n", upstream.Go)
	}
	for _, d := range upstream.GoDebug {
		fmt.Fprintf(&b, "godebug %s=%s\n", d.Key, d.Value)
	}
	if len(upstream.GoDebug) > 0 {
		b.WriteString("\n")
	}

	require, replace, err := stagingDirectives(upstream.Replace, required, staging)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(&b, "require (\n\t%s %s\n\t%s %s\n)\n\n", kubernetesModule, kube, etcdModule, etcd)
	b.WriteString("// The staging modules of " + kubernetesModule + " " + kube + ", published as " + staging + ".\n")
	if require != "" {
		b.WriteString("require (\n" + require + ")\n\n")
	}
	b.WriteString("replace (\n" + replace + ")\n")
	if len(upstream.Exclude) > 0 {
		b.WriteString("\nexclude (\n")
		for _, e := range upstream.Exclude {
			fmt.Fprintf(&b, "\t%s\n", versioned(e))
		}
		b.WriteString(")\n")
	}
	return b.Bytes(), etcd, nil
}

// stagingDirectives returns the lines of the require and replace blocks for upstream's
// replacements: each staging module (a k8s.io module replaced by a directory) replaced, and
// required when upstream requires it, at staging, the published version; any other replacement as
// it is. A replacement by another directory is an error, and so is none of a staging module.
func stagingDirectives(replacements []replacement, required map[string]bool, staging string) (require, replace string, _ error) {
	var req, rep strings.Builder
	staged := 0
	for _, r := range replacements {
		local := r.New.Version == "" && (strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../"))
		switch {
		case local && strings.HasPrefix(r.Old.Path, "k8s.io/"):
			// What upstream requires (at v0.0.0) is required at the published version too: the
			// build list then names the version the code comes from, in the binaries' build
			// information and in the Go build cache's keys. Some staging modules that nothing
			// requires (sample-controller) are not published at every version.
			if required[r.Old.Path] {
				fmt.Fprintf(&req, "\t%s %s\n", r.Old.Path, staging)
			}
			fmt.Fprintf(&rep, "\t%s => %s %s\n", r.Old.Path, r.Old.Path, staging)
			staged++
		case local:
			return "", "", fmt.Errorf("it replaces %s with the directory %s, which is not part of the published module", r.Old.Path, r.New.Path)
		default:
			fmt.Fprintf(&rep, "\t%s => %s\n", versioned(r.Old), versioned(r.New))
		}
	}
	if staged == 0 {
		return "", "", errors.New("it replaces no staging module: is it a Kubernetes release?")
	}
	return req.String(), rep.String(), nil
}

// versioned is "path version", or "path" for a module without a version.
func versioned(m modVersion) string {
	if m.Version == "" {
		return m.Path
	}
	return m.Path + " " + m.Version
}

// goCommand runs the go command in dir, outside any workspace, and returns its standard output;
// an error carries its standard error.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// goEnv is the environment of the go commands: the caller's, outside any go.work, with the
// tools module's requirements and go.sum completed as needed, and without cgo (the binaries
// run on the machine that builds them, and Kubernetes builds them without cgo too).
func goEnv() []string {
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	return append(os.Environ(), "GOWORK=off", "GOFLAGS="+flags, "CGO_ENABLED=0")
}
