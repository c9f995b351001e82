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
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tenon-dev/tenon/internal/testtypes"
)

// roleFile holds the permissions configReconciler needs.
var roleFile = filepath.Join("testdata", "role.yaml")

// configReconciler is a small controller: for each Widget of its namespace it reads an optional
// Secret, creates a ConfigMap, and sets status.phase. It keeps the last error it returned.
type configReconciler struct {
	client    client.Client
	apiReader client.Reader
	namespace string

	mu      sync.Mutex
	lastErr error
}

func (r *configReconciler) Reconcile(ctx context.Context, req reconcile.Request) (_ ctrl.Result, err error) {
	if req.Namespace != r.namespace {
		return ctrl.Result{}, nil
	}
	defer func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lastErr = err
	}()
	var w testtypes.Widget
	if err := r.client.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Secrets are read directly, as operators do when they may not list every secret.
	secret := &corev1.Secret{}
	secretErr := r.apiReader.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name + "-credentials"}, secret)
	if client.IgnoreNotFound(secretErr) != nil {
		return ctrl.Result{}, secretErr
	}
	cm := &corev1.ConfigMap{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name + "-config"}, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"}}
		err = r.client.Create(ctx, cm)
		if apierrors.IsAlreadyExists(err) {
			err = nil // the cache had not seen it yet, as after an API server restart
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if w.Status.Phase != "Configured" {
		before := w.DeepCopy()
		w.Status.Phase = "Configured"
		return ctrl.Result{}, r.client.Status().Patch(ctx, &w, client.MergeFrom(before))
	}
	return ctrl.Result{}, nil
}

func (r *configReconciler) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// runAs starts configReconciler in a manager that acts as u, with a cache of the given
// namespaces (or of all), and creates a Widget for it in ns.
func runAs(t *testing.T, u *User, ns string, cached ...string) (*configReconciler, *testtypes.Widget) {
	t.Helper()
	g := NewWithT(t)
	mgr := u.NewManager(t, ctrl.Options{}, cached...)
	r := &configReconciler{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), namespace: ns}
	g.Expect(ctrl.NewControllerManagedBy(mgr).For(&testtypes.Widget{}).Named("config").Complete(r)).To(Succeed())
	StartManager(t, mgr)
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	g.Expect(env.Client().Create(t.Context(), w)).To(Succeed())
	return r, w
}

func TestAControllerWorksAsAUserWithTheRolesItsMarkersGenerate(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	u := env.NewUser(t, "operator", RoleFiles{roleFile}, RoleNamespace(ns))

	r, w := runAs(t, u, ns)

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Status.Phase).To(Equal("Configured"))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(r.err()).NotTo(HaveOccurred())
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, &corev1.ConfigMap{})).To(Succeed())

	// The user has these permissions and no others.
	g.Expect(u.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, &corev1.Secret{})).To(Satisfy(apierrors.IsNotFound),
		"the Role grants get on secrets in the test's namespace")
	err := u.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: "any"}, &corev1.Secret{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the Role grants nothing in other namespaces: %v", err)
	err = u.Client().Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w-config"}})
	g.Expect(err).To(MatchError(`configmaps "w-config" is forbidden: User "` + u.Name() +
		`" cannot delete resource "configmaps" in API group "" in the namespace "` + ns + `"`))
}

