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
	"fmt"
	"io"
)

// The directory build-envtest installs into, without building anything: what
// `build-envtest -dir /opt/envtest -print-dir` prints, for a Makefile that sets KUBEBUILDER_ASSETS.
func Example() {
	dir, err := run(context.Background(), options{version: defaultVersion, dir: "/opt/envtest", printDir: true}, io.Discard)
	fmt.Println(dir, err)
	// Output: /opt/envtest <nil>
}

// A version it cannot build, or a binary it does not know, is an error that says so, before
// anything is built.
func Example_badInput() {
	_, err := run(context.Background(), options{version: "1.37", printDir: true}, io.Discard)
	fmt.Println(err)
	_, err = run(context.Background(), options{version: defaultVersion, dir: "/opt/envtest", binaries: "etcd,kube-scheduler"}, io.Discard)
	fmt.Println(err)
	// Output:
	// -version "1.37": want a Kubernetes release such as 1.37.2
	// -binaries "etcd,kube-scheduler": each name must be one of etcd, kube-apiserver, kube-controller-manager, kubectl
}
