#!/bin/sh
# Builds the reservation seed's own code (orchestratectl idempotency.rs) plus the
# fs4 and octl_core shims, offline from Debian's packaged crates. Normally run by
# .ci/rust-harnesses.sh (make harnesses), which also installs the crates:
#   ./build.sh SEEDS/000_*.txt
# CARGO names cargo (default: ~/.cargo/bin/cargo; Debian's 1.63 is too old).
set -eu
seed=${1:?seed file (000_*.txt)}
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
# The seed file is "name version", a blank line, then the Rust module.
tail -n +3 "$seed" > src/idempotency.rs.new
# Replace only on change, so that a warm build is a no-op for cargo.
if cmp -s src/idempotency.rs.new src/idempotency.rs; then rm src/idempotency.rs.new; else mv src/idempotency.rs.new src/idempotency.rs; fi
"${CARGO:-$HOME/.cargo/bin/cargo}" build --quiet
