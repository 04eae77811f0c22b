#!/usr/bin/env bash
# CI for the release artifacts (called from .ci/run): make release twice
# and compare (reproducible), then use each artifact the way README's
# "Install" section says, failing (never skipping) where a step cannot run:
#   - the .deb: dpkg -i; leasewrap flock run from /usr/bin under cron's
#     environment (env -i PATH=/usr/bin:/bin); man leasewrap renders; the
#     bash completion completes; dpkg --purge leaves none of its files;
#   - the .rpm: rpm -qlp lists what it installs;
#   - the tarball: holds the executables, man pages and README;
#   - the image: its root filesystem (podman create + podman export; podman
#     run fails on this VM's rlimits) runs /leasewrap as PID 1 of a fresh
#     PID namespace (unshare --pid --fork --mount-proc, chroot): the job's
#     exit code kept, SIGTERM forwarded, an orphan reaped;
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

# Two releases from the same commit: byte-identical.
start=$(date +%s)
make release
echo "make release: $(( $(date +%s) - start ))s"
start=$(date +%s)
make release DIST="$work/dist2" >/dev/null
echo "make release (again): $(( $(date +%s) - start ))s"
if ! diff dist/SHA256SUMS "$work/dist2/SHA256SUMS"; then
  fail "two make release runs from one commit differ (above)"
fi
echo "reproducible: $(wc -l <dist/SHA256SUMS) artifacts byte-identical"
(cd dist && sha256sum -c --quiet SHA256SUMS)

arch=$(go env GOARCH)
v=$(sh packaging/version.sh); v=${v#v}
deb=dist/leasewrap_${v}_linux_$arch.deb
rpmf=dist/leasewrap_${v}_linux_$arch.rpm
tgz=dist/leasewrap_${v}_linux_$arch.tar.gz
oci=dist/leasewrap_${v}_linux_$arch.oci.tar
for f in "$deb" "$rpmf" "$tgz" "$oci" "dist/leasewrap_${v}_linux_arm64.tar.gz" "dist/leasewrap_${v}.cdx.json" "dist/leasewrap-etcd_${v}.cdx.json" "dist/leasewrap-kube_${v}.cdx.json"; do
  [ -s "$f" ] || fail "make release wrote no $f"
done

# make install and make uninstall (DESTDIR): uninstall leaves nothing.
stage=$work/stage
make install PREFIX=/usr DESTDIR="$stage" >/dev/null
for f in usr/bin/leasewrap usr/bin/leasewrap-etcd usr/bin/leasewrap-kube usr/share/man/man1/leasewrap.1 \
  usr/share/bash-completion/completions/leasewrap usr/share/zsh/site-functions/_leasewrap usr/share/fish/vendor_completions.d/leasewrap.fish; do
  [ -s "$stage/$f" ] || fail "make install put no /$f"
done
make uninstall PREFIX=/usr DESTDIR="$stage" >/dev/null
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "make install, uninstall: nothing left"

# The tarball.
tar -tzf "$tgz" >"$work/tar.list"
for f in leasewrap leasewrap-etcd leasewrap-kube man/leasewrap.1 man/leasewrap-flock.1 completions/leasewrap.bash README.md; do
  grep -qx "leasewrap_${v}_linux_$arch/$f" "$work/tar.list" || fail "$tgz has no $f"
done

# The .rpm: what it installs.
rpm -qlp "$rpmf" >"$work/rpm.list"
cat "$work/rpm.list"
for f in /usr/bin/leasewrap /usr/bin/leasewrap-etcd /usr/bin/leasewrap-kube /usr/share/man/man1/leasewrap.1.gz /usr/share/doc/leasewrap/README.md; do
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
for f in leasewrap leasewrap-etcd leasewrap-kube; do [ -x "$rootfs/$f" ] || fail "the image has no /$f"; done
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
