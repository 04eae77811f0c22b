# leasewrap — build, test and demo targets. Everything the targets need is
# installed or built by the targets themselves (see .ci/run for CI).

GO      ?= go
BIN     ?= bin/leasewrap
# The version in the go command's own form (a release tag, else a
# pseudo-version) and the commit, stamped into every executable;
# `leasewrap --version` prints both and the Go version (docs/RELEASING.md).
VERSION ?= $(shell sh packaging/version.sh)
COMMIT  ?= $(shell sh packaging/version.sh commit)
LDFLAGS := -s -w -X main.version=$(VERSION) -X github.com/leasewrap/leasewrap/cli.commit=$(COMMIT)
# Static: no dynamic loader on every start (see bench/LOG.md, "Start-up").
export CGO_ENABLED := 0

.PHONY: all build test test-root harnesses lint fmt-check vet demo bench stress fuzz clean man completions gendocs

all: build

# Linked to a side file and copied into place, since a copy starts faster
# than the linker's own output (bench/LOG.md, "copy the linked binary").
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN).link ./cmd/leasewrap
	cp $(BIN).link $(BIN).new && mv -f $(BIN).new $(BIN) && rm -f $(BIN).link

# The whole suite, one suite after the other, each package in exactly one:
#   root  leasewrap and the local kinds, the short reliability battery
#         (fault points, race storm, bad inputs), the fuzz seed corpora, and
#         the fault-point package under its build tag;
#   etcd  lock, once (leasewrap-etcd), against Debian's etcd on loopback;
#   kube  kube (leasewrap-kube), against a real kube-apiserver built once
#         (docs/DEVELOPMENT.md);
#   pg    the Postgres kind (pg/), against PostgreSQL 15 and pgbouncer;
#   bench the benchmark module (bench/): vet and its tests.
# Every suite runs even when one before it failed; each prints one line,
# "== suite NAME: ok in N s" (or FAIL), and the lines again at the end.
# The Rust interop harnesses are built first (they skip outside CI when no
# toolchain is there; see harnesses).
SUITES := root etcd kube pg bench
# The root suite's packages: the module's, less the kinds that have a suite
# of their own.
ROOT_PKGS = $$($(GO) list ./... | grep -Ev '^github.com/leasewrap/leasewrap/(etcd|kube|pg)(/|$$)')
test: harnesses
	@fail=; lines=; for s in $(SUITES); do \
	  start=$$(date +%s); r=ok; \
	  $(MAKE) --no-print-directory test-$$s || { r=FAIL; fail="$$fail $$s"; }; \
	  line="== suite $$s: $$r in $$(( $$(date +%s) - start )) s"; echo "$$line"; lines="$$lines$$line\n"; \
	done; printf "$$lines"; [ -z "$$fail" ] || { echo "== failed:$$fail"; exit 1; }

test-root:
	$(GO) test -count=1 $(ROOT_PKGS)
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
	$(MAKE) bench-etcd bench-pg

# The pg kind against an advisory-lock loop and ShedLock's statements, on a
# PostgreSQL 15 the benchmark starts itself (figures: docs/POSTGRES.md, "Measured").
.PHONY: bench-pg
bench-pg:
	GO=$(GO) bash pg/scripts/bench.sh

# bench/ is a module of its own (bench/go.mod): its suite vets and tests
# it, since the root module's ./... does not reach it.
.PHONY: test-bench
test-bench:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./...

clean:
	rm -rf bin build

# Man pages (leasewrap.1, leasewrap-KIND.1 for each kind) and completion
# scripts (leasewrap.bash, _leasewrap, leasewrap.fish), generated by the
# built leasewrap from the command line --help describes, into build/man
# and build/completions, for packages and make install. The etcd and kube
# kinds come from their executables' descriptions in
# cmd/leasewrap/siblings/, which `make gendocs` rewrites (their tests fail
# when those are stale).
man: build
	$(BIN) gendocs --man build/man >/dev/null
completions: build
	$(BIN) gendocs --completions build/completions >/dev/null