func TestAUserWithRolesInOneNamespaceRunsAControllerWithACacheOfThatNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	roles, err := readRoles(roleFile)
	g.Expect(err).NotTo(HaveOccurred())
	// Everything the controller may do, granted in its namespace only: it may not list or watch
	// anything cluster-wide, so a cache of every namespace could never sync.
	var rules []rbacv1.PolicyRule
	for _, r := range roles {
		switch r := r.(type) {
		case *rbacv1.ClusterRole:
			rules = append(rules, r.Rules...)
		case *rbacv1.Role:
			rules = append(rules, r.Rules...)
		}
	}
	u := env.NewUser(t, "operator", Roles{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "manager-role"}, Rules: rules}}, RoleNamespace(ns))
	err = u.Client().List(ctx, &testtypes.WidgetList{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the user cannot list Widgets cluster-wide: %v", err)

	r, w := runAs(t, u, ns, ns)

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
		g.Expect(w.Status.Phase).To(Equal("Configured"))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(r.err()).NotTo(HaveOccurred())
}

func TestAControllerWithAVerbMissingFromItsRoleGetsForbidden(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	roles, err := readRoles(roleFile)
	g.Expect(err).NotTo(HaveOccurred())
	manager := roles[0].(*rbacv1.ClusterRole)
	g.Expect(manager.Rules[0].Resources).To(Equal([]string{"configmaps"}))
	manager.Rules[0].Verbs = slices.DeleteFunc(manager.Rules[0].Verbs, func(v string) bool { return v == "create" })
	u := env.NewUser(t, "operator", Roles(roles), RoleNamespace(ns))

	r, w := runAs(t, u, ns)

	g.Eventually(r.err).WithTimeout(30 * time.Second).Should(MatchError(`configmaps is forbidden: User "` + u.Name() +
		`" cannot create resource "configmaps" in API group "" in the namespace "` + ns + `"`))
	g.Expect(apierrors.IsForbidden(r.err())).To(BeTrue())
	g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
	g.Expect(w.Status.Phase).To(BeEmpty())
}

func TestAUserWithoutRolesHasNoPermissions(t *testing.T) {
	g := NewWithT(t)
	u := env.NewUser(t, "nobody")

	err := u.Client().List(t.Context(), &corev1.ConfigMapList{})

	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(u.Name()).To(MatchRegexp(`^nobody-[a-z0-9]{5}$`))
}

func TestUsersAreCleanedUpWhenTheTestEnds(t *testing.T) {
	g := NewWithT(t)
	var name string
	t.Run("user", func(t *testing.T) {
		name = env.NewUser(t, "operator", RoleFiles{roleFile}, RoleNamespace(env.Namespace(t))).Name()
		var bindings rbacv1.ClusterRoleBindingList
		g.Expect(env.Client().List(t.Context(), &bindings, client.MatchingLabels{"tenon.dev/test-user": name})).To(Succeed())
		g.Expect(bindings.Items).To(HaveLen(1))
	})

	var roles rbacv1.ClusterRoleList
	g.Expect(env.Client().List(t.Context(), &roles, client.MatchingLabels{"tenon.dev/test-user": name})).To(Succeed())
	g.Expect(roles.Items).To(BeEmpty())
	var bindings rbacv1.ClusterRoleBindingList
	g.Expect(env.Client().List(t.Context(), &bindings, client.MatchingLabels{"tenon.dev/test-user": name})).To(Succeed())
	g.Expect(bindings.Items).To(BeEmpty())
}

func TestReadRoles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name  string
		path  string
		roles []string
		err   string
	}{
		{"a ClusterRole and a Role", roleFile, []string{"ClusterRole /manager-role", "Role system/manager-role"}, ""},
		{"empty documents are skipped", write("empty.yaml", "---\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n---\n"),
			[]string{"Role /r"}, ""},
		{"another kind is an error", write("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n"), nil,
			"document 0 is a v1 ServiceAccount, not an rbac.authorization.k8s.io/v1 ClusterRole or Role"},
		{"a missing file is an error", filepath.Join(dir, "missing.yaml"), nil, "failed to read roles: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			roles, err := readRoles(tt.path)
			if tt.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var got []string
			for _, r := range roles {
				kind := "ClusterRole"
				if _, ok := r.(*rbacv1.Role); ok {
					kind = "Role"
				}
				got = append(got, kind+" "+client.ObjectKeyFromObject(r).String())
			}
			g.Expect(got).To(Equal(tt.roles))
		})
	}
}

func TestARoleNeedsANamespace(t *testing.T) {
	g := NewWithT(t)
	u := &User{name: "u"}

	_, _, err := u.grant(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, "")

	g.Expect(err).To(MatchError("role r names no namespace: give it one, or use RoleNamespace"))
}
