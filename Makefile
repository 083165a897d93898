# kubesim is built with Go 1.27.3: an older go (these machines start on
# 1.26.8 with GOTOOLCHAIN=local, which ignores go.mod's toolchain line)
# fetches it from the module proxy.
export GOTOOLCHAIN ?= go1.27.3
# GNU make before 4.4 does not export variables to $(shell …): its go
# calls name the toolchain themselves, or they would run the local one.
SHELL_GO := GOTOOLCHAIN=$(GOTOOLCHAIN) go

# kubesim's build. The upstream components report the version stamped here;
# without it they say v0.0.0-master and real clients (kubectl) refuse them.
KUBE_VERSION := $(shell $(SHELL_GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_MINOR   := $(word 2,$(subst ., ,$(KUBE_VERSION)))
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
           -X k8s.io/component-base/version.gitMajor=1 \
           -X k8s.io/component-base/version.gitMinor=$(KUBE_MINOR) \
           -X k8s.io/component-base/version.gitTreeState=clean \
           -X github.com/kubesim/kubesim/internal/version.Version=$(VERSION)
BIN := $(CURDIR)/bin/kubesim

# Upstream modules with kubesim's patches (patches/README.md): for each
# patches/MODULE/, a patched copy of the pinned version in build/src/MODULE,
# which the main module's builds, vets and tests use through a go.mod of
# their own; `make clean` removes them.
PATCHES      := $(sort $(shell find patches -name '*.patch'))
PATCHED_MODS := $(sort $(patsubst patches/%/,%,$(dir $(PATCHES))))
# `kubesim version` and `kubesim bench` list them: MODULE/FILE, comma separated.
empty        :=
comma        := ,
space        := $(empty) $(empty)
LDFLAGS      += -X github.com/kubesim/kubesim/internal/version.Patches=$(subst $(space),$(comma),$(patsubst patches/%,%,$(PATCHES)))
PATCH_SRC    := build/src
MODFILE      := $(CURDIR)/build/kubesim.mod
GOMOD        := -modfile=$(MODFILE)
# The upstream packages the patches change (read from the patches' +++ b/
# lines, Go files outside testdata): their tests, upstream's and the
# patches', run with ours.
# The upstream components as kubesim runs them (upstream/go.mod): a module
# of their own, which ./... does not reach, built against the release the
# module that builds them pins; here kubesim's.
UPSTREAM_PKGS := github.com/kubesim/kubesim/upstream/...
PATCHED_PKGS := $(sort $(foreach p,$(PATCHES),$(shell sed -n '/\/testdata\//d; s|^+++ b/\(.*\)\.go$$|$(patsubst patches/%/,%,$(dir $(p)))/\1|p' $(p) | sed 's|/[^/]*$$||')))

# kubesim's Go: this toolchain with the scaled clock of patches/go (the
# runtime files its .diff changes, as a build overlay: patches/go/README.md),
# so that `create cluster --time-scale N` runs every component on one clock.
# At scale 1 the clock costs one compare. overlay.sh refuses a toolchain the
# diff was not written for. Every build, vet and test below uses it: one
# build cache, not two.
GO_VERSION    := $(shell $(SHELL_GO) env GOVERSION)
CLOCK_PATCHES := $(sort $(wildcard patches/go/$(GO_VERSION)/*.diff))
GOCLOCK       := $(CURDIR)/build/goclock
GO            := $(GOCLOCK)/go
LDFLAGS       += -X github.com/kubesim/kubesim/internal/version.Clock=$(subst $(space),$(comma),$(patsubst patches/%,%,$(CLOCK_PATCHES)))

CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0

.PHONY: stamps build install cluster test lint unit e2e kubesimtest bench clean generate prod-small

# Modules of their own, which ./... does not reach: the API types (a leaf
# that the others require through a replace), the public test helper (its
# own go.mod keeps k8s.io/kubernetes out of its users' builds) and the
# example controller module that tests with it. UNIT_NESTED need no binary.
NESTED      := apis pkg/kubesimtest examples/controller-test
UNIT_NESTED := apis
NESTED_TEST = @for m in $(NESTED); do echo "go test ($$m)"; \
	KUBESIM_BINARY=$(BIN) $(GO) -C $$m test -count=1 -timeout 20m ./... || exit 1; done

# A value left empty would build a binary whose every command fails
# (the upstream components refuse an empty version): refuse it here.
stamps:
	@test -n "$(KUBE_VERSION)" || { echo "make: no k8s.io/kubernetes version read from go.mod: does 'GOTOOLCHAIN=$(GOTOOLCHAIN) go list -m k8s.io/kubernetes' work here?" >&2; exit 1; }
	@test -n "$(CLOCK_PATCHES)" || { echo "make: no clock patch under patches/go/ for $(GO_VERSION): kubesim is built with $(GOTOOLCHAIN) (set GOTOOLCHAIN to it)" >&2; exit 1; }

## build: bin/kubesim, and beside it the Kubernetes versions in VERSIONS
build: stamps $(MODFILE) $(GO) versions
	$(GO) build $(GOMOD) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubesim

## install: kubesim and the Kubernetes versions in VERSIONS into $(go env GOPATH)/bin
install: stamps $(MODFILE) $(GO)
	$(GO) install $(GOMOD) -ldflags "$(LDFLAGS)" ./cmd/kubesim
	$(MAKE) versions VERSIONS_DIR=$$($(SHELL_GO) env GOPATH)/bin

# The Kubernetes versions besides kubesim's own (versions/README.md): each
# a module under versions/ and a binary kubesim-k8s-MINOR beside kubesim.
# VERSIONS names those to build, all by default; kubesim's own needs none
# (`make build VERSIONS=1.36` builds only it).
OFFERED_VERSIONS := $(patsubst versions/v%/go.mod,%,$(wildcard versions/v*/go.mod))
VERSIONS         ?= $(OFFERED_VERSIONS)
VERSIONS_DIR     ?= $(dir $(BIN))
OWN_MINOR        := 1.$(KUBE_MINOR)
BUILT_VERSIONS   := $(filter-out $(OWN_MINOR),$(VERSIONS))

ifneq ($(filter-out $(OFFERED_VERSIONS) $(OWN_MINOR),$(VERSIONS)),)
$(error VERSIONS: kubesim offers no Kubernetes $(filter-out $(OFFERED_VERSIONS) $(OWN_MINOR),$(VERSIONS)): give some of $(OWN_MINOR) $(OFFERED_VERSIONS))
endif

.PHONY: versions test-versions $(addprefix version-,$(OFFERED_VERSIONS))
versions: $(addprefix version-,$(BUILT_VERSIONS))

# Each with the scaled clock, its release stamped as upstream's make does,
# and the tag naming its release for what differs (upstream/recorder).
$(addprefix version-,$(OFFERED_VERSIONS)): version-%: stamps $(GO)
	$(GO) -C versions/v$* build -tags kube_$(subst .,_,$*) \
	  -ldflags "$(call version_ldflags,$(shell $(SHELL_GO) -C versions/v$* list -m -f '{{.Version}}' k8s.io/kubernetes))" \
	  -o $(abspath $(VERSIONS_DIR))/kubesim-k8s-$* .

## test-versions: vet and unit-test upstream/ against each version in VERSIONS (~2 min each, warm)
# (make test runs them against kubesim's own; its e2e suite runs a cluster of each built version)
test-versions: versions
	@for v in $(BUILT_VERSIONS); do echo "go vet, go test (upstream/ against $$v)"; \
	  $(GO) -C versions/v$$v vet -tags kube_$$(echo $$v | tr . _) ./... $(UPSTREAM_PKGS) && \
	  $(GO) -C versions/v$$v test -count=1 -tags kube_$$(echo $$v | tr . _) ./... $(UPSTREAM_PKGS) || exit 1; done

version_ldflags = -X k8s.io/component-base/version.gitVersion=$(1) \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(1))) \
  -X k8s.io/component-base/version.gitTreeState=clean

