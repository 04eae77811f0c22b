#!/bin/sh
# make demo: real wrapped jobs on a scratch directory, one per lease kind.
# Usage: examples/demo.sh [path/to/leasewrap]
set -eu
LW=${1:-bin/leasewrap}
LW=$(cd "$(dirname "$LW")" && pwd)/$(basename "$LW")
CHILD=$(cd "$(dirname "$0")" && pwd)/shell/child.sh
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/leasewrap-demo.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"
export FNO_EVENTS_PATH="$SCRATCH/events.jsonl" ORCHESTRATECTL_HOME="$SCRATCH/orch"
say() { printf '\n== %s\n' "$*"; }

say "flock: the lock flock(1) takes; a job holds it for 2s, flock(1) and a second wrapper are refused, a third waits"
"$LW" flock run "$SCRATCH/nightly.lock" -- sh -c "$CHILD; sleep 2" &
holder=$!
sleep 0.3
set +e
flock -n "$SCRATCH/nightly.lock" echo "never printed"
echo "flock(1) -n exited $? (1 = held, flock(1)'s code)"
"$LW" flock run "$SCRATCH/nightly.lock" -- echo "never printed"
echo "second wrapper exited $? (75 = held by another)"
out=$("$LW" -q flock run "$SCRATCH/nightly.lock" -- echo "never printed" 2>&1)
echo "with -q (a crontab line): exited $?, printed ${#out} bytes"
"$LW" flock run "$SCRATCH/nightly.lock" --wait 10s -- echo "third flock wrapper ran after the holder exited"
set -e
wait $holder
flock -n "$SCRATCH/nightly.lock" echo "flock(1) -n got the lock once every wrapper was done"
# --- metrics file: a flock run with --metrics-file and the file it wrote go here ---

say "claim: a job holds build:nightly for 2s; a second wrapper is refused (75), a third waits"
"$LW" claim run build:nightly --root "$SCRATCH" -- sh -c "$CHILD; sleep 2" &
holder=$!
sleep 0.3
set +e
"$LW" claim run build:nightly --root "$SCRATCH" -- echo "never printed"
echo "second wrapper exited $? (75 = held by another)"
"$LW" claim run build:nightly --root "$SCRATCH" --wait 10s -- echo "third wrapper ran after the holder exited"
echo "third wrapper exited $?"
set -e
wait $holder
echo "claim status after everyone exited:"
"$LW" claim status build:nightly --root "$SCRATCH"

say "reserve: run export-2026-11-29 once; the retry replays the recorded exit code"
"$LW" reserve run export-2026-11-29 -- sh -c "$CHILD && echo exporting && exit 0"
"$LW" reserve run export-2026-11-29 -- echo "never printed: already published"
echo "retry exited $? (replayed)"
"$LW" reserve lookup export-2026-11-29

say "session: own a session while the child runs, with the owner record's lock inherited"
"$LW" session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --root "$SCRATCH/bcode" --epoch 6 -- "$CHILD"

# --- metrics (ops): --metrics-file, for node_exporter's textfile collector ---
say "metrics: each run updates a Prometheus textfile; runs_total is carried across runs"
"$LW" claim run metrics:demo --root "$SCRATCH" --metrics-file "$SCRATCH/demo.prom" --metrics-name demo -- true
"$LW" claim run metrics:demo --root "$SCRATCH" --metrics-file "$SCRATCH/demo.prom" --metrics-name demo -- sh -c 'exit 3' || echo "second run exited $?"
grep -v '^#' "$SCRATCH/demo.prom"
# --- end of metrics ---

say "done: every lease was settled"
