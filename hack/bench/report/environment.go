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

package report

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/testing/testenv"
)

// Environment describes the machine and the software measured.
type Environment struct {
	CPU        string            `json:"cpu"`
	Cores      int               `json:"cores"`
	Memory     string            `json:"memory"`
	Kernel     string            `json:"kernel"`
	Go         string            `json:"go"`
	Kubernetes string            `json:"kubernetes"`
	Tenon      string            `json:"tenon"`
	Modules    map[string]string `json:"modules"`
}

// reportedModules are the dependencies whose versions the report names.
var reportedModules = []string{
	"sigs.k8s.io/controller-runtime",
	"k8s.io/client-go",
	"k8s.io/apimachinery",
	"github.com/fluxcd/pkg/runtime",
	"sigs.k8s.io/cluster-api",
}

func describeEnvironment() Environment {
	e := Environment{
		CPU:        procField("/proc/cpuinfo", "model name"),
		Cores:      runtime.NumCPU(),
		Memory:     memory(procField("/proc/meminfo", "MemTotal")),
		Kernel:     strings.TrimSpace(readFileOr("/proc/sys/kernel/osrelease", "unknown")),
		Go:         runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Kubernetes: "kube-apiserver and etcd of Kubernetes " + testenv.KubernetesVersion + " (envtest)",
		Tenon:      tenonRevision(),
		Modules:    map[string]string{},
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			for _, m := range reportedModules {
				if d.Path == m {
					e.Modules[m] = d.Version
				}
			}
		}
	}
	return e
}

// tenonRevision names the commit of the working tree the benchmark was built from (the bench
// module replaces tenon with ../..), and says when the tree had uncommitted changes.
func tenonRevision() string {
	rev, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	out := "commit " + strings.TrimSpace(string(rev))
	if status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && strings.TrimSpace(string(status)) != "" {
		out += " with uncommitted changes"
	}
	return out
}

// procField returns the value of the first "key: value" line of a /proc file, or "unknown".
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// memory turns /proc/meminfo's "24684096 kB" into "23.5 GiB".
func memory(total string) string {
	kb, err := strconv.ParseFloat(strings.TrimSuffix(total, " kB"), 64)
	if err != nil {
		return total
	}
	return fmt.Sprintf("%.1f GiB", kb/(1<<20))
}

func readFileOr(path, fallback string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fallback
	}
	return string(data)
}

func readFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("failed to read %s: %w", path, err)
	}
	return string(data), nil
}
