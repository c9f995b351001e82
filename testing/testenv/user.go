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
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// userOptions says which permissions [Environment.NewUser] grants. The zero value grants none
// beyond what every authenticated user has (discovery, access reviews of oneself).
type userOptions struct {
	roleFiles     []string
	roles         []client.Object
	roleNamespace string
}

// UserOption says which permissions [Environment.NewUser] grants: [RoleFiles], [Roles] and
// [RoleNamespace].
type UserOption interface {
	applyToUser(*userOptions)
}

// RoleFiles grants the ClusterRoles and Roles of these YAML files, such as the
// config/rbac/role.yaml that controller-gen generates from an operator's RBAC markers. Several
// documents per file are allowed; any kind other than ClusterRole and Role is an error.
type RoleFiles []string

func (f RoleFiles) applyToUser(o *userOptions) { o.roleFiles = append(o.roleFiles, f...) }

// Roles grants these ClusterRoles and Roles (*rbacv1.ClusterRole, *rbacv1.Role), in addition to
// those of [RoleFiles].
type Roles []client.Object

func (r Roles) applyToUser(o *userOptions) { o.roles = append(o.roles, r...) }

// RoleNamespace creates every Role in this namespace, whatever namespace its manifest names: a
// test's namespace instead of the operator's. Without it, each Role needs a namespace of its
// own, which must exist.
type RoleNamespace string

func (n RoleNamespace) applyToUser(o *userOptions) { o.roleNamespace = string(n) }

var (
	_ UserOption = RoleFiles(nil)
	_ UserOption = Roles(nil)
	_ UserOption = RoleNamespace("")
)

// User is a user of the environment that holds exactly the permissions it was created with.
type User struct {
	env    *Environment
	name   string
	config *rest.Config
	client client.Client
}

// Name returns the user's name, as RBAC denials name it: the name given to NewUser with a
// random suffix, so that tests never share a user.
func (u *User) Name() string { return u.name }

// Config returns the user's REST configuration. Each call returns a copy that the caller may
// modify.
func (u *User) Config() *rest.Config { return rest.CopyConfig(u.config) }

// Client returns an uncached client that acts as the user, with the environment's scheme.
func (u *User) Client() client.Client { return u.client }

// NewManager is [Environment.NewManager] for a manager that acts as the user, so that its
// controllers run with the user's permissions and no more. A user whose Roles grant list and
// watch only in some namespaces needs a manager scoped to them: a cache of every namespace
// cannot start without cluster-wide list and watch permissions.
func (u *User) NewManager(t TB, opts manager.Options, namespaces ...string) manager.Manager {
	t.Helper()
	return u.env.newManager(t, u.Config(), opts, namespaces)
}

// addUserMu serializes envtest's AddUser, which is not documented as safe for concurrent use.
var addUserMu sync.Mutex

// NewUser creates a user that has only the permissions of the given roles, and returns it:
// run a manager as that user, and its controllers have exactly the permissions their RBAC
// markers generate. A verb the markers miss fails with the Forbidden error a real cluster
// returns, instead of passing as it does for envtest's administrator.
//
//	u := env.NewUser(t, "operator", testenv.RoleFiles{"../../config/rbac/role.yaml"}, testenv.RoleNamespace(ns))
//	mgr := u.NewManager(t, ctrl.Options{})
//
// The user authenticates with a client certificate, and belongs to no group but
// system:authenticated. Each ClusterRole and Role is created under a name of the user's (the
// user's name, a colon, the original name) and bound to the user alone, by a ClusterRoleBinding
// or a RoleBinding in the Role's namespace. NewUser returns once the API server's authorizer
// grants the user each role's first rule, and deletes the roles and bindings when the test
// ends. It fails t when a file cannot be read or holds anything but ClusterRoles and Roles.
//
// A ClusterRole with an aggregationRule gets no rules: the controller that aggregates them does
// not run in the environment.
func (e *Environment) NewUser(t TB, name string, opts ...UserOption) *User {
	t.Helper()
	var o userOptions
	for _, opt := range opts {
		opt.applyToUser(&o)
	}
	roles := slices.Clone(o.roles)
	for _, path := range o.roleFiles {
		fromFile, err := readRoles(path)
		if err != nil {
			t.Fatalf("testenv: %v", err)
			return nil
		}
		roles = append(roles, fromFile...)
	}

	u := &User{env: e, name: name + "-" + utilrand.String(5)}
	addUserMu.Lock()
	authenticated, err := e.env.AddUser(envtest.User{Name: u.name}, &rest.Config{QPS: e.config.QPS, Burst: e.config.Burst})
	addUserMu.Unlock()
	if err != nil {
		t.Fatalf("testenv: failed to provision user %s: %v", u.name, err)
		return nil
	}
	u.config = rest.CopyConfig(authenticated.Config())
	if u.client, err = client.New(u.config, client.Options{Scheme: e.opts.Scheme}); err != nil {
		t.Fatalf("testenv: failed to create a client for user %s: %v", u.name, err)
		return nil
	}

	var created []client.Object
	t.Cleanup(func() {
		for _, obj := range slices.Backward(created) {
			if err := client.IgnoreNotFound(e.client.Delete(context.Background(), obj)); err != nil {
				t.Errorf("testenv: failed to delete %T %s: %v", obj, obj.GetName(), err)
			}
		}
	})
	ctx := t.Context()
	for _, role := range roles {
		objs, probe, err := u.grant(role, o.roleNamespace)
		if err != nil {
			t.Fatalf("testenv: failed to grant user %s a role: %v", u.name, err)
			return nil
		}
		for _, obj := range objs {
			if err := e.client.Create(ctx, obj); err != nil {
				t.Fatalf("testenv: failed to grant user %s a role: failed to create %T %s: %v", u.name, obj, obj.GetName(), err)
				return nil
			}
			created = append(created, obj)
		}
		if probe != nil {
			if err := u.waitUntilAllowed(ctx, probe); err != nil {
				t.Fatalf("testenv: failed to grant user %s a role: %v", u.name, err)
				return nil
			}
		}
	}
	return u
}

