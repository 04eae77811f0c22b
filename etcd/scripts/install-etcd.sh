#!/usr/bin/env bash
# Installs Debian's etcd-server and etcd-client when etcd or etcdctl is
# missing, without letting the package start a daemon of its own on the
# default port (tests and demos start their own on free loopback ports).
# Needs root (as CI and the project machines are); idempotent.
set -euo pipefail
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
