#!/bin/sh
# Builds the claims seed's own code (fno-agents claims.rs) plus the
# serde_yaml_ng shim, offline from Debian's packaged crates. Normally run by
# .ci/rust-harnesses.sh (make harnesses), which also installs the crates:
#   ./build.sh SEEDS/003_*.txt
# See .ci/harness-common.sh (CARGO names cargo).
set -eu
here=$(dirname "$0")
. "$here/../../../../.ci/harness-common.sh"
harness_build "$here" "${1:?seed file (003_*.txt)}" src/claims.rs
