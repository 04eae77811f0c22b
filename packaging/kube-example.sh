#!/usr/bin/env bash
# Builds examples/kubernetes/Dockerfile with podman, as packaging/ci.sh
# builds the release image, and checks the image it makes: leasewrap,
# leasewrap-kube and the program, from its exported root filesystem.
# This machine reaches no container registry, so the Dockerfile's
# `FROM golang:1.26` is served by a stand-in made here from this machine's
# own Go toolchain (the same Go release) and busybox, and `podman build
# --isolation chroot` runs its RUN steps (podman's default runtime fails on
# this VM's rlimits and cgroups), with the module cache mounted (no
# network inside the build) and the build cache.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "packaging/kube-example.sh: $*" >&2; exit 1; }
work=$(mktemp -d)
ctr=
trap '[ -z "$ctr" ] || podman rm -f "$ctr" >/dev/null 2>&1; rm -rf "$work"' EXIT
goroot=$(go env GOROOT)
mkdir -p "$work/base/etc/ssl/certs"
cp -a "$goroot" "$work/base/go"
cp /bin/busybox "$work/base/busybox"
cp /etc/ssl/certs/ca-certificates.crt "$work/base/etc/ssl/certs/"
cat >"$work/base/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY go /usr/local/go
COPY busybox /bin/busybox
COPY etc /etc
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -m 1777 /tmp"]
ENV PATH=/usr/local/go/bin:/bin GOTOOLCHAIN=local HOME=/root GOPROXY=off
DOCKERFILE
podman build -q --isolation chroot --pull=never -t docker.io/library/golang:1.26 "$work/base" >/dev/null
cache=$(go env GOMODCACHE)
podman build --isolation chroot --pull=never -v "$cache:/root/go/pkg/mod" -v "$(go env GOCACHE):/root/.cache/go-build" \
  -f examples/kubernetes/Dockerfile -t localhost/leasewrap-kube-example:ci .
ctr=$(podman create localhost/leasewrap-kube-example:ci)
mkdir -p "$work/rootfs"
podman export "$ctr" | tar -x -C "$work/rootfs"
for f in usr/local/bin/leasewrap usr/local/bin/leasewrap-kube app/serve etc/ssl/certs/ca-certificates.crt; do
  [ -s "$work/rootfs/$f" ] || fail "the example image has no /$f"
done
"$work/rootfs/usr/local/bin/leasewrap" kube --version | grep -q '^leasewrap-kube ' || fail "the example's leasewrap does not run its leasewrap-kube"
echo "examples/kubernetes/Dockerfile: built; /usr/local/bin/leasewrap, leasewrap-kube, /app/serve"
