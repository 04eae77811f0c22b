#!/usr/bin/env bash
# CI for the kube kind (called from .ci/run, before `make test`, whose
# test-kube target runs the kube/ packages' tests against a real API
# server): installs Debian's etcd (no daemon of its own), builds
# kube-apiserver v1.37.2 into its cache directory or reuses the binary there
# (cold: docs/DEVELOPMENT.md has the time; warm: a stat), then vets the
# benchmark's build tag and checks that the test-only apiserver module stays
# out of the product's module graph. A missing prerequisite is a failure
# here, and the tests never skip under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash etcd/scripts/install-etcd.sh
start=$(date +%s)
bin=$(bash kube/scripts/build-apiserver.sh)
echo "kube-apiserver: $bin ($(( $(date +%s) - start ))s)"
# The benchmark (make bench-kube) is built only with -tags kubebench; it is
# vetted and checked with that tag too, so it cannot rot unseen (.ci/run
# checks the rest of kube/ with the whole module).
go vet -tags kubebench ./kube/cmd/leasewrap-kube/
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags kubebench ./kube/cmd/leasewrap-kube/
# The apiserver module only pins k8s.io/kubernetes and its staging
# modules; it must stay outside the product's module graph.
if go list -m all | grep -q '^k8s.io/kubernetes '; then
  echo "the module graph of github.com/leasewrap/leasewrap holds k8s.io/kubernetes (only kube/apiserver may require it)"; exit 1
fi
