# Flotilla developer entry points. `make help` lists them.
#
# Everything a fresh machine lacks (the Kubernetes control-plane binaries, etcd, kwok,
# controller-gen, helm) is built from source by `make tools` into a cache outside the
# repository, keyed by version, and reused afterwards.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO ?= go
# Every Go build and test here is static and without local paths, as the
# released binaries, the kind node image's parts and the cached tools are, so
# one set of compiled packages serves them all: a fresh machine compiles each
# shared library once, not once per set of flags. (The race detector needs
# cgo: `make unit CGO_ENABLED=1 GO_TEST_FLAGS=-race`.)
export CGO_ENABLED ?= 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
# Versions come from the pinning go.mod files so that there is one place to change them.
# modversion reads a module's version from a go.mod, in either require form.
modversion = $(shell awk '$$1=="$(2)"{print $$2; exit} $$1=="require" && $$2=="$(2)"{print $$3; exit}' $(1))
KUBE_VERSION    := $(call modversion,tools/k8s/go.mod,k8s.io/kubernetes)
ETCD_VERSION    := $(call modversion,tools/k8s/go.mod,go.etcd.io/etcd/server/v3)
KWOK_VERSION    := $(call modversion,tools/k8s/kwok/go.mod,sigs.k8s.io/kwok)
CTRLGEN_VERSION := $(call modversion,tools/k8s/controller-gen/go.mod,sigs.k8s.io/controller-tools)
LINT_VERSION    := $(call modversion,tools/lint/go.mod,github.com/golangci/golangci-lint/v2)
HELM_VERSION    := $(call modversion,tools/k8s/helm/go.mod,helm.sh/helm/v4)

TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/flotilla/bin
KUBE_DIR    := $(TOOLS_CACHE)/kube-$(KUBE_VERSION)-etcd-$(ETCD_VERSION)
KWOK_DIR    := $(TOOLS_CACHE)/kwok-$(KWOK_VERSION)
CTRLGEN_DIR := $(TOOLS_CACHE)/controller-gen-$(CTRLGEN_VERSION)
CONTROLLER_GEN := $(CTRLGEN_DIR)/controller-gen
LINT_DIR    := $(TOOLS_CACHE)/golangci-lint-$(LINT_VERSION)
GOLANGCI_LINT := $(LINT_DIR)/golangci-lint
HELM_DIR    := $(TOOLS_CACHE)/helm-$(HELM_VERSION)
HELM        := $(HELM_DIR)/helm

# The console's browser test (e2e/console_test.go) drives Debian's Chromium with
# playwright-core from npm at this version, installed by `make browser`.
PLAYWRIGHT_VERSION := 1.65.1
PLAYWRIGHT_DIR     := $(TOOLS_CACHE)/playwright-core-$(PLAYWRIGHT_VERSION)

# What tests and the local fleet read to find the tools.
export KUBEBUILDER_ASSETS := $(KUBE_DIR)
export FLOTILLA_KUBE_BIN  := $(KUBE_DIR)
export FLOTILLA_KWOK_BIN  := $(KWOK_DIR)
export FLOTILLA_HELM      := $(HELM)
export FLOTILLA_PLAYWRIGHT := $(PLAYWRIGHT_DIR)
export FLOTILLA_CHROMIUM  ?= /usr/bin/chromium

BIN_DIR := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
# The commit and its time (never the build's, so that builds are reproducible)
# are printed by every binary's --version with the version.
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
GIT_DATE   := $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
VERSION_PKG := github.com/flotilla-io/flotilla/pkg/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(GIT_COMMIT) -X $(VERSION_PKG).Date=$(GIT_DATE)

GO_TEST_FLAGS ?=
E2E_TIMEOUT ?= 40m

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN{FS=":.*## "} /^[a-z0-9-]+:.*## /{printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Tools

# The tools are independent builds, so `make tools` runs TOOLS_JOBS of them at
# once: one build's module downloads and single-threaded link overlap another's
# compiles. Every tool is built static and without local paths, as the
# repository's own packages are, so the packages they share compile once.
TOOLS_JOBS ?= 3
TOOL_FILES := $(KUBE_DIR)/kube-apiserver $(KUBE_DIR)/etcd $(KUBE_DIR)/kubectl $(KWOK_DIR)/kwokctl $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(HELM)

.PHONY: tools
tools: ## Build the pinned Kubernetes binaries, etcd, kwok, controller-gen, golangci-lint and helm into the cache (once; TOOLS_JOBS at a time).
	@$(MAKE) -s --no-print-directory -j$(TOOLS_JOBS) $(TOOL_FILES)

$(KUBE_DIR)/kube-apiserver:
	tools/k8s/build.sh $(KUBE_DIR) kube

$(KUBE_DIR)/etcd:
	tools/k8s/build.sh $(KUBE_DIR) etcd

# envtest looks for kubectl beside kube-apiserver; the machine's kubectl serves.
$(KUBE_DIR)/kubectl:
	@command -v kubectl >/dev/null || { echo "kubectl is required on PATH"; exit 1; }
	mkdir -p $(KUBE_DIR) && ln -sf "$$(command -v kubectl)" $@

