#!/bin/sh
# Builds the seed's own lease.rs (bcode_session, from the seeds directory)
# with a SessionId stand-in, offline from Debian's packaged crates. Normally
# run by .ci/rust-harnesses.sh (make harnesses), which also installs the crates:
#   ./build.sh SEEDS/004_*.txt
# CARGO names cargo (default: ~/.cargo/bin/cargo; Debian's 1.63 is too old).
set -eu
seed=${1:?seed file}
seed=$(cd "$(dirname "$seed")" && pwd)/$(basename "$seed")
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
  sed 's/^use bcode_session_models::SessionId;/use crate::models::SessionId;/; s/bcode_session_models::CURRENT_SESSION_STORAGE_WRITER_EPOCH/6/' > src/lease.rs.new
# Replace only on change, so that a warm build is a no-op for cargo.
if cmp -s src/lease.rs.new src/lease.rs; then rm src/lease.rs.new; else mv src/lease.rs.new src/lease.rs; fi
"${CARGO:-$HOME/.cargo/bin/cargo}" build --quiet
