#!/usr/bin/env bash
# Syscall counts of one `leasewrap KIND run … -- true` per kind (strace -f
# -c), next to flock(1). Under strace the claim kind cannot use ptrace (a
# process has one tracer), so it is counted with --anchor gate; the ptrace
# path saves the gate's exec (see the overhead table).
set -euo pipefail
bin=${1:?usage: strace.sh LEASEWRAP_BINARY}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FNO_EVENTS_PATH="$tmp/events.jsonl"
mkdir -p "$tmp/claims" "$tmp/home" "$tmp/sessions"
count() { # name, command...
  local name=$1; shift
  strace -f -c -o "$tmp/$name.txt" "$@" >/dev/null 2>&1 || { echo "| $name | failed under strace |"; return; }
  local total files
  total=$(awk '$NF=="total"{print $(NF-2)}' "$tmp/$name.txt")
  files=$(awk '$NF ~ /^(openat|mkdirat|unlinkat|linkat|renameat2?|rename|link|unlink|mkdir|rmdir|flock|fsync|fdatasync|write|newfstatat|statx|getdents64)$/ {c[$NF]=$4} END {for (k in c) printf "%s %s, ", k, c[k]}' "$tmp/$name.txt")
  echo "| $name | $total | ${files%, } |"
}
echo "## Syscalls per run (strace -f -c, whole process tree)"
echo
echo "| command | syscalls | file-system and lock calls |"
echo "| --- | --- | --- |"
# Warm-up runs (directories created, page cache warm).
flock -n "$tmp/flock.lock" true
"$bin" claim run bench:strace --root "$tmp/claims" --anchor gate -- true 2>/dev/null
"$bin" reserve run bench-strace-warm --home "$tmp/home" -- true 2>/dev/null
"$bin" session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --root "$tmp/sessions" --epoch 6 -- true 2>/dev/null
count "flock -n FILE true" flock -n "$tmp/flock.lock" true
count "claim run --anchor gate" "$bin" claim run bench:strace --root "$tmp/claims" --anchor gate -- true
count "reserve run (new key)" "$bin" reserve run bench-strace-new --home "$tmp/home" -- true
count "session run" "$bin" session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --root "$tmp/sessions" --epoch 6 -- true
count "leasewrap --version" "$bin" --version
echo
