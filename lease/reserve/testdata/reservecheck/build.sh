#!/bin/sh
# Builds the reservation seed's own code (orchestratectl idempotency.rs) plus the
# fs4 and octl_core shims, offline from Debian's packaged crates. Normally run by
# .ci/rust-harnesses.sh (make harnesses), which also installs the crates:
#   ./build.sh SEEDS/000_*.txt
# See .ci/harness-common.sh (CARGO names cargo).
set -eu
here=$(dirname "$0")
. "$here/../../../../.ci/harness-common.sh"
harness_build "$here" "${1:?seed file (000_*.txt)}" src/idempotency.rs
