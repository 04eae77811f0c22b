#!/usr/bin/env bash
# Builds Kubernetes' kube-apiserver (k8s.io/kubernetes v1.37.2, through the Go
# module proxy) from the test-only module kube/apiserver into a cache
# directory and prints the binary's path. A binary already there is reused,
# so a warm run costs a stat; a cold build took 786 s and 1,549 s on 2 busy
# cores (and about 1 GB of Go build cache).
#
#   LEASEWRAP_KUBE_APISERVER_DIR  cache directory (default
#                                 ${XDG_CACHE_HOME:-$HOME/.cache}/leasewrap/kube-apiserver-v1.37.2)
#   LEASEWRAP_KUBE_APISERVER_REBUILD=1   build even when the binary is present
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod=$(cd "$here/../apiserver" && pwd)
version=v1.37.2
dir=${LEASEWRAP_KUBE_APISERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/leasewrap/kube-apiserver-$version}
bin=$dir/kube-apiserver
if [ -x "$bin" ] && [ "${LEASEWRAP_KUBE_APISERVER_REBUILD:-}" != 1 ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
cd "$mod"
start=$(date +%s)
echo "build-apiserver: building kube-apiserver $version from source for the kube tests, once, into $dir" >&2
echo "build-apiserver: (cold: 13 to 26 minutes measured on 2 busy cores, and 1 GB of Go build cache; later runs reuse it)" >&2
# go.mod pins k8s.io/kubernetes and its staging modules (which it requires at
# v0.0.0: one replace each to v0.37.2); go.sum checks them. go build -v names
# each package it compiles: counted every 30 s as progress, shown whole on
# failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Its own module, test infrastructure outside the product's requirements
# (GOWORK=off: no workspace a developer set up reaches it).
GOWORK=off go build -v -trimpath -o "$bin.tmp" . 2>"$log" &
build=$!
while kill -0 "$build" 2>/dev/null; do
  for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
  if kill -0 "$build" 2>/dev/null; then
    echo "build-apiserver: $(grep -vc '^#' "$log") packages compiled, $(( $(date +%s) - start ))s" >&2
  fi
done
if ! wait "$build"; then
  cat "$log" >&2
  exit 1
fi
mv -f "$bin.tmp" "$bin"
echo "build-apiserver: built $bin in $(( $(date +%s) - start ))s" >&2
echo "$bin"
