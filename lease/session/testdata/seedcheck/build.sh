#!/bin/sh
# Builds the seed's own lease.rs (bcode_session, from the seeds directory)
# with a SessionId stand-in, offline from Debian's packaged crates:
#   apt-get install librust-serde-json-dev librust-serde-derive-dev librust-thiserror-dev
#   ./build.sh /work/shared/seeds/004_f5dade5c971979c7.txt
# then: LEASEWRAP_SEEDRS=$PWD/target/debug/seedrs go test -run Seed ./lease/session/
set -eu
seed=${1:?seed file}
cd "$(dirname "$0")"
mkdir -p .cargo
cat > .cargo/config.toml <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
awk 'NR>=3' "$seed" |
  sed 's/^use bcode_session_models::SessionId;/use crate::models::SessionId;/; s/bcode_session_models::CURRENT_SESSION_STORAGE_WRITER_EPOCH/6/' > src/lease.rs
cargo build