# NOTICE, too: the NOTICE files of the modules the executables link
# (packaging/notice_test.go).
gendocs:
	LEASEWRAP_UPDATE_DOCS=1 $(GO) test -count=1 -run TestModelDescription ./etcd/cmd/leasewrap-etcd/ ./kube/cmd/leasewrap-kube/ ./pg/cmd/leasewrap-pg/
	LEASEWRAP_UPDATE_DOCS=1 $(GO) test -count=1 -run TestNoticeCarriesEveryLinkedNotice ./packaging/

# The etcd kinds (lock, once) live in their own executable, leasewrap-etcd,
# which `leasewrap lock|once` executes from beside itself: the etcd
# client's start-up cost never reaches the local kinds.
.PHONY: build-etcd test-etcd stress-etcd interop-etcd demo-etcd bench-etcd idle-etcd
ETCD_BIN ?= $(dir $(BIN))leasewrap-etcd
build: build-etcd
build-etcd:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(ETCD_BIN) ./etcd/cmd/leasewrap-etcd

test-etcd:
	$(GO) test -count=1 ./etcd/...

# The long history check (many wrappers, revokes, pauses, SIGKILLs).
stress-etcd:
	ETCD_STRESS_LONG=1 $(GO) test -count=1 -v -timeout 30m -run 'History' ./etcd/cmd/leasewrap-etcd/

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

# The kube kind lives in its own executable, leasewrap-kube, which
# `leasewrap kube` executes from beside itself: client-go is never linked
# into leasewrap nor slows the local kinds.
.PHONY: build-kube test-kube
KUBE_BIN ?= $(dir $(BIN))leasewrap-kube
build: build-kube
build-kube:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(KUBE_BIN) ./kube/cmd/leasewrap-kube

test-kube:
	$(GO) test -count=1 ./kube/...

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
	KUBE_STRESS_LONG=1 $(GO) test -count=1 -v -timeout 40m -run 'History' ./kube/cmd/leasewrap-kube/

# The pg kind's executable, leasewrap-pg (pg/, packages of this module like
# etcd/ and kube/), which `leasewrap pg` executes from beside itself: pgx
# never links into leasewrap. Its tests start Debian's PostgreSQL 15 and
# pgbouncer themselves.
.PHONY: build-pg test-pg
PG_BIN ?= $(dir $(BIN))leasewrap-pg
build: build-pg
build-pg:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(PG_BIN) ./pg/cmd/leasewrap-pg
test-pg:
	$(GO) test -count=1 ./pg/...

# Install: the executables, the man pages and the completion scripts
# (generated by leasewrap from its own command line: packaging/gen-docs.sh).
# PREFIX=/usr puts leasewrap on cron's PATH (/usr/bin:/bin); the packages
# (make release) do. uninstall removes exactly what install installed.
.PHONY: install uninstall docs-gen release release-check
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
GEN         ?= build
EXES        := leasewrap leasewrap-etcd leasewrap-kube leasewrap-pg

docs-gen: build
	bash packaging/gen-docs.sh $(BIN) $(GEN)

install: docs-gen
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(addprefix $(dir $(BIN)),$(EXES)) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(GEN)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -D -m 0644 $(GEN)/completions/leasewrap.bash $(DESTDIR)$(BASHCOMPDIR)/leasewrap
	install -D -m 0644 $(GEN)/completions/_leasewrap $(DESTDIR)$(ZSHCOMPDIR)/_leasewrap
	install -D -m 0644 $(GEN)/completions/leasewrap.fish $(DESTDIR)$(FISHCOMPDIR)/leasewrap.fish

# The man pages' names come from the generated set (as install took them).
uninstall: docs-gen
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(EXES))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard $(GEN)/man/*.1)))
	rm -f $(DESTDIR)$(BASHCOMPDIR)/leasewrap $(DESTDIR)$(ZSHCOMPDIR)/_leasewrap $(DESTDIR)$(FISHCOMPDIR)/leasewrap.fish

# dist/: tarballs, .deb, .rpm, OCI image archives (linux/amd64, arm64),
# SBOM and SHA256SUMS, reproducible from a commit (packaging/release.sh;
# cutting a release: docs/RELEASING.md). DIST=dir writes elsewhere, IMAGE=0
# skips the image (no podman).
DIST ?= dist
release:
	DIST=$(DIST) bash packaging/release.sh

# What CI does with the artifacts (needs root): make release twice and
# compare, install the .deb and run it, the image's root filesystem as PID 1.
release-check:
	bash packaging/ci.sh
