#!/usr/bin/env bash
# CI for the etcd kinds (called from .ci/run): installs Debian's etcd-server
# and etcd-client without letting the package start a daemon of its own on
# the default port, then runs the interoperability check against etcdctl
# lock (the etcd module's tests are part of `make test`). Run it before
# `make test` on a fresh machine. A missing prerequisite is a failure, never
# a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  created=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && created=1
  fi
  apt-get update -qq && apt-get install -y -qq etcd-server etcd-client >/dev/null
  [ -z "$created" ] || rm -f /usr/sbin/policy-rc.d
  # If a service manager started it anyway, stop it: tests use free ports.
  if command -v systemctl >/dev/null && systemctl is-active --quiet etcd 2>/dev/null; then
    systemctl disable --now etcd || true
  fi
fi
make interop-etcd
