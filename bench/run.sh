#!/usr/bin/env bash
# make bench: builds leasewrap and the benchmark driver, installs what they
# need (flock(1), strace), then runs the Go benchmarks, the syscall counts
# and the process-level measurements, writing everything to one Markdown
# report (default bench/out/report.md) and to stdout.
#
#   bench/run.sh                 full run (about 12 minutes on 2 cores)
#   BENCH_QUICK=1 bench/run.sh   short run (about 3 minutes), same tables
#   BENCH_N=400 bench/run.sh     more overhead rounds (others scale from it)
#   BENCH_COMPARE=old/leasewrap bench/run.sh   start-up and idioms rounds also time an older build
#   BENCH_SECTIONS=seeds BENCH_QUICK=1 bench/run.sh   one lwbench section only
#                                (startup,seeds,overhead,jobcost,...), no go test -bench
#   BENCH_SECTIONS=seeds,jobcost bench/run.sh   issue 24's per-run cost: every
#                                kind ÷ (floor + kong), the job cgroup's cost
#
# The seeds section times every kind against its seed's own Rust code doing
# the same protocol work: the interop harnesses' drivers (make harnesses),
# rebuilt here with cargo --release. Without a Rust toolchain it is skipped
# (and says so), except under CI.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need flock  || missing+=(util-linux)
need strace || missing+=(strace)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi

GO=${GO:-go}
out=${BENCH_OUT:-bench/out}
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: the bench module's builds run in bench/ (go -C bench)
bin="$out/leasewrap"
# The same build as `make build` (static: CGO_ENABLED=0), copied into
# place like make build does: every measured binary is in the page cache
# as an installed (copied) one is, not as the linker left it (≈ 1 ms
# slower to start; see bench/LOG.md, "Start-up").
export CGO_ENABLED=0
gobuild() { # OUT ARGS...
  local o=$1; shift
  $GO build -o "$o.link" "$@" && cp "$o.link" "$o" && rm -f "$o.link"
}
gobuild "$bin" -trimpath -ldflags '-s -w' ./cmd/leasewrap
# The benchmark programs are the bench module's (bench/go.mod).
benchbuild() { # OUT ARGS...
  local o=$1; shift
  $GO -C bench build -o "$o.link" "$@" && cp "$o.link" "$o" && rm -f "$o.link"
}
$GO -C bench build -o "$out/lwbench" ./lwbench
# Start-up baselines, static like leasewrap: an empty program, one that
# only parses a two-verb kong model, one that only runs a child.
benchbuild "$out/empty" -trimpath -ldflags '-s -w' ./startup/empty
benchbuild "$out/kong2" -trimpath -ldflags '-s -w' ./startup/kong2
benchbuild "$out/gorun" -trimpath -ldflags '-s -w' ./startup/gorun
# Each kind's floor: its protocol work through leasewrap's lease package in
# the smallest Go program that forwards signals (bench/startup/floor).
for k in flock claim session reserve; do
  benchbuild "$out/floor$k" -trimpath -ldflags '-s -w' ./startup/floor$k
done

# The seeds' drivers, release builds (the harnesses' own sources and offline
# crate registry; see .ci/rust-harnesses.sh).
seedargs=()
if bash .ci/rust-harnesses.sh >&2; then
  cargo=${CARGO:-$HOME/.cargo/bin/cargo}
  for h in claim/testdata/claimcheck:claimrs reserve/testdata/reservecheck:reservers session/testdata/seedcheck:seedrs; do
    d=lease/${h%%:*} name=${h##*:}
    if [ -x "$cargo" ] && [ -f "$d/.cargo/config.toml" ] && (cd "$d" && "$cargo" build --release --quiet) >&2; then
      seedargs+=(-"$name" "$d/target/release/$name")
    fi
  done
fi

n=${BENCH_N:-200}
args=(-bin "$bin" -empty "$out/empty" -kong2 "$out/kong2" -gorun "$out/gorun" -floors "$out" -n "$n" "${seedargs[@]}")
if [ -n "${BENCH_SECTIONS:-}" ]; then
  args+=(-sections "$BENCH_SECTIONS")
fi
benchtime=${BENCH_TIME:-2s}
# BENCH_COMPARE=path/to/older/leasewrap: its run verbs are measured in the
# same start-up rounds (a before/after the machine's drift cannot skew).
# It is copied into place like ours, so both start from the page cache alike.
if [ -n "${BENCH_COMPARE:-}" ]; then
  mkdir -p "$out/compare"
  cp "$BENCH_COMPARE" "$out/compare/leasewrap.new" && mv -f "$out/compare/leasewrap.new" "$out/compare/leasewrap"
  args+=(-compare "$out/compare/leasewrap")
fi
if [ -n "${BENCH_QUICK:-}" ]; then
  args+=(-quick -honest 0)
  benchtime=0.5s
fi

report="$out/report.md"
{
  echo "# leasewrap benchmarks"
  echo
  echo "Commit $(git describe --always --dirty 2>/dev/null || echo unknown); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); kernel $(uname -r); $($GO version)."
  echo
  if [ -z "${BENCH_SECTIONS:-}" ]; then
    echo "## In-process acquire/release (go test -bench, -benchmem)"
    echo
    echo '```'
    $GO test -run '^$' -bench . -benchmem -benchtime "$benchtime" -count 1 \
      ./lease/claim ./lease/reserve ./lease/session 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' || true
    echo '```'
    echo
    bench/strace.sh "$bin"
    echo
    echo "## --listen under load (bench/healthload: probes with 1,000 slow or idle connections open, and under a flood)"
    echo
    echo '```'
    phase=5s; [ -n "${BENCH_QUICK:-}" ] && phase=2s
    $GO -C bench run ./healthload -leasewrap "$bin" -phase "$phase" 2>&1 || true
    echo '```'
    echo
  fi
  "$out/lwbench" "${args[@]}"
} | tee "$report"
echo "report: $report" >&2
