# leasewrap — build, test and demo targets. Everything the targets need is
# installed or built by the targets themselves (see .ci/run for CI).

GO      ?= go
BIN     ?= bin/leasewrap
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build test lint fmt-check vet demo bench stress fuzz clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/leasewrap

test:
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: vet fmt-check

demo: build
	./examples/demo.sh $(BIN)

# Benchmarks: Go benchmarks, syscall counts and the process-level driver
# (bench/lwbench) against flock(1) and bare exec; report in bench/out/.
# BENCH_QUICK=1 for a short run. See docs/PERFORMANCE.md.
bench:
	GO=$(GO) bash bench/run.sh

clean:
	rm -rf bin
