#!/usr/bin/env bash
# run.sh checks that the example operator can be copied out of the repository: it copies
# examples/cluster-operator, without its lab (the nested module of the demo and the reliability
# scenarios, which a copy may delete) and without bin/, into a temporary directory outside the
# repository, and there runs go mod tidy, go build, go vet and the example's tests (its Ginkgo
# suite and e2e tests, on the envtest binaries of make envtest, found where tests find them).
#
# The copy builds against this checkout: go.mod's replace directive, which points at the
# repository's root (../..), is pointed at this checkout's absolute path instead: a user's copy
# deletes it and gets the release go.mod requires, but this check is of the example as this
# checkout has it, with the library as this checkout has it. Nothing is left behind.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
example=$repo/examples/cluster-operator
step() { printf 'copy-check: %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tenon-copy-check-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case "$tmp/" in "$repo"/*) echo "copy-check: $tmp is inside the repository; set TMPDIR elsewhere" >&2; exit 1 ;; esac
copy=$tmp/cluster-operator

step "copy examples/cluster-operator, without lab/ and bin/, to $copy"
mkdir -p "$copy"
(cd "$example" && git ls-files -z --cached --others --exclude-standard -- . ':!lab' ':!bin' | xargs -0 cp --parents -t "$copy")
[ ! -e "$copy/lab" ] || { echo "copy-check: the copy has a lab directory" >&2; exit 1; }

cd "$copy"
export GOFLAGS="${GOFLAGS:-} -mod=mod" GOWORK=off
step "go.mod: replace github.com/tenon-dev/tenon with this checkout ($repo)"
go mod edit -replace "github.com/tenon-dev/tenon=$repo"
step "go mod tidy"
go mod tidy
step "go build ./... && go vet ./..."
go build ./...
go vet ./...
step "go test ./... (the Ginkgo suite and the e2e tests, on envtest)"
if ! go test -count=1 ./... >"$tmp/test.log" 2>&1; then
	cat "$tmp/test.log"
	echo "copy-check: FAILED" >&2
	exit 1
fi
cat "$tmp/test.log"
step "passed"
