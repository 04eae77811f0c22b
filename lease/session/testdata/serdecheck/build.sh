#!/bin/sh
# Builds serdecheck (serde_json on the seed's SessionLeaseOwner struct)
# offline from Debian's packaged crates. Normally run by
# .ci/rust-harnesses.sh (make harnesses), which also installs the crates.
# See .ci/harness-common.sh (CARGO names cargo).
set -eu
here=$(dirname "$0")
. "$here/../../../../.ci/harness-common.sh"
harness_build "$here"
