#!/usr/bin/env bash
# packaging/tag-release.sh vX.Y.Z — the release commit and its three tags
# (docs/RELEASING.md). The repository holds three modules; `go install
# github.com/leasewrap/leasewrap/etcd/cmd/leasewrap-etcd@vX.Y.Z` resolves
# the module github.com/leasewrap/leasewrap/etcd at the tag etcd/vX.Y.Z,
# whose go.mod must require the root module at vX.Y.Z (no replace). So:
#   1. etcd/go.mod and kube/go.mod require github.com/leasewrap/leasewrap
#      vX.Y.Z, with its go.sum lines, and etcd/go.work and kube/go.work
#      replace that version by the tree;
#   2. one commit, "leasewrap vX.Y.Z", tagged vX.Y.Z, etcd/vX.Y.Z and
#      kube/vX.Y.Z.
# The go.sum lines are the hashes of the root module's zip, which holds no
# file of etcd/ or kube/ (nested modules): they are computed by the go
# command itself from a temporary tag at HEAD, served from this repository
# (git url.insteadOf) — the same zip proxy.golang.org will make from the
# pushed tag. Nothing is pushed; third-party modules come from the module
# cache first, then GOPROXY.
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: tag-release.sh vX.Y.Z}
if ! printf '%s' "$v" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'; then
  echo "tag-release: $v is not a semantic version vX.Y.Z" >&2; exit 64
fi
if [ -n "$(git status --porcelain)" ]; then echo "tag-release: the tree has uncommitted changes" >&2; exit 1; fi
for t in "$v" "etcd/$v" "kube/$v"; do
  if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then echo "tag-release: tag $t exists" >&2; exit 1; fi
done
repo=$(pwd)
tmp=$(mktemp -d)
trap 'git tag -d "$v" >/dev/null 2>&1 || true; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
git tag "$v" HEAD # temporary: the root module's content at the release
git config --file "$tmp/gitconfig" url."$repo".insteadOf https://github.com/leasewrap/leasewrap
git config --file "$tmp/gitconfig" protocol.file.allow always
cache=$(go env GOMODCACHE)
export GIT_CONFIG_GLOBAL=$tmp/gitconfig GOWORK=off GOPRIVATE=github.com/leasewrap/leasewrap \
  GOMODCACHE=${RELEASE_GOMODCACHE:-$tmp/mod} GOFLAGS=-mod=mod \
  GOPROXY="file://$cache/cache/download,$(go env GOPROXY)"
for m in etcd kube; do
  old=$(awk '$1 == "github.com/leasewrap/leasewrap" {print $2}' "$m/go.mod")
  (cd "$m" && go mod edit -require "github.com/leasewrap/leasewrap@$v" && go mod tidy)
  (cd "$m" && GOWORK= go work edit -dropreplace "github.com/leasewrap/leasewrap@$old" -replace "github.com/leasewrap/leasewrap@$v=../")
done
git tag -d "$v" >/dev/null
git add etcd/go.mod etcd/go.sum etcd/go.work kube/go.mod kube/go.sum kube/go.work
git -c commit.gpgsign=false commit -q -m "leasewrap $v"
for t in "$v" "etcd/$v" "kube/$v"; do git tag -a -m "leasewrap $v" "$t" HEAD; done
echo "tagged $v, etcd/$v, kube/$v at $(git rev-parse HEAD); push with: git push origin HEAD $v etcd/$v kube/$v"
