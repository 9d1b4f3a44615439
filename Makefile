# graphcd — run `make help` for the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO       ?= go
BIN      := $(CURDIR)/bin
VERSION  ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X github.com/graphcd/graphcd/internal/version.Version=$(VERSION) \
            -X github.com/graphcd/graphcd/internal/version.Commit=$(COMMIT)
TEST_FLAGS ?=
# Build tags of the shipped binary (internal/testenv/graphcdbin.Tags says
# the same): leave out kustomize's Go plugin loader, which graphcd never
# uses and which makes the binary export every symbol.
GO_TAGS := kustomize_disable_go_plugin_support

# Tools are built from hack/tools, whose go.mod pins them apart from ours.
TOOLS_MOD := hack/tools/go.mod hack/tools/go.sum
CONTROLLER_GEN := $(BIN)/controller-gen
GQLGEN         := $(BIN)/gqlgen
GENQLIENT      := $(BIN)/genqlient
GOLANGCI_LINT  := $(BIN)/golangci-lint
KUSTOMIZE      := $(BIN)/kustomize
HELM           := $(BIN)/helm

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/graphcd.
	$(GO) build -tags '$(GO_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/graphcd ./cmd/graphcd

$(CONTROLLER_GEN): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen
$(GQLGEN): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ github.com/99designs/gqlgen
$(GENQLIENT): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ github.com/Khan/genqlient
$(GOLANGCI_LINT): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# The kustomize and helm CLIs, built from the same library versions as the
# product, are the peers the in-process renderers are checked and
# benchmarked against.
$(KUSTOMIZE): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ sigs.k8s.io/kustomize/kustomize/v5
$(HELM): $(TOOLS_MOD)
	cd hack/tools && $(GO) build -o $@ helm.sh/helm/v3/cmd/helm

.PHONY: tools
tools: $(CONTROLLER_GEN) $(GQLGEN) $(GENQLIENT) $(GOLANGCI_LINT) $(KUSTOMIZE) $(HELM) ## Build the pinned development tools into bin/.

.PHONY: cluster-bins
cluster-bins: ## Build etcd, kube-*, kubectl and kwok once per machine (cached in ~/.cache/graphcd).
	@bash hack/cluster-bins.sh >/dev/null

.PHONY: test-deps
test-deps: $(KUSTOMIZE) $(HELM) ## Install what the integration tests run besides the cluster binaries: CLIs, redis-server, git, chromium (and the console).
	@bash hack/ensure-packages.sh redis-server git chromium

