#!/usr/bin/env bash
# CI for the etcd kinds (called from .ci/run): installs Debian's etcd-server
# and etcd-client without letting the package start a daemon of its own on
# the default port, then runs the interoperability check against etcdctl
# lock (the etcd tests are part of `make test`, suite etcd). Run it before
# `make test` on a fresh machine. A missing prerequisite is a failure, never
# a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash etcd/scripts/install-etcd.sh
make interop-etcd
