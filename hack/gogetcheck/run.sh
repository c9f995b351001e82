#!/usr/bin/env bash
# run.sh K8S_VERSION checks that a user who only runs `go get` gets all of tenon's test kit: in a
# scratch module outside the repository, it requires tenon (replaced by this checkout, as it is
# not released yet), builds kube-controller-manager with the documented command (go run
# .../testing/testenv/cmd/build-envtest) next to etcd, kube-apiserver and kubectl as
# setup-envtest would have put them there (a read-only directory), and runs a
# test that uses testenv's garbage collector, a defaulting and a validating webhook, and a
# conversion webhook (testdata/check_test.go, on the Disk fixture of testing/testenv).
#
# The etcd, kube-apiserver and kubectl it copies come from setup-envtest's standard directory,
# where `make envtest` put them. Nothing is left behind: the module and the binaries are in a
# temporary directory.
set -euo pipefail
version=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
step() { printf 'go-get-check: %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tenon-go-get-check-XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
case "$tmp/" in "$repo"/*) echo "go-get-check: $tmp is inside the repository; set TMPDIR elsewhere" >&2; exit 1 ;; esac
module=$tmp/module assets=$tmp/assets
mkdir -p "$module/testdata" "$assets"

step "a scratch module in $module"
cp "$repo/hack/gogetcheck/testdata/check_test.go" "$module/"
sed 's/^package testenv$/package check/' "$repo/testing/testenv/disk_test.go" > "$module/disk.go"
cp -R "$repo/testing/testenv/testdata/webhook" "$module/testdata/"
cd "$module"
export GOFLAGS="${GOFLAGS:-} -mod=mod" GOWORK=off
go mod init example.com/go-get-check >/dev/null 2>&1
go mod edit -replace "github.com/tenon-dev/tenon=$repo"
go get github.com/tenon-dev/tenon@v0.0.0-00010101000000-000000000000 2>"$tmp/get.log" || { cat "$tmp/get.log" >&2; exit 1; }
go mod tidy 2>"$tmp/tidy.log" || { cat "$tmp/tidy.log" >&2; exit 1; }
build_envtest() { go run github.com/tenon-dev/tenon/testing/testenv/cmd/build-envtest -version "$version" "$@"; }

step "etcd, kube-apiserver and kubectl as setup-envtest leaves them: read-only, in $assets"
std=$(build_envtest -print-dir)
for b in etcd kube-apiserver kubectl; do
	[ -x "$std/$b" ] || { echo "go-get-check: no $b in $std: run make envtest first" >&2; exit 1; }
	cp "$std/$b" "$assets/"
done
chmod 0555 "$assets"

step "go run .../testing/testenv/cmd/build-envtest -dir $assets: builds only kube-controller-manager"
build_envtest -dir "$assets" >/dev/null
[ -x "$assets/kube-controller-manager" ] || { echo "go-get-check: build-envtest installed no kube-controller-manager" >&2; exit 1; }

step "go test: testenv's garbage collector, webhooks and conversion, from the scratch module"
if ! KUBEBUILDER_ASSETS=$assets go test -count=1 -race -v ./... >"$tmp/test.log" 2>&1; then
	cat "$tmp/test.log"
	echo "go-get-check: FAILED" >&2
	exit 1
fi
grep -E '^(--- |ok)' "$tmp/test.log"
step "passed"
