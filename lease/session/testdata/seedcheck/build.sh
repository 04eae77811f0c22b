#!/bin/sh
# Builds the seed's own lease.rs (bcode_session, from the seeds directory)
# with a SessionId stand-in, offline from Debian's packaged crates. Normally
# run by .ci/rust-harnesses.sh (make harnesses), which also installs the crates:
#   ./build.sh SEEDS/004_*.txt
# See .ci/harness-common.sh (CARGO names cargo).
set -eu
here=$(dirname "$0")
. "$here/../../../../.ci/harness-common.sh"
harness_build "$here" "${1:?seed file (004_*.txt)}" src/lease.rs \
  's/^use bcode_session_models::SessionId;/use crate::models::SessionId;/; s/bcode_session_models::CURRENT_SESSION_STORAGE_WRITER_EPOCH/6/'
