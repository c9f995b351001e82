# tenon — make targets. Run `make` or `make help` for the list.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

# Versions. The Kubernetes version is the one build-envtest builds and testenv looks for first
# (testenv.KubernetesVersion).
ENVTEST_K8S_VERSION    ?= 1.37.2
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
SETUP_ENVTEST_VERSION  ?= v0.25.1
GREMLINS_VERSION       ?= v0.6.0
# mermaid-cli and its puppeteer are pinned exactly in hack/mermaid/package.json and package-lock.json;
# this version names the directory in bin/ they are installed into.
MERMAID_CLI_VERSION    ?= 11.9.0

# ENVTEST_SOURCE=build (default) builds etcd, kube-apiserver, kube-controller-manager and kubectl
# from Go modules, which needs only a Go module proxy. ENVTEST_SOURCE=download uses setup-envtest
# to download etcd, kube-apiserver and kubectl and builds only kube-controller-manager
# (setup-envtest does not ship it; the garbage collector in testing/testenv needs it). Both build
# with testing/testenv/cmd/build-envtest, the command tenon's users run.
ENVTEST_SOURCE ?= build
BUILD_ENVTEST  := go run ./testing/testenv/cmd/build-envtest -version $(ENVTEST_K8S_VERSION)

# Tools live in bin/ under versioned names, so changing a version above installs the new one.
LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT  ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
SETUP_ENVTEST  ?= $(LOCALBIN)/setup-envtest-$(SETUP_ENVTEST_VERSION)
GREMLINS       ?= $(LOCALBIN)/gremlins-$(GREMLINS_VERSION)
MERMAID_CLI    ?= $(LOCALBIN)/mermaid-cli-$(MERMAID_CLI_VERSION)
# CHROMIUM is the browser mermaid-cli renders in: a chromium on PATH, or else Debian's package
# unpacked into bin/chromium by hack/mermaid/chromium.sh.
CHROMIUM_DIR   ?= $(LOCALBIN)/chromium

# Go modules in this repository, other than the library itself, that have tests or must build.
# An example's lab (examples/cluster-operator/lab) is a module nested in the example's directory:
# the demo and the reliability scenarios, which the example's own module leaves out.
EXAMPLE_MODULES := $(wildcard examples/*/go.mod) $(wildcard examples/*/lab/go.mod)
TOOL_MODULES    := hack/docs/go.mod hack/realkinds/go.mod $(wildcard hack/bench/go.mod)

GO_TEST_FLAGS ?= -race -count=1 -timeout 30m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
		/^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: controller-gen ## Generate deepcopy code (zz_generated.deepcopy.go).
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./internal/testtypes/...
	$(MAKE) -C examples/cluster-operator generate LOCALBIN=$(LOCALBIN)
	$(MAKE) -C examples/getting-started generate LOCALBIN=$(LOCALBIN)

.PHONY: manifests
manifests: controller-gen ## Generate CRD manifests for the test types.
	$(CONTROLLER_GEN) crd paths=./internal/testtypes/... output:crd:artifacts:config=internal/testtypes/crd
	$(MAKE) -C examples/cluster-operator manifests LOCALBIN=$(LOCALBIN)
	$(MAKE) -C examples/getting-started manifests LOCALBIN=$(LOCALBIN)

.PHONY: fmt
fmt: ## Run gofmt on every module.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet on the library.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (config: .golangci.yml) on the library, the examples and hack/.
	$(GOLANGCI_LINT) run ./...
	@for m in $(EXAMPLE_MODULES) $(TOOL_MODULES); do echo "golangci-lint in $$(dirname $$m)"; \
		(cd $$(dirname $$m) && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...) || exit 1; done

