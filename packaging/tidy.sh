#!/usr/bin/env bash
# `go mod tidy -diff` for the sibling modules (etcd, kube). Their go.mod
# requires the root module at a release and carries no replace directive
# (so that `go install …@VERSION` works), and go mod tidy ignores go.work:
# it would fetch that release instead of reading this tree. So tidy runs on
# a copy of go.mod and go.sum with the workspace's replace added (-modfile),
# and the copy, replace dropped again, must equal the committed files
# (lines for the root module itself aside: a replaced module has none).
# With -w, the copy is written back instead (after editing imports).
set -euo pipefail
cd "$(dirname "$0")/.."
write=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for m in etcd kube; do
  cp "$m/go.mod" "$tmp/go.mod"
  cp "$m/go.sum" "$tmp/go.sum"
  req=$(awk '$1 == "github.com/leasewrap/leasewrap" {print $2}' "$m/go.mod")
  go mod edit -modfile="$tmp/go.mod" -replace "github.com/leasewrap/leasewrap@$req=../"
  (cd "$m" && GOWORK=off GOFLAGS=-mod=mod go mod tidy -modfile="$tmp/go.mod")
  go mod edit -modfile="$tmp/go.mod" -dropreplace "github.com/leasewrap/leasewrap@$req"
  # The root module's own lines back in their place (go.sum is sorted by
  # module path).
  grep '^github.com/leasewrap/leasewrap ' "$m/go.sum" >"$tmp/root.sum" || true
  awk -v rootsum="$tmp/root.sum" '
    !done && $1 > "github.com/leasewrap/leasewrap" { while ((getline l < rootsum) > 0) print l; done = 1 }
    { print }
    END { if (!done) while ((getline l < rootsum) > 0) print l }' "$tmp/go.sum" >"$tmp/go.sum.new"
  mv "$tmp/go.sum.new" "$tmp/go.sum"
  if [ "$write" = -w ]; then
    cp "$tmp/go.mod" "$m/go.mod"
    cp "$tmp/go.sum" "$m/go.sum"
  elif ! diff -u "$m/go.mod" "$tmp/go.mod" || ! diff -u "$m/go.sum" "$tmp/go.sum"; then
    echo "$m: go.mod/go.sum are not tidy; run bash packaging/tidy.sh -w" >&2
    status=1
  fi
done
exit $status