// grant returns the role as the user's copy, its binding, and an access review of the role's
// first rule that passes once the API server applies them.
func (u *User) grant(role client.Object, namespace string) ([]client.Object, *authorizationv1.SelfSubjectAccessReviewSpec, error) {
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u.name}}
	name := u.name + ":" + role.GetName()
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{"tenon.dev/test-user": u.name}}
	switch r := role.(type) {
	case *rbacv1.ClusterRole:
		copied := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: r.Rules, AggregationRule: r.AggregationRule}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
		return []client.Object{copied, binding}, probeFor(r.Rules, ""), nil
	case *rbacv1.Role:
		if namespace == "" {
			namespace = r.Namespace
		}
		if namespace == "" {
			return nil, nil, fmt.Errorf("role %s names no namespace: give it one, or use RoleNamespace", r.Name)
		}
		meta.Namespace = namespace
		copied := &rbacv1.Role{ObjectMeta: meta, Rules: r.Rules}
		binding := &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
		return []client.Object{copied, binding}, probeFor(r.Rules, namespace), nil
	}
	return nil, nil, fmt.Errorf("%T %s is not a ClusterRole or Role", role, role.GetName())
}

// probeFor returns an access review of the first verb of the first rule, or nil for no rules.
func probeFor(rules []rbacv1.PolicyRule, namespace string) *authorizationv1.SelfSubjectAccessReviewSpec {
	for _, r := range rules {
		if len(r.Verbs) == 0 {
			continue
		}
		if len(r.NonResourceURLs) > 0 {
			return &authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{
				Path: r.NonResourceURLs[0], Verb: r.Verbs[0],
			}}
		}
		if len(r.Resources) == 0 || len(r.APIGroups) == 0 {
			continue
		}
		attrs := &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: r.Verbs[0], Group: r.APIGroups[0]}
		attrs.Resource, attrs.Subresource, _ = strings.Cut(r.Resources[0], "/")
		if len(r.ResourceNames) > 0 {
			attrs.Name = r.ResourceNames[0]
		}
		return &authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}
	}
	return nil
}

// waitUntilAllowed asks the API server, as the user, whether it may do what spec describes,
// until it may: the authorizer sees new roles and bindings through an informer.
func (u *User) waitUntilAllowed(ctx context.Context, spec *authorizationv1.SelfSubjectAccessReviewSpec) error {
	var last string
	err := u.env.poll(ctx, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: *spec}
		if err := u.client.Create(ctx, review); err != nil {
			return false, err
		}
		last = review.Status.Reason
		return review.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("failed to see the role applied (access review %+v, last reason %q): %w", spec, last, err)
	}
	return nil
}

// readRoles reads the ClusterRoles and Roles of a YAML file.
func readRoles(path string) ([]client.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read roles: %w", err)
	}
	defer f.Close()
	decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var roles []client.Object
	for i := 0; ; i++ {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return roles, nil
			}
			return nil, fmt.Errorf("failed to read roles from %s: document %d: %w", path, i, err)
		}
		if len(u.Object) == 0 {
			continue // an empty document, as after a leading ---
		}
		var role client.Object
		switch gvk := u.GroupVersionKind(); {
		case gvk == rbacv1.SchemeGroupVersion.WithKind("ClusterRole"):
			role = &rbacv1.ClusterRole{}
		case gvk == rbacv1.SchemeGroupVersion.WithKind("Role"):
			role = &rbacv1.Role{}
		default:
			return nil, fmt.Errorf("failed to read roles from %s: document %d is a %s %s, not an rbac.authorization.k8s.io/v1 ClusterRole or Role",
				path, i, u.GetAPIVersion(), u.GetKind())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
			return nil, fmt.Errorf("failed to read roles from %s: document %d: %w", path, i, err)
		}
		roles = append(roles, role)
	}
}