.PHONY: verify
verify: generate manifests realkinds ## Regenerate, tidy and fail if anything changed.
	go mod tidy
	@for m in $(EXAMPLE_MODULES) $(TOOL_MODULES); do (cd $$(dirname $$m) && go mod tidy); done
	@cd hack/docs && go run . -root ../.. -check
	@cd hack/docs && go run . -root ../.. -compile
	@cd hack/docs && go run . -root ../.. -doclinks
	@cd hack/docs && go run ./apilist -root ../.. -out ../../api/exported.txt -check
	@$(MAKE) --no-print-directory mermaid-check
	@if [ -n "$$(git status --porcelain -- . ':!bin')" ]; then \
		echo "verify: generated files or go.mod/go.sum are out of date; run make generate manifests and go mod tidy:"; \
		git status --porcelain -- . ':!bin'; git --no-pager diff --stat; exit 1; \
	fi
	@echo "verify: generated files and go.mod files are up to date"

.PHONY: api
api: ## Write the listing of the exported API (api/exported.txt), which make verify compares.
	@cd hack/docs && go run ./apilist -root ../.. -out ../../api/exported.txt

.PHONY: mermaid-check
mermaid-check: mermaid-cli ## Render every Mermaid diagram of docs/, README.md and examples/*/README.md; fail naming the block that does not.
	@chromium=$$(hack/mermaid/chromium.sh $(CHROMIUM_DIR)) && \
		node hack/mermaid/check.mjs $(MERMAID_CLI)/node_modules "$$chromium" $(CURDIR)

.PHONY: docs
docs: ## Rewrite the code snippets in the Markdown guides from their Go sources.
	@cd hack/docs && go run . -root ../..

.PHONY: docs-compile
docs-compile: ## Compile every Go block of the guides outside tenon, with its exported API only (hack/docs/compile.go).
	@cd hack/docs && go run . -root ../.. -compile

##@ Test

.PHONY: envtest
envtest: ## Make the envtest binaries available (ENVTEST_SOURCE=build|download).
ifeq ($(ENVTEST_SOURCE),download)
envtest: setup-envtest
	@dir=$$($(SETUP_ENVTEST) use $(ENVTEST_K8S_VERSION) -p path) && \
		echo "envtest: etcd, kube-apiserver and kubectl from setup-envtest in $$dir" && \
		$(BUILD_ENVTEST) -dir "$$dir" >/dev/null
else
	@$(BUILD_ENVTEST) >/dev/null
endif

# go-get-check is what a user who only runs `go get` gets: a scratch module outside the
# repository requires tenon (replaced by this checkout), builds kube-controller-manager with the
# documented `go run .../testing/testenv/cmd/build-envtest` next to the etcd and kube-apiserver
# of make envtest, and passes a test of testenv's garbage collector and webhooks (about a minute
# with a warm Go build cache).
.PHONY: go-get-check
go-get-check: envtest ## From a scratch module outside the repository: go get tenon, build the garbage collector's binary, test GC and webhooks.
	@hack/gogetcheck/run.sh $(ENVTEST_K8S_VERSION)

# copy-check is what a user who copies the example operator out of the repository gets: its
# directory without the lab (the nested module of the demo and the reliability scenarios), in a
# temporary directory, with go.mod pointed at this checkout, must tidy, build, vet and pass its
# tests (about two minutes with a warm Go build cache).
.PHONY: copy-check
copy-check: envtest ## Copy examples/cluster-operator (without its lab) out of the repository; tidy, build, vet and test it there.
	@hack/copycheck/run.sh

.PHONY: chaos
chaos: ## Run the example operator's reliability scenarios (about 30 minutes on two cores) and regenerate docs/reliability.md.
	$(MAKE) -C examples/cluster-operator/lab chaos

.PHONY: soak
soak: ## Churn Clusters against the example operator for 30 minutes (SOAK=30m); fails if its memory or goroutines keep growing.
	$(MAKE) -C examples/cluster-operator/lab soak

.PHONY: chaos-smoke
chaos-smoke: ## Run a small version of the reliability scenarios, as CI does (a few minutes).
	$(MAKE) -C examples/cluster-operator/lab chaos-smoke

