# leasewrap — build, test and demo targets. Everything the targets need is
# installed or built by the targets themselves (see .ci/run for CI).

GO      ?= go
BIN     ?= bin/leasewrap
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# Static: no dynamic loader on every start (see bench/LOG.md, "Start-up").
export CGO_ENABLED := 0

.PHONY: all build test harnesses lint fmt-check vet demo bench stress fuzz clean

all: build

# Linked to a side file, then copied into place: a binary the Go linker
# wrote in place (page by page, through mmap) sits in the page cache in
# 4 KiB pages and starts ≈ 1 ms (20 %) slower than the same bytes written
# by cp, as an installed binary is (bench/LOG.md, "Start-up").
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN).link ./cmd/leasewrap
	cp $(BIN).link $(BIN).new && mv -f $(BIN).new $(BIN) && rm -f $(BIN).link

# The whole suite, including the short reliability battery (fault points,
# race storm, bad inputs) and the fuzz seed corpora, plus the fault-point
# package under its build tag. The Rust interop harnesses are built first
# (they skip outside CI when no toolchain is there; see harnesses).
test: harnesses
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags leasewrap_faults ./internal/fault/

# The Rust interop harnesses (the seeds' own code, plus shims where Debian
# lacks a crate) that the *SeedInterop and serde differential tests run.
# Installs Debian's librust-*-dev crates when missing; a no-op when built.
harnesses:
	bash .ci/rust-harnesses.sh

# The long race storm and fault runs (minutes); prints a summary.
stress: stress-etcd
	RELIABILITY_LONG=1 $(GO) test -count=1 -v -timeout 30m ./reliability/ | grep -E 'storm |blocked:|^(ok|FAIL|---)'

# Every fuzz target for FUZZTIME each (default 60s).
FUZZTIME ?= 60s
FUZZ_TARGETS := "lease/claim FuzzParseRecord" "lease/claim FuzzKey" "internal/pyyaml FuzzResolverMatchers" "internal/pyyaml FuzzStringRoundTrip" "lease/reserve FuzzParseRecord" \
	"lease/reserve FuzzRunIDAndHash" "lease/reserve FuzzReadReplay" "lease/session FuzzDecodeOwner" "lease/session FuzzParseID"
fuzz:
	@for t in $(FUZZ_TARGETS); do set -- $$t; echo "== $$1 $$2"; \
		$(GO) test -run '^$$' -fuzz "^$$2\$$" -fuzztime $(FUZZTIME) ./$$1 || exit 1; done

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: vet fmt-check

# A real wrapped job of every local kind, then lock and once against an etcd
# the demo starts itself on loopback (Debian's etcd, installed when missing).
demo: build
	./examples/demo.sh $(BIN)
	bash etcd/scripts/install-etcd.sh
	./examples/etcd/demo.sh $(BIN)

# Benchmarks: Go benchmarks, syscall counts and the process-level driver
# (bench/lwbench) against flock(1) and bare exec; report in bench/out/.
# BENCH_QUICK=1 for a short run. See docs/PERFORMANCE.md (full log: bench/LOG.md).
bench:
	GO=$(GO) bash bench/run.sh
	bash etcd/scripts/install-etcd.sh
	$(MAKE) bench-etcd

clean:
	rm -rf bin

# The etcd kinds (lock, once) live in their own module and executable,
# leasewrap-etcd, which `leasewrap lock|once` executes from beside itself:
# the etcd client's start-up cost never reaches the local kinds.
.PHONY: build-etcd test-etcd stress-etcd interop-etcd demo-etcd bench-etcd idle-etcd
ETCD_BIN ?= $(dir $(BIN))leasewrap-etcd
# `make build` and `make test` include the etcd module (extra prerequisites;
# the recipes above stay as they are).
build: build-etcd
test: test-etcd
build-etcd:
	cd etcd && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(abspath $(ETCD_BIN)) ./cmd/leasewrap-etcd

test-etcd:
	cd etcd && $(GO) vet ./... && $(GO) test -count=1 ./...

# The long history check (many wrappers, revokes, pauses, SIGKILLs).
stress-etcd:
	cd etcd && ETCD_STRESS_LONG=1 $(GO) test -count=1 -v -timeout 30m -run 'History' ./cmd/leasewrap-etcd/

# Interoperability with Debian's etcd and etcdctl (apt-get install etcd-server etcd-client).
interop-etcd: build-etcd
	bash etcd/scripts/interop.sh $(ETCD_BIN)

# lock and once against an etcd the demo starts itself (Debian's etcd).
demo-etcd: build-etcd
	./examples/etcd/demo.sh $(ETCD_BIN)

# leasewrap lock vs etcdctl lock: hand-over and takeover (Debian's etcd).
bench-etcd: build-etcd
	bash etcd/scripts/bench.sh $(ETCD_BIN)

# The load of idle wrappers on one etcd (N=100 by default).
idle-etcd: build-etcd
	bash etcd/scripts/idle.sh $(ETCD_BIN) $(or $(N),100)

# The kube kind lives in its own module and executable, leasewrap-kube,
# which `leasewrap kube` executes from beside itself: client-go never enters
# the root module nor slows the local kinds.
.PHONY: build-kube test-kube
KUBE_BIN ?= $(dir $(BIN))leasewrap-kube
build: build-kube
test: test-kube
build-kube:
	cd kube && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(abspath $(KUBE_BIN)) ./cmd/leasewrap-kube

test-kube:
	cd kube && $(GO) vet ./... && $(GO) test -count=1 ./...

# The kube kind's tests and benchmark run against a real kube-apiserver
# v1.37.2 (kube/internal/kubetest), built once from source into
# ~/.cache/leasewrap and reused (kube/scripts/build-apiserver.sh), and
# Debian's etcd; a package of them may take more than go test's default
# 10 min on a loaded machine.
.PHONY: apiserver-kube bench-kube stress-kube
test-kube: apiserver-kube
test-kube: export GOFLAGS += -timeout=30m
bench: bench-kube
stress: stress-kube
apiserver-kube:
	bash etcd/scripts/install-etcd.sh
	bash kube/scripts/build-apiserver.sh >/dev/null

# leasewrap-kube vs client-go's LeaderElector on one API server: takeover,
# hand-over, `kube run -- true`, idle API load and memory (medians).
bench-kube: apiserver-kube
	bash kube/scripts/bench.sh

# The long history check (many wrappers and electors, pauses, overwrites,
# SIGKILLs).
stress-kube: apiserver-kube
	cd kube && KUBE_STRESS_LONG=1 $(GO) test -count=1 -v -timeout 40m -run 'History' ./cmd/leasewrap-kube/
