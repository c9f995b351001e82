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

package patch_test

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// dryRunApplies returns a client that sends every apply request through c as a dry run, in
// either form the Applier sends one (an apply configuration, or a patch of the apply type for a
// typed object), and calls seen with the request's body and the answer, as JSON with its
// apiVersion and kind, after each (the answer is what the object held when the request fails).
func dryRunApplies(c client.WithWatch, seen func(request, answer []byte)) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			request, _ := json.Marshal(obj)
			err := cl.Apply(ctx, obj, append(opts, client.DryRunAll)...)
			answer, _ := json.Marshal(obj)
			seen(request, answer)
			return err
		},
		SubResourceApply: func(ctx context.Context, cl client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			request, _ := json.Marshal(obj)
			err := cl.SubResource(sub).Apply(ctx, obj, append(opts, client.DryRunAll)...)
			answer, _ := json.Marshal(obj)
			seen(request, answer)
			return err
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if p.Type() != types.ApplyPatchType {
				return cl.Patch(ctx, obj, p, opts...)
			}
			return dryRunTyped(cl.Scheme(), obj, p, seen, func(u *unstructured.Unstructured) error {
				return cl.Patch(ctx, u, p, append(opts, client.DryRunAll)...)
			})
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if p.Type() != types.ApplyPatchType {
				return cl.SubResource(sub).Patch(ctx, obj, p, opts...)
			}
			return dryRunTyped(cl.Scheme(), obj, p, seen, func(u *unstructured.Unstructured) error {
				return cl.SubResource(sub).Patch(ctx, u, p, append(opts, client.DryRunAll)...)
			})
		},
	})
}

// dryRunTyped sends p, an apply patch of the typed object obj, with send, into an unstructured
// object of obj's kind and name, so that seen gets the answer as the API server wrote it (a
// typed object's JSON would hold its zero values too), then reads the answer into obj.
func dryRunTyped(scheme *runtime.Scheme, obj client.Object, p client.Patch, seen func(request, answer []byte), send func(*unstructured.Unstructured) error) error {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	request, _ := p.Data(u)
	err = send(u)
	answer, _ := u.MarshalJSON()
	seen(request, answer)
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

// isApply reports whether p is a patch of the apply type: a server-side apply of a typed object.
func isApply(p client.Patch) bool {
	return p.Type() == types.ApplyPatchType
}
