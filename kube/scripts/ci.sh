#!/usr/bin/env bash
# CI for the kube kind (called from .ci/run, before `make test`, whose
# test-kube target runs the kube module's tests against a real API server):
# installs Debian's etcd (no daemon of its own), builds kube-apiserver
# v1.37.2 into its cache directory or reuses the binary there (cold: about
# 5 minutes on 2 cores; warm: a stat), then holds the kube module and the
# test-only apiserver module to the same static checks as the others. A
# missing prerequisite is a failure here, and the tests never skip under
# CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash etcd/scripts/install-etcd.sh
start=$(date +%s)
bin=$(bash kube/scripts/build-apiserver.sh)
echo "kube-apiserver: $bin ($(( $(date +%s) - start ))s)"
# The benchmark (make bench-kube) is built only with -tags kubebench; it is
# vetted and checked with that tag too, so it cannot rot unseen. (go.mod
# tidiness: packaging/tidy.sh, from .ci/run.)
(cd kube && go vet ./... && go vet -tags kubebench ./cmd/leasewrap-kube/ \
  && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... \
  && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags kubebench ./cmd/leasewrap-kube/)
# The apiserver module only pins k8s.io/kubernetes and its staging
# modules; it must stay outside every product module's requirements.
for m in go.mod etcd/go.mod kube/go.mod; do
  if grep -q 'k8s.io/kubernetes ' "$m"; then echo "$m requires k8s.io/kubernetes (only kube/apiserver may)"; exit 1; fi
done
