#!/usr/bin/env bash
# make release: writes dist/ from the committed tree —
#   leasewrap_V_linux_{amd64,arm64}.tar.gz   the static executables, man
#                                            pages, completions, README,
#                                            LICENSE, NOTICE, examples
#   leasewrap_V_linux_{amd64,arm64}.deb/.rpm nfpm; /usr/bin, man, completions,
#                                            /usr/share/doc/leasewrap
#   leasewrap_V_linux_{amd64,arm64}.oci.tar  FROM scratch image (podman)
#   leasewrap{,-etcd,-kube,-pg}_V.cdx.json   CycloneDX SBOM of each executable
#                                            (leasewrap's license declared)
#   SHA256SUMS
# (V is the version without its "v"). Reproducible: two runs from the same
# commit write byte-identical files (-trimpath, an empty build id, every
# time set to the commit's time, SOURCE_DATE_EPOCH; checked by
# packaging/ci.sh). Tools are pinned and run through the module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0
CYCLONEDX=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
ARCHES=${ARCHES:-amd64 arm64}
DIST=${DIST:-dist}
IMAGE=${IMAGE:-1} # 0: no OCI image (a machine without podman)

version=${VERSION:-$(sh packaging/version.sh)}
commit=${COMMIT:-$(sh packaging/version.sh commit)}
[ -n "$version" ] || { echo "release: no version (not a git checkout? set VERSION and COMMIT)" >&2; exit 1; }
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
v=${version#v}
ldflags="-s -w -buildid= -X main.version=$version -X github.com/leasewrap/leasewrap/cli.commit=$commit"
DIST=$(realpath -m "$DIST")
work=$DIST/.work
rm -rf "$DIST"
mkdir -p "$work"
# Every file this script writes gets one mode and one time, whatever the
# umask and the clock.
umask 022

# The executables: leasewrap and the siblings it runs.
cmds="cmd/leasewrap etcd/cmd/leasewrap-etcd kube/cmd/leasewrap-kube pg/cmd/leasewrap-pg"

build() { # arch: the executables into $work/$arch/
  local arch=$1 out=$work/$1 c
  mkdir -p "$out"
  for c in $cmds; do
    GOOS=linux GOARCH=$arch CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$(basename "$c")" "./$c"
  done
}

# stamp FILE...: the commit's time on every file named (and under dirs).
stamp() { find "$@" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +; }

# tarball DIR NAME: a reproducible .tar.gz of DIR's contents under NAME/.
tarball() {
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --mode='u+rwX,go+rX,go-w' --format=gnu -C "$(dirname "$1")" \
    --transform "s|^$(basename "$1")|$2|" -cf - "$(basename "$1")" | gzip -9 -n >"$DIST/$2.tar.gz"
}

# The pinned tools, built once for this machine (GOARCH is the target's
# only inside build()).
tools=$work/tools
for t in "$NFPM" "$CYCLONEDX"; do GOBIN=$tools go install "$t"; done
nfpm=$tools/nfpm cyclonedx=$tools/cyclonedx-gomod

for arch in $ARCHES; do build "$arch"; done
host=$(go env GOARCH)
[ -x "$work/$host/leasewrap" ] || build "$host"
bash packaging/gen-docs.sh "$work/$host/leasewrap" "$work/gen"
# The examples users copy, without the tests that check them.
mkdir -p "$work/examples"
git ls-files examples | grep -v '_test\.go$' | while read -r f; do
  mkdir -p "$work/$(dirname "$f")"; cp -p "$f" "$work/$f"
done

for arch in $ARCHES; do
  name=leasewrap_${v}_linux_$arch
  # The tarball: executables at its top, man/, completions/, README, examples/.
  t=$work/tar-$arch/$name
  mkdir -p "$t"
  cp "$work/$arch"/leasewrap* "$t/"
  cp -r "$work/gen/man" "$t/man"
  cp -r "$work/gen/completions" "$t/completions"
  cp README.md LICENSE NOTICE "$t/"
  cp -r "$work/examples" "$t/examples"
  stamp "$t"
  tarball "$t" "$name"

  # The packages: the same files at their places in /.
  r=$work/root-$arch
  install -D -m 0755 -t "$r/usr/bin" "$work/$arch"/leasewrap*
  mkdir -p "$r/usr/share/man/man1"
  for m in "$work"/gen/man/*.1; do gzip -9 -n -c "$m" >"$r/usr/share/man/man1/$(basename "$m").gz"; done
  c=$work/gen/completions
  install -D -m 0644 "$c/leasewrap.bash" "$r/usr/share/bash-completion/completions/leasewrap"
  install -D -m 0644 "$c/_leasewrap" "$r/usr/share/zsh/vendor-completions/_leasewrap"
  install -D -m 0644 "$c/leasewrap.fish" "$r/usr/share/fish/vendor_completions.d/leasewrap.fish"
  d=$r/usr/share/doc/leasewrap
  install -D -m 0644 README.md "$d/README.md"
  install -D -m 0644 LICENSE "$d/copyright"
  install -D -m 0644 NOTICE "$d/NOTICE"
  cp -r "$work/examples" "$d/examples"
  stamp "$r"
  cfg=$work/nfpm-$arch.yaml
  cp packaging/nfpm.yaml "$cfg"
  echo "contents:" >>"$cfg"
  (cd "$r" && find . -type f | LC_ALL=C sort) | while read -r f; do
    printf '  - src: %s\n    dst: %s\n    file_info: {mode: 0%o}\n' "$r/${f#./}" "${f#.}" "$(( $(stat -c '0%a' "$r/$f") ))" >>"$cfg"
  done
  for fmt in deb rpm; do
    VERSION=$version ARCH=$arch "$nfpm" package --config "$cfg" --packager "$fmt" --target "$DIST/$name.$fmt" >/dev/null
  done
done

# The SBOMs: the modules linked into each executable (its build
# information, as go version -m reads it), one CycloneDX document each.
for c in $cmds; do
  exe=$(basename "$c")
  "$cyclonedx" bin -json -noserial -notimestamp -version "$version" \
    -output "$work/$exe.cdx.json" "$work/$host/$exe"
  # leasewrap's own license on the main component (the tool reads none
  # from a binary).
  awk '!done && /^      "name": "github.com\/leasewrap\/leasewrap",$/ {
      print; print "      \"licenses\": [{\"license\": {\"id\": \"Apache-2.0\"}}],"; done = 1; next }
    { print }' "$work/$exe.cdx.json" >"$DIST/${exe}_${v}.cdx.json"
done

if [ "$IMAGE" = 1 ]; then
  ctx=$work/image
  for arch in $ARCHES; do mkdir -p "$ctx/$arch"; cp "$work/$arch"/leasewrap* "$ctx/$arch/"; done
  cp packaging/Dockerfile LICENSE NOTICE "$ctx/"
  stamp "$ctx"
  for arch in $ARCHES; do
    tag=localhost/leasewrap:${v//+/_}-$arch # no "+" in a tag
    podman build -q --pull=never --platform "linux/$arch" --timestamp "$SOURCE_DATE_EPOCH" \
      --identity-label=false -t "$tag" "$ctx" >/dev/null
    # The image is reproducible (content-addressed blobs, --timestamp),
    # but podman save --format oci-archive stamps the archive's own tar
    # entries with the time of saving: save the OCI layout as a directory
    # and tar it the way the tarballs are.
    layout=$work/oci-$arch
    podman save -q --format oci-dir -o "$layout" "$tag"
    stamp "$layout"
    tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
      --mode='u+rwX,go+rX,go-w' --format=gnu -C "$layout" -cf "$DIST/leasewrap_${v}_linux_$arch.oci.tar" blobs index.json oci-layout
  done
fi

rm -rf "$work"
(cd "$DIST" && sha256sum -- * >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
ls -l "$DIST"