# Every directory under patches/ is a prerequisite too: removing or renaming
# a patch changes one. The module cache's files are read-only, and so is a
# copy cut short: chmod before rm. Each patched module's replace in go.mod
# gives way to one pointing at its copy.
$(MODFILE): go.mod go.sum Makefile $(shell find patches -type d) $(PATCHES)
	chmod -R u+w $(PATCH_SRC) 2>/dev/null; rm -rf $(PATCH_SRC) $(MODFILE) && mkdir -p $(PATCH_SRC)
	cp go.sum build/kubesim.sum
	cp go.mod $@.tmp
	for m in $(PATCHED_MODS); do \
	  go mod download $$m && mkdir -p $(PATCH_SRC)/$$m && rmdir $(PATCH_SRC)/$$m && \
	  cp -R "$$(go list -m -f '{{.Dir}}' $$m)" $(PATCH_SRC)/$$m && chmod -R u+w $(PATCH_SRC)/$$m && \
	  for p in patches/$$m/*.patch; do git apply --directory=$(PATCH_SRC)/$$m $$p || exit 1; done && \
	  go mod edit -replace=$$m=./$(PATCH_SRC)/$$m $@.tmp || exit 1; \
	done
	mv $@.tmp $@

$(GO): patches/go/overlay.sh $(CLOCK_PATCHES)
	patches/go/overlay.sh $(GOCLOCK) >/dev/null

## cluster: build, then create the cluster "kubesim" and make it kubectl's context
# (kubesim's own Kubernetes version only: `make build` builds the others)
cluster:
	$(MAKE) build VERSIONS=$(OWN_MINOR)
	$(BIN) create cluster --nodes 3

## test: lint, unit tests, and end-to-end tests against real control planes
## (test/e2e is behind the build tag e2e: plain `go test ./...` is the unit suite)
test: build lint
	KUBESIM_BINARY=$(BIN) $(GO) test $(GOMOD) -tags e2e -count=1 -timeout 60m ./... $(UPSTREAM_PKGS) $(PATCHED_PKGS)
	$(NESTED_TEST)

lint: $(MODFILE) $(GO)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(GOMOD) -tags e2e ./... $(UPSTREAM_PKGS) $(PATCHED_PKGS)
	@for m in $(NESTED); do echo "go vet ($$m)"; $(GO) -C $$m vet ./... || exit 1; done

unit: $(MODFILE) $(GO)
	$(GO) test $(GOMOD) -count=1 ./... $(UPSTREAM_PKGS) $(PATCHED_PKGS)
	@for m in $(UNIT_NESTED); do echo "go test ($$m)"; $(GO) -C $$m test -count=1 ./... || exit 1; done

e2e: build
	KUBESIM_BINARY=$(BIN) $(GO) test $(GOMOD) -tags e2e -count=1 -timeout 60m -v ./test/e2e/

## kubesimtest: the tests of the nested modules (apis, pkg/kubesimtest and
## the examples that use it)
kubesimtest: build
	$(NESTED_TEST)

## generate: DeepCopy functions and the CRDs (deploy/crds: Stage, ResourceUsage, ClusterResourceUsage,
## Metric, DistributedPodDisruptionBudget; allowDangerousTypes for Metric's float bucket bounds, as KWOK's)
## from apis/, run inside its module; deploy/dpdb gets a copy of its CRD (kustomize reads no file
## outside its directory)
generate:
	cd apis && $(CONTROLLER_GEN) object paths=./... crd:crdVersions=v1,allowDangerousTypes=true output:crd:dir=../deploy/crds
	cp deploy/crds/policy.kubesim.io_distributedpoddisruptionbudgets.yaml deploy/dpdb/crd.yaml

bench: build
	$(BIN) bench create

## prod-small: examples/upgrade-rehearsal/prod-small.yaml anew, exported from a cluster made of
## examples/upgrade-rehearsal/prod-small-cluster.yaml and workloads.yaml
prod-small: build
	KUBESIM=$(BIN) examples/upgrade-rehearsal/make-prod-small.sh

clean:
	chmod -R u+w build 2>/dev/null; rm -rf bin build