.PHONY: demo
demo: ## Run the example operator live on an embedded control plane (examples/cluster-operator/lab).
	$(MAKE) -C examples/cluster-operator/lab demo

# fuzz-patch runs patch.Helper's differential test (patch/differential_test.go) long: PATCH_CASES
# random cases from a fresh seed, which it prints; TENON_PATCH_SEED=<seed> make fuzz-patch
# replays a run.
PATCH_CASES ?= 20000

.PHONY: fuzz-patch
fuzz-patch: envtest ## Check patch.Helper against its model with 20,000 random cases (PATCH_CASES) from a fresh, printed seed.
	@seed=$${TENON_PATCH_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
		echo "fuzz-patch: TENON_PATCH_SEED=$$seed TENON_PATCH_CASES=$(PATCH_CASES)"; \
		TENON_PATCH_SEED=$$seed TENON_PATCH_CASES=$(PATCH_CASES) \
		go test $(GO_TEST_FLAGS) -timeout 3h -run '^TestDifferentialPatchAgreesWithTheModel$$' ./patch/

# crash-external runs the external package's crash test (external/crash_test.go) long:
# EXTERNAL_CASES random cases from a fresh seed, which it prints with what it counted (kills,
# lost responses, duplicates, leaks, creates after deletion); TENON_EXTERNAL_SEED=<seed> make
# crash-external replays a run. Without -race, so that thousands of cases take minutes; make test
# runs the test with it.
EXTERNAL_CASES ?= 3000

.PHONY: crash-external
crash-external: envtest ## Kill the external package's example reconciler at every step in 3,000 random cases (EXTERNAL_CASES, about 20 minutes on two cores) from a fresh, printed seed.
	@seed=$${TENON_EXTERNAL_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
		echo "crash-external: TENON_EXTERNAL_SEED=$$seed TENON_EXTERNAL_CASES=$(EXTERNAL_CASES)"; \
		TENON_EXTERNAL_SEED=$$seed TENON_EXTERNAL_CASES=$(EXTERNAL_CASES) \
		go test -count=1 -timeout 3h -v -run '^TestCrashesAtEveryStepLeaveExactlyOneInstanceWhileTheObjectLivesAndNoneAfter$$' ./external/ | grep -E '^(---|ok|FAIL|PASS)|crash test|case [0-9]+:|replay'

# fuzz-real runs the randomized tests of real kinds long, each from the same fresh seed, which it
# prints: the Helper's differential test (patch/realkinds_test.go), the Applier's dry-run oracle
# (patch/realkinds_oracle_test.go), both for REAL_CASES cases, and the race of one controller's
# workers (patch/apply_same_manager_test.go) for a quarter of that. TENON_REAL_SEED=<seed> make
# fuzz-real replays a run. About 35 minutes on two cores.
REAL_CASES ?= 20000

.PHONY: fuzz-real
fuzz-real: envtest ## Check patch on real kinds' schemas (Helper model, Applier oracle, workers' races) for 20,000 cases each (REAL_CASES), from a fresh, printed seed.
	@seed=$${TENON_REAL_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
		echo "fuzz-real: TENON_REAL_SEED=$$seed REAL_CASES=$(REAL_CASES)"; \
		TENON_REAL_SEED=$$seed TENON_REAL_CASES=$(REAL_CASES) \
		go test -count=1 -timeout 3h -run '^TestRealKindsPatchAgreesWithTheModel$$' ./patch/ && \
		TENON_APPLY_SEED=$$seed TENON_APPLY_CASES=$(REAL_CASES) \
		go test -count=1 -timeout 3h -run '^TestRealKindsApplySkipsOnlyWhatTheAPIServerConfirms$$' ./patch/ && \
		TENON_RACE_SEED=$$seed TENON_RACE_CASES=$$(( $(REAL_CASES) / 4 )) \
		go test -count=1 -timeout 3h -run '^TestOurOwnWorkersNeverTakeAChildAnotherOwnerControls$$' ./patch/

# mutate runs gremlins on each package of MUTATE_PACKAGES, one after the other (each mutant runs
# the package's tests, envtest included, so this takes hours on two cores; not CI), and writes the
# table of docs/testing.md ("How tenon itself is tested") from the reports, with the date and the
# commit, and the equivalent mutants of hack/docs/mutate/equivalent.txt with their reasons. The
# mutants gremlins reports as not covered (a switch's case expressions have no block in Go's
# coverage profile) are then run the same way, with go test -overlay.
# MUTATE_<package>_FLAGS are each package's flags: a timeout coefficient suited to its tests
# (gremlins multiplies the time of the package's coverage run; where the tests take a second,
# compiling each mutant takes longer than the tests, so the coefficient is larger; gremlins
# mutates a directory's subpackages too, so conditions leaves out conditions/observe). Of patch, the merge, diff and
# JSON Patch engine (patch/internal/...) is mutated, with its own unit and fuzz tests.
# MUTATE_PACKAGES=conditions make mutate runs one.
MUTATE_PACKAGES ?= conditions conditions/observe requeue ownership fencing finalizer patch/internal/threeway patch/internal/jsonvalue internal/conditionrules
MUTATE_OUT      ?= $(or $(TMPDIR),/tmp)/tenon-mutate
MUTATE_conditions_FLAGS         ?= --timeout-coefficient 4 -E '(^|/)observe/'
MUTATE_conditions/observe_FLAGS ?= --timeout-coefficient 20
MUTATE_requeue_FLAGS            ?= --timeout-coefficient 4
MUTATE_ownership_FLAGS          ?= --timeout-coefficient 4
MUTATE_fencing_FLAGS            ?= --timeout-coefficient 4
MUTATE_finalizer_FLAGS          ?= --timeout-coefficient 4
MUTATE_patch/internal/threeway_FLAGS  ?= --timeout-coefficient 20
MUTATE_patch/internal/jsonvalue_FLAGS ?= --timeout-coefficient 20
MUTATE_internal/conditionrules_FLAGS  ?= --timeout-coefficient 20

.PHONY: mutate
mutate: envtest gremlins ## Mutation-test the library's packages (hours; not CI) and write the table of docs/testing.md.
	@# Only this run's reports are read: a report left by an earlier run would put old results
	@# under this commit (the rows of packages not run are kept in docs/testing.md instead).
	@rm -rf $(MUTATE_OUT) && mkdir -p $(MUTATE_OUT)
	@$(foreach p,$(MUTATE_PACKAGES),echo "mutate: $(p)" && \
		GOFLAGS=-count=1 $(GREMLINS) unleash --workers 2 $(MUTATE_$(p)_FLAGS) -o $(abspath $(MUTATE_OUT))/$(subst /,+,$(p)).json ./$(p) && \
		(cd hack/docs && go run ./mutate -run-uncovered $(abspath $(MUTATE_OUT))/$(subst /,+,$(p)).json -root $(CURDIR) -pkg $(p)) && ) true
	@cd hack/docs && go run ./mutate -in $(MUTATE_OUT) -doc ../../docs/testing.md -equivalent mutate/equivalent.txt \
		-commit $$(git rev-parse --short HEAD) -date $$(date -u +%F)

.PHONY: realkinds
realkinds: ## Copy the CRDs the tests of real kinds install (internal/realkinds/crds) from their projects' Go modules.
	@cd hack/realkinds && go run .

.PHONY: test
test: envtest ## Run every test (unit and envtest) of the library, the example operator and the benchmark harness, with -race.
	go test $(GO_TEST_FLAGS) ./...
	@# go test shows a passing package's output only with -v: print the size of the kstatus matrix.
	@go test -count=1 -run '^TestComputeAgreesWithKstatusOnEveryCombination$$' -v ./conditions/ | grep '^kstatus matrix:'
	@for m in $(EXAMPLE_MODULES) hack/bench/go.mod hack/docs/go.mod; do echo "go test $(GO_TEST_FLAGS) ./... in $$(dirname $$m)"; \
		(cd $$(dirname $$m) && go test $(GO_TEST_FLAGS) ./...); done

##@ Tools

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_GEN_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: setup-envtest
setup-envtest: $(SETUP_ENVTEST) ## Install setup-envtest into bin/ (only for ENVTEST_SOURCE=download).
$(SETUP_ENVTEST): $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

.PHONY: gremlins
gremlins: $(GREMLINS) ## Install gremlins (mutation testing) into bin/.
$(GREMLINS): $(LOCALBIN)
	$(call go-install-tool,$(GREMLINS),github.com/go-gremlins/gremlins/cmd/gremlins,$(GREMLINS_VERSION))

.PHONY: mermaid-cli
mermaid-cli: $(MERMAID_CLI)/node_modules/.package-lock.json ## Install mermaid-cli (hack/mermaid/package-lock.json) into bin/.
$(MERMAID_CLI)/node_modules/.package-lock.json: hack/mermaid/package.json hack/mermaid/package-lock.json | $(LOCALBIN)
	@echo "Installing @mermaid-js/mermaid-cli@$(MERMAID_CLI_VERSION) into $(MERMAID_CLI)"
	@mkdir -p $(MERMAID_CLI) && cp hack/mermaid/package.json hack/mermaid/package-lock.json $(MERMAID_CLI)/
	@# No browser download: the check uses Debian's chromium (CHROMIUM_DIR).
	@cd $(MERMAID_CLI) && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

# go-install-tool installs package $(2) at version $(3) as $(1).
define go-install-tool
@echo "Installing $(2)@$(3)"
@tmp=$$(mktemp -d) && GOBIN="$$tmp" go install "$(2)@$(3)" && mv "$$tmp/$$(basename "$(2)")" "$(1)" && rm -rf "$$tmp"
endef

##@ Benchmarks

# hack/bench is its own module (it depends on Flux and cluster-api, which the library must not).
# `make bench` measures tenon against the other libraries and the floor and regenerates
# docs/benchmarks.md, its charts and docs/benchmarks/results.json; it takes about 40 minutes on
# two cores. `make bench-smoke` is the small version for CI: it fails when an invariant tenon
# claims does not hold.
BENCH_DIR         := hack/bench
BENCH_DOCS        := $(CURDIR)/docs/benchmarks
BENCH_OBJECTS     ?= 1000
BENCH_RUNS        ?= 5
BENCH_RYW_RUNS    ?= 2
BENCH_MICRO_COUNT ?= 10
BENCH_SMOKE_OUT   ?= $(or $(TMPDIR),/tmp)/tenon-bench-smoke

.PHONY: bench
bench: envtest ## Run the benchmarks (about 40 minutes) and regenerate docs/benchmarks.md and docs/benchmarks/.
	@mkdir -p $(BENCH_DOCS)
	cd $(BENCH_DIR) && go test -run '^$$' -bench . -benchmem -benchtime 500ms -count $(BENCH_MICRO_COUNT) ./micro > $(BENCH_DOCS)/micro.txt
	cd $(BENCH_DIR) && for b in SetCondition Patch; do \
		go tool benchstat -col /lib -filter ".name:$$b" $(BENCH_DOCS)/micro.txt; done > $(BENCH_DOCS)/micro-benchstat.txt
	cd $(BENCH_DIR) && go run . -objects $(BENCH_OBJECTS) -runs $(BENCH_RUNS) -ryw-runs $(BENCH_RYW_RUNS) \
		-micro-raw $(BENCH_DOCS)/micro.txt -micro $(BENCH_DOCS)/micro-benchstat.txt -raw $(BENCH_DOCS)/results.json \
		-scale-results $(BENCH_DOCS)/scale.json -shards-results $(BENCH_DOCS)/shards.json \
		-charts $(BENCH_DOCS) -out $(CURDIR)/docs/benchmarks.md -command "make bench" -strict

# bench-scale measures the example operator at SCALE_CLUSTERS Clusters with its simulators acting at
# once, and at SCALE_WITHOUT again without its cache transforms, into docs/benchmarks/scale.json and
# scale.png; then it renders docs/benchmarks.md again from the other saved measurements of
# docs/benchmarks (results.json, micro.txt), which make bench wrote.
SCALE_CLUSTERS ?= 100,1000,10000
SCALE_WITHOUT  ?= 100,1000,10000

.PHONY: bench-scale
bench-scale: envtest ## Measure the example operator at 100, 1,000 and 10,000 Clusters (about an hour; not CI) and add it to docs/benchmarks.md.
	@mkdir -p $(BENCH_DOCS)
	cd $(BENCH_DIR) && go run . -scale $(SCALE_CLUSTERS) -scale-without-transforms $(SCALE_WITHOUT) \
		-scale-results $(BENCH_DOCS)/scale.json -charts $(BENCH_DOCS) -command "make bench-scale" -strict
	$(MAKE) bench-render

# bench-shards measures the example operator as rings of SHARDS shards on each number of Clusters
# in SHARDS_CLUSTERS (comma-separated; the saved runs of other sizes are kept), each shard running
# each number of concurrent reconciles in SHARDS_WORKERS, whose DNS calls take SHARDS_DNS_LATENCY,
# into docs/benchmarks/shards.json; then it renders docs/benchmarks.md again from the saved
# measurements of docs/benchmarks. SHARDS_CLUSTERS=2000 takes about 40 minutes.
SHARDS             ?= 1,2,4
SHARDS_CLUSTERS    ?= 300
SHARDS_WORKERS     ?= 8
SHARDS_DNS_LATENCY ?= 500ms

.PHONY: bench-shards
bench-shards: envtest ## Measure the example operator as rings of 1, 2 and 4 shards (about 10 minutes; not CI) and add it to docs/benchmarks.md.
	@mkdir -p $(BENCH_DOCS)
	cd $(BENCH_DIR) && go run . -shards $(SHARDS) -shards-clusters $(SHARDS_CLUSTERS) -shards-workers $(SHARDS_WORKERS) -shards-dns-latency $(SHARDS_DNS_LATENCY) \
		-shards-results $(BENCH_DOCS)/shards.json -command "make bench-shards" -strict
	$(MAKE) bench-render

.PHONY: bench-render
bench-render: ## Render docs/benchmarks.md again from the saved measurements of docs/benchmarks (no measuring).
	cd $(BENCH_DIR) && go run . -from $(BENCH_DOCS)/results.json -scale-results $(BENCH_DOCS)/scale.json \
		-shards-results $(BENCH_DOCS)/shards.json \
		-micro-raw $(BENCH_DOCS)/micro.txt -micro $(BENCH_DOCS)/micro-benchstat.txt \
		-charts $(BENCH_DOCS) -out $(CURDIR)/docs/benchmarks.md

.PHONY: bench-smoke
bench-smoke: envtest ## Run a small benchmark (N=100, one run; a few minutes) that fails when a tenon invariant does not hold.
	@mkdir -p $(BENCH_SMOKE_OUT)
	cd $(BENCH_DIR) && go test -run '^$$' -bench . -benchmem -benchtime 100x -count 1 ./micro > $(BENCH_SMOKE_OUT)/micro.txt
	cd $(BENCH_DIR) && go run . -objects 100 -runs 1 -hot 100 -ops 50 -timeout 2m \
		-micro-raw $(BENCH_SMOKE_OUT)/micro.txt -raw $(BENCH_SMOKE_OUT)/results.json -charts $(BENCH_SMOKE_OUT) \
		-out $(BENCH_SMOKE_OUT)/benchmarks.md -command "make bench-smoke" -strict
