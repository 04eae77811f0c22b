#!/usr/bin/env bash
# Builds the Rust interop harnesses: the seeds' own code (and, where Debian
# lacks a crate, small shims) that the *Seed*Interop and serde differential
# tests run against leasewrap. Each lands in its package's
# testdata/<harness>/target/debug/, where the tests look for it.
#
# Toolchain: ~/.cargo/bin/cargo (the machine image's rustup toolchain;
# Debian's cargo 1.63 is too old for the seeds: edition 2024, File::lock).
# Crates: Debian's librust-*-dev sources under /usr/share/cargo/registry,
# used as an offline directory registry; installed here with apt-get when
# missing. Seeds: $LEASEWRAP_SEEDS, else ../shared/seeds or ../../shared/seeds
# beside the repository.
#
# Under CI (env CI set) anything missing is an error; elsewhere the script
# says what is missing and exits 0, and the interop tests skip.
# Idempotent: a second run installs nothing and cargo rebuilds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

missing() {
  if [ -n "${CI:-}" ]; then
    echo "rust-harnesses: $*" >&2
    exit 1
  fi
  echo "rust-harnesses: $*; the Rust interop tests (*SeedInterop, the serde differential tests) will skip here (under CI=true this is an error)" >&2
  exit 0
}

export CARGO=${CARGO:-$HOME/.cargo/bin/cargo}
[ -x "$CARGO" ] || missing "no Rust toolchain at $CARGO (expected from the machine image's rustup; set CARGO to a cargo >= 1.89)"

seeds=${LEASEWRAP_SEEDS:-}
if [ -z "$seeds" ]; then
  for d in "$repo/../shared/seeds" "$repo/../../shared/seeds"; do
    if [ -d "$d" ]; then seeds=$(cd "$d" && pwd); break; fi
  done
fi
[ -n "$seeds" ] && [ -d "$seeds" ] || missing "no seeds directory: the seeds are the original Rust implementations of the claims, reservation and session protocols (shared/seeds/*.txt, not part of this repository), which the interop tests run leasewrap against; set LEASEWRAP_SEEDS=DIR, or put shared/seeds beside the repository"
seed() {
  local f
  for f in "$seeds/$1"_*.txt; do
    [ -f "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}
s000=$(seed 000) || missing "no seed 000_*.txt (reservations) in $seeds"
s003=$(seed 003) || missing "no seed 003_*.txt (claims) in $seeds"
s004=$(seed 004) || missing "no seed 004_*.txt (sessions) in $seeds"

pkgs=(librust-serde-dev librust-serde-derive-dev librust-serde-json-dev librust-thiserror-dev
  librust-serde-yaml-dev librust-libc-dev librust-chrono-dev)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "rust-harnesses: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; }; then
    missing "could not install ${need[*]} with apt-get"
  fi
fi

t0=$SECONDS
lease/session/testdata/serdecheck/build.sh
lease/session/testdata/seedcheck/build.sh "$s004"
lease/claim/testdata/claimcheck/build.sh "$s003"
lease/reserve/testdata/reservecheck/build.sh "$s000"
echo "rust-harnesses: built in $((SECONDS - t0))s"