$(KWOK_DIR)/kwokctl:
	@echo "building kwok and kwokctl $(KWOK_VERSION) into $(KWOK_DIR)"
	cd tools/k8s/kwok && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(KWOK_DIR)/ sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl

$(CONTROLLER_GEN):
	@echo "building controller-gen $(CTRLGEN_VERSION) into $(CTRLGEN_DIR)"
	cd tools/k8s/controller-gen && CGO_ENABLED=0 $(GO) build -trimpath -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

$(GOLANGCI_LINT):
	@echo "building golangci-lint $(LINT_VERSION) into $(LINT_DIR)"
	cd tools/lint && CGO_ENABLED=0 $(GO) build -trimpath -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
# Helm lints and renders the charts in charts/ (make verify) and installs the hub on
# kind (make e2e-kind-smoke).
$(HELM):
	@echo "building helm $(HELM_VERSION) into $(HELM_DIR)"
	cd tools/k8s/helm && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION)" -o $(HELM) helm.sh/helm/v4/cmd/helm

# Chromium from Debian's packages when it is missing (with Node.js and npm),
# and playwright-core into the cache.
.PHONY: browser
browser: ## Install what the console's browser test needs: Chromium (Debian's, when missing) and playwright-core $(PLAYWRIGHT_VERSION) (cached).
	hack/install-browser.sh $(PLAYWRIGHT_DIR) $(PLAYWRIGHT_VERSION)

# Debian's prometheus when it is missing: the PromQL analysis tests run it.
.PHONY: prometheus
prometheus: ## Install Debian's prometheus package with apt-get (as root, else with sudo) when prometheus is not on PATH; the PromQL analysis tests run it.
	@hack/install-prometheus.sh

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy functions for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs into manifests/crds (and their copy in charts/flotilla-hub/crds), manifests/agent/rendered (what `agent join --install` applies) and the charts' values tables in docs/operations/helm.md.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false paths=./apis/... output:crd:artifacts:config=manifests/crds
	hack/update-crd-kustomization.sh
	hack/update-chart-crds.sh
	$(GO) run ./tools/agentmanifests/gen
	$(GO) run ./tools/charts/valuesdoc

.PHONY: docs
docs: ## Regenerate the reference pages in docs/reference (flags, API, metrics) and the ownership tables in docs/concepts/pipeline.md from the code.
	$(GO) run ./tools/docgen gen

##@ Build and test

.PHONY: build
build: ## Build the hub, the agent and the kubectl plugin (kubectl-flotilla) into bin/.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/ ./hub ./agent ./hub/kubectl-flotilla

.PHONY: verify
verify: $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(HELM) ## No tracked binaries or large files, licence headers, gofmt, go vet, golangci-lint, generated files and docs up to date, doc links resolve, the charts lint, render and agree with manifests/.
	hack/verify-repo.sh
	hack/verify-headers.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) --no-print-directory lint
	hack/verify-generated.sh "$(MAKE)"
	HELM=$(HELM) GO=$(GO) hack/verify-charts.sh
	GO=$(GO) hack/verify-docs.sh

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint with .golangci.yml over every package (also run by verify).
	$(GOLANGCI_LINT) run ./...

.PHONY: unit
unit: tools prometheus ## Unit and envtest tests (Debian's prometheus installed first when missing: make prometheus).
	hack/gotest.sh unit $(GO) test $(GO_TEST_FLAGS) ./apis/... ./pkg/... ./hub/... ./agent/... ./tools/...

.PHONY: e2e
e2e: tools build browser prometheus ## End-to-end tests on a local kwok fleet (the console's in headless Chromium; screenshots in bin/e2e-artifacts; Debian's prometheus, installed when missing, scrapes the fleet for the PromQL gate).
	hack/gotest.sh e2e $(GO) test $(GO_TEST_FLAGS) -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/...

.PHONY: e2e-skew
e2e-skew: tools ## Version skew and upgrade tests: hack/skew-base (N-1, built from git once, cached) against this tree on a 2-member kwok fleet.
	$(GO) vet -tags skew ./e2e/skew/
	hack/gotest.sh e2e-skew $(GO) test -tags skew $(GO_TEST_FLAGS) -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/skew/

.PHONY: skew-base
skew-base: ## Build (once, cached by commit) the N-1 hub and agent the skew suite runs, without a fleet.
	FLOTILLA_SKEW_BUILD_ONLY=1 $(GO) test -tags skew -count=1 -timeout 30m ./e2e/skew/

# Every fuzz target, as package:Target; `make fuzz` runs each for FUZZ_TIME.
FUZZ_TARGETS ?= ./pkg/tunnel:FuzzDecodeFrame ./pkg/tunnel:FuzzSession ./pkg/tunnel:FuzzAPIProxyOpen
FUZZ_TIME ?= 10s

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZ_TIME (default 10s).
	GO=$(GO) FUZZ_TIME=$(FUZZ_TIME) hack/fuzz.sh $(FUZZ_TARGETS)
LATENCY_N ?= 20