.PHONY: generate
generate: $(CONTROLLER_GEN) $(GQLGEN) $(GENQLIENT) ## Regenerate deepcopy, CRD YAML, the GraphQL executor and the CLI's client.
	$(CONTROLLER_GEN) object paths=./api/... crd:crdVersions=v1,headerFile=config/crd/boilerplate.yaml.txt output:crd:artifacts:config=config/crd/bases
	cp config/crd/bases/*.yaml deploy/chart/graphcd/files/crds/
	$(GQLGEN) generate
	cd client && $(GENQLIENT) genqlient.yaml

# On a fresh machine the control plane takes ~25 min to build and the test
# dependencies as long to compile; the first `make test` does both at once,
# so that what one leaves of the two cores goes to the other. Later runs
# find the binaries cached and skip this.
.PHONY: test
test: test-deps ## Run every test (unit + integration against a real local cluster and Redis) with -race.
	@if ! bash hack/cluster-bins.sh --check; then \
		echo "make test: first run on this machine: building the control plane while compiling the tests' dependencies"; \
		bash hack/cluster-bins.sh >/dev/null & bins=$$!; \
		$(GO) build -race -tags integration ./... || { wait $$bins; exit 1; }; \
		wait $$bins; \
	fi
	PATH="$(BIN):$$PATH" $(GO) test -race -count=1 -tags integration -timeout 45m $(TEST_FLAGS) ./...

.PHONY: test-unit
test-unit: ## Run the unit tests only (no external processes).
	$(GO) test -race $(TEST_FLAGS) ./...

.PHONY: bench
bench: test-deps cluster-bins ## Run the benchmarks (figures go to docs/benchmarks.md).
	PATH="$(BIN):$$PATH" $(GO) test -tags integration -run '^$$' -bench . -benchmem -count 5 ./...
	cd bench/diffpeer && $(GO) test -run . -bench . -benchmem -count 5
	cd bench/appsetpeer && GOTOOLCHAIN=go1.27.3 $(GO) test -run . -bench . -benchmem -count 5

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 1m; FUZZ=regexp picks "package/Target"s).
	hack/fuzz.sh

# The soak of issue 29 (docs/reliability.md, "Soak"): 1,000 auto-synced
# apps, a push every 10 s, 500 GraphQL subscribers and a login every
# second for 30 minutes (GRAPHCD_SOAK=long: an hour) against one
# graphcd server; fails when a target is missed.
.PHONY: soak
soak: build cluster-bins ## Run the soak: 1,000 apps, 500 subscribers, 30 min (GRAPHCD_SOAK=long: 1 h); samples and pictures in bin/soak.
	$(GO) run ./hack/loadtest --soak --graphcd $(BIN)/graphcd --apps 1000 --subscribers 500 $(if $(filter long,$(GRAPHCD_SOAK)),--duration 1h --warmup 10m,--duration 30m --warmup 5m) --out $(BIN)/soak

# The scale runs of issue 30 (docs/scaling.md): graphcd's split roles as
# processes (2 API replicas, 2 controller shards with a standby each, 2
# repository servers, Redis) with SCALE_APPS auto-synced apps over
# SCALE_CLUSTERS destination clusters, each its own etcd and
# kube-apiserver; the busiest shard's leader is killed a third of the way,
# and after three pushes a third shard joins (--dynamic-shards).
SCALE_APPS ?= 10000
SCALE_CLUSTERS ?= 10
.PHONY: scale
scale: build cluster-bins ## Run the scale harness: SCALE_APPS (10,000) apps over SCALE_CLUSTERS (10) clusters through the split roles; tables on stdout, a row in bin/scale.csv.
	@bash hack/ensure-packages.sh redis-server git
	$(GO) run ./hack/loadtest --scale --graphcd $(BIN)/graphcd --apps $(SCALE_APPS) --clusters $(SCALE_CLUSTERS) --kill-shard --add-shard --steady 3m --timeout 2h --scale-csv $(BIN)/scale.csv

# Argo CD side by side (issue 30, docs/scaling.md): the same workload
# through graphcd's split roles (one of each) and through Argo CD's
# application controller and repository server (built from the Go module
# proxy by bench/argocd/build.sh), each on fresh clusters: 1,000 apps on
# one cluster, then 2,000 apps over four.
.PHONY: scale-argocd
scale-argocd: build cluster-bins ## Run graphcd and Argo CD side by side: 1,000 apps on 1 cluster, 2,000 over 4; one table each on stdout.
	@bash hack/ensure-packages.sh redis-server git
	argocd=$$(bash bench/argocd/build.sh) && \
	$(GO) run ./hack/loadtest --scale --argocd "$$argocd" --graphcd $(BIN)/graphcd --apps 1000 --clusters 1 --steady 2m --timeout 1h && \
	$(GO) run ./hack/loadtest --scale --argocd "$$argocd" --graphcd $(BIN)/graphcd --apps 2000 --clusters 4 --steady 2m --timeout 1h

.PHONY: verify
verify: generate $(GOLANGCI_LINT) ## Check generated code, formatting, vet, modules and lint; fail on any change.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags integration ./...
	$(GO) mod tidy
	@for m in hack/tools hack/cluster/etcd hack/cluster/kubernetes bench/diffpeer; do (cd $$m && $(GO) mod tidy); done
	$(GOLANGCI_LINT) run ./...
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "verify: the tree changed (stale generated code, go.mod or formatting):"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; fi
	@echo "verify: ok"

.PHONY: demo
demo: build cluster-bins ## Run a local cluster, graphcd server on http://127.0.0.1:8080 and four sample apps (Ctrl-C stops all).
	$(GO) build -o $(BIN)/demo ./hack/demo
	$(BIN)/demo --graphcd $(BIN)/graphcd

.PHONY: image
image: $(CONSOLE_DEPS) ## Build the container image for linux/amd64 and linux/arm64 into bin/image (OCI layout + docker tarballs); prints its digest.
	$(GO) run ./hack/image --out $(BIN)/image --version $(VERSION) --revision $$(git rev-parse HEAD 2>/dev/null || echo unknown)

.PHONY: clean
clean: ## Remove build output (not the machine-wide binary cache).
	rm -rf $(BIN)

# The web console (console/web) needs Node.js and npm. `make build` embeds
# it when npm is on PATH; CONSOLE=0 builds without it (the server then shows
# a page saying how to build it), CONSOLE=1 insists.
NPM     ?= npm
CONSOLE ?= $(if $(shell command -v $(NPM) 2>/dev/null),1,0)
CONSOLE_DEPS := $(if $(filter 1,$(CONSOLE)),console)

build: $(CONSOLE_DEPS)
test-deps: $(if $(filter 1,$(CONSOLE)),console test-console)
generate: $(if $(filter 1,$(CONSOLE)),generate-console)

console/web/node_modules/.package-lock.json: console/web/package-lock.json
	cd console/web && $(NPM) ci --no-audit --no-fund

.PHONY: console
console: console/web/node_modules/.package-lock.json ## Build the web console and copy it into console/dist for go:embed.
	cd console/web && $(NPM) run build
	find console/dist -mindepth 1 ! -name .gitkeep -delete
	cp -R console/web/dist/. console/dist/

.PHONY: test-console
test-console: console/web/node_modules/.package-lock.json ## Type-check the console and run its unit tests (Vitest).
	cd console/web && $(NPM) run typecheck && $(NPM) test

.PHONY: generate-console
generate-console: console/web/node_modules/.package-lock.json ## Regenerate the console's typed GraphQL documents from schema/*.graphqls.
	cd console/web && $(NPM) run codegen
