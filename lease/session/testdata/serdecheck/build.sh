#!/bin/sh
# Builds serdecheck (serde_json on the seed's SessionLeaseOwner struct)
# offline from Debian's packaged crates. Normally run by
# .ci/rust-harnesses.sh (make harnesses), which also installs the crates.
# CARGO names cargo (default: ~/.cargo/bin/cargo).
set -eu
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
"${CARGO:-$HOME/.cargo/bin/cargo}" build --quiet
