#!/bin/sh
# Prints the version make stamps into the executables, in the go command's
# own form, so that a build by make and `go install …@VERSION` of the same
# commit say the same thing:
#   v1.2.0                                   HEAD is the release tag v1.2.0
#   v1.2.1-0.20261202003328-a2af168abcde     a commit after v1.2.0
#   v0.0.0-20261202003328-a2af168abcde       before the first release
# with "+dirty" appended when the tree has uncommitted changes (as go build
# marks vcs.modified). With `commit` as its argument it prints the full
# commit hash instead (with the same "+dirty"). Outside a git checkout it
# prints nothing and the executables fall back to what the go command
# recorded.
set -eu
cd "$(dirname "$0")/.."
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
dirty=
[ -z "$(git status --porcelain 2>/dev/null)" ] || dirty=+dirty
if [ "${1:-}" = commit ]; then
  echo "$(git rev-parse HEAD)$dirty"
  exit 0
fi
# Only release tags count (v1.2.0, not a prerelease), in semantic-version
# order.
tag=$(git tag --merged HEAD --list 'v[0-9]*.[0-9]*.[0-9]*' --sort=-v:refname | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1 || true)
if [ -n "$tag" ] && [ "$(git rev-parse "$tag^{commit}")" = "$(git rev-parse HEAD)" ]; then
  echo "$tag$dirty"
  exit 0
fi
stamp=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
rev=$(git rev-parse --short=12 HEAD)
if [ -z "$tag" ]; then
  echo "v0.0.0-$stamp-$rev$dirty"
else
  patch=${tag##*.}
  echo "${tag%.*}.$((patch + 1))-0.$stamp-$rev$dirty"
fi
