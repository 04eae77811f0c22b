#!/usr/bin/env bash
# CI for the release (called from .ci/run). First the release exactly as
# docs/RELEASING.md cuts it, in a fresh clone of this commit (with the
# tree's uncommitted changes committed on top) and a throwaway git identity
# (GIT_CONFIG_GLOBAL): git tag -a, make release, the SHA256SUMS check, git
# push of the tag to a local bare remote; the artifacts must carry the
# tag's version. Then make release again and compare (reproducible), and
# use each artifact the way README's "Install" section says, failing
# (never skipping) where a step cannot run:
#   - the .deb and .rpm declare Apache-2.0 and recommend bash-completion,
#     and carry LICENSE (as copyright) and NOTICE; the SBOMs name the
#     license;
#   - the .deb: dpkg -i; leasewrap flock run from /usr/bin under cron's
#     environment (env -i PATH=/usr/bin:/bin); man leasewrap renders; the
#     bash completion completes; dpkg --purge leaves none of its files;
#   - the .rpm: rpm -qlp lists what it installs;
#   - the tarball: holds the executables, man pages, README, LICENSE and
#     NOTICE;
#   - the image: its root filesystem (podman create + podman export; podman
#     run fails on this VM's rlimits) runs /leasewrap as PID 1 of a fresh
#     PID namespace (unshare --pid --fork --mount-proc, chroot): the job's
#     exit code kept, SIGTERM forwarded, an orphan reaped; LICENSE and
#     NOTICE in /usr/share/doc/leasewrap;
#   - examples/kubernetes/Dockerfile builds (packaging/kube-example.sh).
# Needs root (dpkg, unshare, chroot); installs podman, rpm, man-db and
# busybox-static (a shell for the job inside the image's root filesystem).
set -euo pipefail
cd "$(dirname "$0")/.."
need() { command -v "$1" >/dev/null 2>&1; }
missing=()
need podman || missing+=(podman)
need rpm || missing+=(rpm)
need man || missing+=(man-db)
[ -x /bin/busybox ] && /bin/busybox --list | grep -qx sh || missing+=(busybox-static)
need unshare || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
fail() { echo "packaging/ci.sh: $*" >&2; exit 1; }
work=$(mktemp -d)
cleanup() {
  [ -z "${ctr:-}" ] || podman rm -f "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The clone: this commit, plus what the tree changes (a developer's run
# tests what they have; in CI the tree is clean), and its remote a bare
# repository here. The next release version after the tags there.
src=$(pwd)
clone=$work/clone
git clone -q "$src" "$clone"
git -C "$clone" fetch -q "$src" HEAD
git -C "$clone" checkout -q --detach FETCH_HEAD
git init -q --bare "$work/origin.git"
git -C "$clone" remote set-url origin "$work/origin.git"
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
  if [ -e "$f" ] || [ -L "$f" ]; then mkdir -p "$clone/$(dirname "$f")"; cp -a "$f" "$clone/$f"; else rm -f "$clone/$f"; fi
done
export GIT_CONFIG_GLOBAL=$work/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --file "$GIT_CONFIG_GLOBAL" user.name "Release Check"
git config --file "$GIT_CONFIG_GLOBAL" user.email release-check@localhost
cd "$clone"
if [ -n "$(git status --porcelain)" ]; then git add -A && git commit -q -m "the tree under test"; fi
last=$(git tag --list 'v[0-9]*.[0-9]*.[0-9]*' --sort=-v:refname | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1 || true)
if [ -z "$last" ]; then rv=v0.1.0; else rv=${last%.*}.$(( ${last##*.} + 1 )); fi

# docs/RELEASING.md, "Cutting a release", steps 1 to 4 (origin: the bare remote).
git tag -a "$rv" -m "leasewrap $rv"
start=$(date +%s)
make release
echo "make release: $(( $(date +%s) - start ))s"
(cd dist && sha256sum -c SHA256SUMS)
git push -q origin "$rv"
[ "$(git -C "$work/origin.git" rev-parse "$rv^{commit}")" = "$(git rev-parse HEAD)" ] || fail "git push origin $rv: the remote has no tag $rv at HEAD"
[ -z "$(git status --porcelain)" ] || fail "the release left the clone changed: $(git status --porcelain)"

arch=$(go env GOARCH)
v=${rv#v}
tgz=dist/leasewrap_${v}_linux_$arch.tar.gz
[ -s "$tgz" ] || fail "make release at tag $rv wrote no $tgz: $(ls dist)"
tar -xzf "$tgz" -C "$work" "leasewrap_${v}_linux_$arch/leasewrap"
have=$("$work/leasewrap_${v}_linux_$arch/leasewrap" --version)
case $have in
  "leasewrap $rv (commit $(git rev-parse HEAD),"*) echo "release $rv: $have" ;;
  *) fail "the released leasewrap at tag $rv says: $have" ;;
esac

# The same commit again: byte-identical.
start=$(date +%s)
make release DIST="$work/dist2" >/dev/null
echo "make release (again): $(( $(date +%s) - start ))s"
if ! diff dist/SHA256SUMS "$work/dist2/SHA256SUMS"; then
  fail "two make release runs from one commit differ (above)"
fi
echo "reproducible: $(wc -l <dist/SHA256SUMS) artifacts byte-identical"

deb=dist/leasewrap_${v}_linux_$arch.deb
rpmf=dist/leasewrap_${v}_linux_$arch.rpm
oci=dist/leasewrap_${v}_linux_$arch.oci.tar
for f in "$deb" "$rpmf" "$tgz" "$oci" "dist/leasewrap_${v}_linux_arm64.tar.gz" "dist/leasewrap_${v}.cdx.json" "dist/leasewrap-etcd_${v}.cdx.json" "dist/leasewrap-kube_${v}.cdx.json" "dist/leasewrap-pg_${v}.cdx.json"; do
  [ -s "$f" ] || fail "make release wrote no $f"
done

# The license and the recommended bash-completion, declared in each
# package; the SBOMs name leasewrap's license.
[ "$(dpkg-deb -f "$deb" License)" = Apache-2.0 ] || fail "$deb: License field: have '$(dpkg-deb -f "$deb" License)'"
dpkg-deb -f "$deb" Recommends | grep -qw bash-completion || fail "$deb: Recommends has no bash-completion: '$(dpkg-deb -f "$deb" Recommends)'"
[ "$(rpm -qp --qf '%{LICENSE}' "$rpmf")" = Apache-2.0 ] || fail "$rpmf: License: have '$(rpm -qp --qf '%{LICENSE}' "$rpmf")'"
rpm -qp --recommends "$rpmf" | grep -qw bash-completion || fail "$rpmf: recommends no bash-completion"
for f in dist/*.cdx.json; do
  grep -q '^      "licenses": \[{"license": {"id": "Apache-2.0"}}\],$' "$f" || fail "$f declares no Apache-2.0 for leasewrap"
done
echo "packages: License Apache-2.0, Recommends bash-completion"

# make install and make uninstall (DESTDIR): uninstall leaves nothing.
stage=$work/stage
make install PREFIX=/usr DESTDIR="$stage" >/dev/null
for f in usr/bin/leasewrap usr/bin/leasewrap-etcd usr/bin/leasewrap-kube usr/bin/leasewrap-pg usr/share/man/man1/leasewrap.1 \
  usr/share/bash-completion/completions/leasewrap usr/share/zsh/site-functions/_leasewrap usr/share/fish/vendor_completions.d/leasewrap.fish; do
  [ -s "$stage/$f" ] || fail "make install put no /$f"
done
make uninstall PREFIX=/usr DESTDIR="$stage" >/dev/null
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "make install, uninstall: nothing left"

# The tarball.
tar -tzf "$tgz" >"$work/tar.list"
for f in leasewrap leasewrap-etcd leasewrap-kube leasewrap-pg man/leasewrap.1 man/leasewrap-flock.1 man/leasewrap-pg.1 completions/leasewrap.bash README.md LICENSE NOTICE; do
  grep -qx "leasewrap_${v}_linux_$arch/$f" "$work/tar.list" || fail "$tgz has no $f"
done

# The .rpm: what it installs.
rpm -qlp "$rpmf" >"$work/rpm.list"
cat "$work/rpm.list"
for f in /usr/bin/leasewrap /usr/bin/leasewrap-etcd /usr/bin/leasewrap-kube /usr/bin/leasewrap-pg /usr/share/man/man1/leasewrap.1.gz /usr/share/man/man1/leasewrap-pg.1.gz /usr/share/doc/leasewrap/README.md /usr/share/doc/leasewrap/copyright /usr/share/doc/leasewrap/NOTICE; do
  grep -qx "$f" "$work/rpm.list" || fail "rpm -qlp $rpmf lists no $f"
done

# The .deb: install, run under cron's environment, man, completion, purge.
if dpkg -s leasewrap >/dev/null 2>&1; then fail "leasewrap is installed already; CI installs it from the .deb"; fi
dpkg -i "$deb"
dpkg -L leasewrap | sort >"$work/deb.list"
out=$(env -i PATH=/usr/bin:/bin sh -c "leasewrap flock run $work/cron.lock -- sh -c 'echo ran under \$LEASEWRAP_KIND'")
[ "$out" = "ran under flock" ] || fail "leasewrap flock run under cron's PATH: have $out"
env -i PATH=/usr/bin:/bin leasewrap --version
env -i PATH=/usr/bin:/bin leasewrap lock --version | grep -q '^leasewrap-etcd v' || fail "leasewrap lock --version: leasewrap-etcd not found beside leasewrap"
env -i PATH=/usr/bin:/bin leasewrap kube --version | grep -q '^leasewrap-kube v' || fail "leasewrap kube --version: leasewrap-kube not found beside leasewrap"
env -i PATH=/usr/bin:/bin leasewrap pg --version | grep -q '^leasewrap-pg v' || fail "leasewrap pg --version: leasewrap-pg not found beside leasewrap"
env -i PATH=/usr/bin:/bin leasewrap pg --help >"$work/pg-help.txt" 2>&1 || { cat "$work/pg-help.txt"; fail "leasewrap pg --help from the .deb"; }
grep -q "pg run" "$work/pg-help.txt" || { cat "$work/pg-help.txt"; fail "leasewrap pg --help: no 'pg run' in it"; }
MANWIDTH=80 man leasewrap >"$work/man.txt" 2>&1 || { cat "$work/man.txt"; fail "man leasewrap"; }
grep -q "flock run" "$work/man.txt" || fail "man leasewrap: no flock run in the rendered page"
MANWIDTH=80 man leasewrap-flock >"$work/man-flock.txt" 2>&1 || { cat "$work/man-flock.txt"; fail "man leasewrap-flock"; }
grep -q -e "--wait" "$work/man-flock.txt" || fail "man leasewrap-flock: no --wait in the rendered page"
echo "man leasewrap: $(wc -l <"$work/man.txt") lines"
for f in /usr/share/bash-completion/completions/leasewrap /usr/share/zsh/vendor-completions/_leasewrap /usr/share/fish/vendor_completions.d/leasewrap.fish; do
  [ -s "$f" ] || fail "the .deb has no $f"
done
words=$(bash -c 'source /usr/share/bash-completion/completions/leasewrap
  COMP_WORDS=(leasewrap fl); COMP_CWORD=1; COMP_LINE="leasewrap fl"; COMP_POINT=${#COMP_LINE}
  f=$(complete -p leasewrap | sed -n "s/.*-F \([^ ]*\).*/\1/p"); "$f" leasewrap fl leasewrap; echo "${COMPREPLY[*]}"')
[ "$words" = flock ] || fail "bash completion of 'leasewrap fl' from the .deb: want flock, have '$words'"
echo "bash completion: leasewrap fl -> $words"
dpkg --purge leasewrap
while read -r f; do
  [ "$f" = /. ] || [ -d "$f" ] || [ ! -e "$f" ] || fail "dpkg --purge left $f"
done <"$work/deb.list"
[ ! -e /usr/share/doc/leasewrap ] || fail "dpkg --purge left /usr/share/doc/leasewrap"
echo "deb: installed, ran, purged"

# The image, run as PID 1 from its exported root filesystem.
img=$(podman load -q -i "$oci" | sed -n 's/^Loaded image: //p' | tail -n 1)
[ -n "$img" ] || fail "podman load $oci"
ctr=$(podman create "$img")
rootfs=$work/rootfs
mkdir -p "$rootfs"
podman export "$ctr" | tar -x -C "$rootfs"
ls -l "$rootfs"
for f in leasewrap leasewrap-etcd leasewrap-kube leasewrap-pg; do [ -x "$rootfs/$f" ] || fail "the image has no /$f"; done
for f in LICENSE NOTICE; do [ -s "$rootfs/usr/share/doc/leasewrap/$f" ] || fail "the image has no /usr/share/doc/leasewrap/$f"; done
# A shell for the jobs (not part of the image), /proc, /tmp, /dev/null.
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/tmp" "$rootfs/dev"
cp /bin/busybox "$rootfs/bin/busybox"
mknod -m 666 "$rootfs/dev/null" c 1 3
pid1() { unshare --pid --fork --mount-proc="$rootfs/proc" chroot "$rootfs" /leasewrap "$@"; }
code=0; pid1 flock run /tmp/l -- /bin/busybox sh -c 'exit 7' || code=$?
[ "$code" = 7 ] || fail "as PID 1: want the job's exit code 7, have $code"
# An orphan that exits while the job runs: PID 1 reaps it (no zombie left
# in the namespace), and the job's status still comes back.
code=0
out=$(pid1 flock run /tmp/l -- /bin/busybox sh -c '
  /bin/busybox sh -c "/bin/busybox sh -c \"echo ran >/tmp/orphan\" &"
  /bin/busybox sleep 1
  read -r comm </proc/1/comm; z=0
  for f in /proc/[0-9]*/stat; do read -r s <$f 2>/dev/null || continue; case $s in *") Z "*) z=$((z+1));; esac; done
  echo "pid1=$comm orphan=$(/bin/busybox cat /tmp/orphan) zombies=$z"; exit 5') || code=$?
echo "$out"
[ "$code" = 5 ] || fail "as PID 1 with an orphan: want the job's 5, have $code"
[ "$out" = "pid1=leasewrap orphan=ran zombies=0" ] || fail "as PID 1: want the orphan reaped by leasewrap, have: $out"
# SIGTERM to PID 1 reaches the job, whose own exit code comes back.
unshare --pid --fork --mount-proc="$rootfs/proc" chroot "$rootfs" /leasewrap flock run /tmp/l -- \
  /bin/busybox sh -c 'trap "exit 42" TERM; echo ready >/tmp/ready; while :; do /bin/busybox sleep 0.05; done' &
upid=$!
for _ in $(seq 100); do [ -e "$rootfs/tmp/ready" ] && break; sleep 0.1; done
[ -e "$rootfs/tmp/ready" ] || fail "as PID 1: the job never started"
lw=$(cat "/proc/$upid/task/$upid/children") # unshare --fork's child: PID 1 inside
kill -TERM "$lw"
for _ in $(seq 100); do kill -0 "$upid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$upid" 2>/dev/null; then kill -KILL "$lw"; fail "as PID 1: SIGTERM not forwarded (still running after 10 s)"; fi
code=0; wait "$upid" || code=$?
[ "$code" = 42 ] || fail "as PID 1: want SIGTERM forwarded and the job's 42 back, have $code"
echo "image: PID 1 keeps the exit code, reaps orphans, forwards SIGTERM"

# The kube example's Dockerfile, built the same way (podman; a local
# stand-in for its golang base image: packaging/kube-example.sh).
bash packaging/kube-example.sh
