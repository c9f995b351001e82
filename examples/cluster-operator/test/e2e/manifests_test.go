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

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

// The kustomize tree builds (with kubectl's built-in kustomize, as `make deploy` builds it with
// kustomize) and the API server accepts every object it makes, in a server-side dry run: the
// Deployment, the RBAC and the CRD of config/default, and the sample Clusters, which the CRD's
// validation would reject if they were invalid.
func TestTheKustomizeTreeBuildsAndTheAPIServerAcceptsIt(t *testing.T) {
	ensureNamespace(t, systemNamespace)

	for _, tc := range []struct {
		dir, namespace string
		kinds          []string
		dryRun         bool
	}{
		{"default", "", []string{"CustomResourceDefinition", "ServiceAccount", "Role", "ClusterRole", "RoleBinding",
			"ClusterRoleBinding", "Service", "Deployment", "Namespace"}, true},
		{"samples", env.Namespace(t), []string{"Cluster"}, true},
		// ServiceMonitor is a Prometheus operator CRD, which envtest does not have: build only.
		{"prometheus", "", []string{"ServiceMonitor"}, false},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()

			built, err := env.Kubectl(ctx, "kustomize", filepath.Join(moduleDir, "config", tc.dir))
			g.Expect(err).NotTo(HaveOccurred())
			for _, kind := range tc.kinds {
				g.Expect(string(built)).To(ContainSubstring("\nkind: "+kind+"\n"), "config/%s makes a %s", tc.dir, kind)
			}
			if !tc.dryRun {
				return
			}
			manifest := filepath.Join(t.TempDir(), tc.dir+".yaml")
			g.Expect(os.WriteFile(manifest, built, 0o600)).To(Succeed())
			args := []string{"apply", "--dry-run=server", "-f", manifest}
			if tc.namespace != "" {
				args = append(args, "--namespace", tc.namespace)
			}
			out, err := env.Kubectl(ctx, args...)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(out)).To(ContainSubstring("(server dry run)"))
		})
	}
}

// The namespace the manager publishes directory entries in (its --directory-namespace flag) is
// one the kustomize tree creates, so `make deploy` needs no step by hand: the manager's own
// namespace. (A second Namespace in the tree would be renamed by kustomize's namespace
// transformer, which makes every Namespace object the one of config/default.)
func TestTheKustomizeTreeCreatesTheDirectoryNamespace(t *testing.T) {
	g := NewWithT(t)
	built, err := env.Kubectl(t.Context(), "kustomize", filepath.Join(moduleDir, "config", "default"))
	g.Expect(err).NotTo(HaveOccurred())
	flag := regexp.MustCompile(`--directory-namespace=(\S+)`).FindStringSubmatch(string(built))
	g.Expect(flag).NotTo(BeNil(), "the Deployment sets --directory-namespace")
	g.Expect(string(built)).To(MatchRegexp(`(?m)^kind: Namespace\nmetadata:\n(  .*\n)*  name: ` + regexp.QuoteMeta(flag[1]) + `\n`))
}
