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

// Command build-envtest builds the control-plane programs that envtest runs (etcd,
// kube-apiserver, kube-controller-manager and kubectl) from their Go modules, with nothing but
// the go command and a Go module proxy. setup-envtest downloads etcd, kube-apiserver and kubectl
// from a site many CI systems cannot reach, and never provides kube-controller-manager, which
// the garbage collector of tenon's testing/testenv runs.
//
// From any directory, with the version of tenon the tests use:
//
//	go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest@<tenon version>
//
// or, in a module that requires tenon, as a tool that go.mod pins:
//
//	go get -tool github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest
//	go tool build-envtest
//
// It installs into setup-envtest's standard directory,
// $XDG_DATA_HOME/kubebuilder-envtest/k8s/<version>-<os>-<arch> (~/.local/share when
// XDG_DATA_HOME is unset), where testenv looks, and prints that directory. A binary already
// there is kept when it reports the right version (etcd: any version, since setup-envtest picks
// its own), so after `setup-envtest use` only kube-controller-manager is built. With -dir it
// installs into another directory, such as the one `setup-envtest use --bin-dir bin -p path`
// prints for a kubebuilder scaffold. A directory that setup-envtest made read-only is made
// writable for the install and read-only again afterwards.
//
// # How it builds
//
// k8s.io/kubernetes replaces its staging modules (k8s.io/api, k8s.io/apiserver, ...) with
// directories that are not part of the published module, so `go install
// k8s.io/kubernetes/cmd/kube-controller-manager@v1.37.2` is refused. build-envtest writes a
// temporary module instead: its go.mod requires k8s.io/kubernetes at the version, maps each
// staging module that k8s.io/kubernetes's own go.mod replaces (read with `go mod download -json`
// and `go mod edit -json`) to the published v0.<minor>.<patch>, and requires etcd's server at
// the version k8s.io/kubernetes requires; a three-line main package runs etcd. One `go build`
// then compiles every requested binary, with the version stamped as Kubernetes' own build does,
// and each is moved into place only once it is complete.
//
// A cold build takes about 10 minutes on two cores for all four, about 3 more for
// kube-controller-manager alone once kube-apiserver has been built; later builds reuse the Go
// build cache and take about a minute.
//
// Usage:
//
//	build-envtest [-version 1.37.2] [-dir DIR] [-binaries etcd,kube-apiserver,kube-controller-manager,kubectl] [-print-dir]
package main
