#!/usr/bin/env bash
# The pg kind's benchmark on a PostgreSQL 15 started here (loopback): hand-over
# of leasewrap pg run (with and without LISTEN/NOTIFY) against a
# pg_try_advisory_lock polling loop and ShedLock's statements polled at the same
# interval, takeover after SIGKILL of the holder, statements per renewal and per
# idle minute (pg_stat_statements), and the idle VmRSS of every process leasewrap
# adds. Prints a Markdown report; OUT=file also writes it there.
# Usage: [N=15] [WINDOW=30] [OUT=file] bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_BENCH_N=${N:-15} PG_BENCH_WINDOW=${WINDOW:-30} PG_BENCH_OUT=${OUT:-} \
  ${GO:-go} test -tags pgbench -count=1 -timeout 30m -run '^TestPGBench$' -v ./pg/test/ |
  grep -v -E '^(=== RUN|--- PASS|PASS|ok )|^ *[0-9]{4}-[0-9]{2}-[0-9]{2}T'
