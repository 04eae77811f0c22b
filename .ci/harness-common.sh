# Sourced (POSIX sh) by each Rust interop harness's build.sh
# (lease/*/testdata/*/build.sh); .ci/rust-harnesses.sh runs those.
#
# harness_build DIR [SEED DEST [SED]] builds the Cargo package in DIR,
# offline, from Debian's packaged crates (/usr/share/cargo/registry as a
# directory registry, written to DIR/.cargo/config.toml). With SEED, a seed
# file ("name version", a blank line, then the Rust module), the module is
# first copied to DIR/DEST, edited by the sed script SED when given, and
# replaced only on change, so that a warm build is a no-op for cargo.
# CARGO names cargo (default: ~/.cargo/bin/cargo; Debian's 1.63 is too old).
harness_build() {
  hb_dir=$1
  hb_seed=${2:-}
  if [ -n "$hb_seed" ]; then
    hb_seed=$(cd "$(dirname "$hb_seed")" && pwd)/$(basename "$hb_seed")
  fi
  cd "$hb_dir"
  mkdir -p .cargo
  cat > .cargo/config.toml <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
  if [ -n "$hb_seed" ]; then
    tail -n +3 "$hb_seed" | sed "${4:-}" > "$3.new"
    if cmp -s "$3.new" "$3"; then rm "$3.new"; else mv "$3.new" "$3"; fi
  fi
  "${CARGO:-$HOME/.cargo/bin/cargo}" build --quiet
}