.PHONY: bench-latency
bench-latency: tools ## Measure placement and edit latency on a kwok fleet (tools/latency; reports, never fails on numbers).
	$(GO) run ./tools/latency --n $(LATENCY_N)

FLEETSIM_MEMBERS ?= 100
FLEETSIM_PLACEMENTS ?= 20
FLEETSIM_DURATION ?= 1m

.PHONY: fleetsim
fleetsim: tools ## Simulate FLEETSIM_MEMBERS members against a real hub and report its cost (tools/fleetsim; reports, never fails on numbers).
	$(GO) run ./tools/fleetsim --members $(FLEETSIM_MEMBERS) --placements $(FLEETSIM_PLACEMENTS) --duration $(FLEETSIM_DURATION) --kill 1 --churn 6 --bad-members 1

.PHONY: fleetsim-smoke
fleetsim-smoke: tools ## A one-minute fleetsim run (5 members, a kill, a bad member, a hub restart) with assertions; part of `make test`.
	hack/gotest.sh fleetsim-smoke $(GO) test -tags fleetsim -count=1 -timeout 10m -v ./tools/fleetsim/

.PHONY: test
test: tools verify unit fuzz fleetsim-smoke ## Everything CI runs: verify, unit, envtest, a short fuzz run, the fleetsim smoke run, e2e on kwok (the kind node image built beside it), the version skew and upgrade suite and the kind smoke suite.
	MAKE="$(MAKE)" hack/test-fleets.sh

##@ Local fleet

FLEET_MEMBERS ?= 3

.PHONY: fleet-up
fleet-up: tools build ## Bring up a local kwok fleet (hub + FLEET_MEMBERS members).
	$(GO) run ./tools/localfleet up --members $(FLEET_MEMBERS)

.PHONY: fleet-down
fleet-down: ## Remove the local fleet.
	$(GO) run ./tools/localfleet down

.PHONY: demo
demo: tools build ## Bring the fleet up, place the samples, and show the status.
	$(GO) run ./tools/localfleet demo --members $(FLEET_MEMBERS)

##@ Images and kind fleets

# The tag `make images` builds and writes into manifests/hub and manifests/agent.
IMAGE_TAG ?= dev
IMAGES_DIR := bin/images

.PHONY: images
images: ## Build the hub and agent images as OCI archives in bin/images (no container engine) and set their tag in the manifests and charts.
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(BIN_DIR)/linux-amd64/ ./hub ./agent
	$(GO) run ./tools/images --bin $(BIN_DIR)/linux-amd64 --out $(IMAGES_DIR) --tag $(IMAGE_TAG) \
		--version $(VERSION) --revision "$$(git rev-parse HEAD 2>/dev/null)" --created "$$(git log -1 --format=%ct 2>/dev/null)" --set-manifests

##@ Releases

DIST_DIR ?= dist
# Only a VERSION given on the command line (or in the environment) names a
# release; the git describe default above does not.
RELEASE_VERSION = $(if $(filter command line environment,$(origin VERSION)),$(VERSION),)
# Extra flags of tools/release (--image-repository, --download-base, ...);
# ALLOW_DIRTY=1 builds a trial release from uncommitted changes.
RELEASE_FLAGS ?=
RELEASE_ARGS = --version "$(RELEASE_VERSION)" $(if $(ALLOW_DIRTY),--allow-dirty) $(RELEASE_FLAGS)

.PHONY: release
release: ## Build release VERSION=vX.Y.Z into dist/: binaries for linux and darwin on amd64 and arm64, multi-arch images, install.yaml, SBOMs, krew manifest, notes, SHA256SUMS (docs/operations/releases.md).
	rm -rf $(DIST_DIR)
	$(GO) run ./tools/release --out $(DIST_DIR) $(RELEASE_ARGS)

.PHONY: release-check
release-check: ## Build release VERSION=vX.Y.Z twice into dist/check/1 and dist/check/2 and fail unless the digests are identical (COLD=1: the second with an empty Go build cache).
	rm -rf $(DIST_DIR)/check
	$(GO) run ./tools/release --check $(if $(COLD),--cold) --out $(DIST_DIR)/check $(RELEASE_ARGS)

.PHONY: podman
podman: ## Install and configure podman for kind fleets (once); fails with one line where privileged containers cannot run.
	hack/setup-podman.sh

.PHONY: node-image
node-image: podman ## Build the kind node image from source into podman (each part cached by version; a second run is a no-op).
	$(GO) run ./tools/nodeimage

.PHONY: e2e-kind
e2e-kind: tools build node-image ## The end-to-end suites on a kind fleet (podman, the node image built here).
	FLOTILLA_E2E_PROVIDER=kind hack/gotest.sh e2e-kind $(GO) test $(GO_TEST_FLAGS) -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/

.PHONY: e2e-kind-smoke
e2e-kind-smoke: tools node-image ## The kind smoke suite CI runs: the hub installed with its chart (charts/flotilla-hub) + 1 member joined with --install.
	$(GO) vet -tags kind ./e2e/kindsmoke/
	hack/gotest.sh e2e-kind-smoke $(GO) test -tags kind -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/kindsmoke/
