#!/usr/bin/env bash
# Demo of `lock` and `once` against an etcd this script starts itself
# (Debian's etcd-server and etcd-client: apt-get install etcd-server
# etcd-client), on free loopback ports. Usage: demo.sh [LEASEWRAP]
#   LEASEWRAP: the binary serving lock/once (bin/leasewrap once `leasewrap
#   lock|once` executes leasewrap-etcd; default bin/leasewrap-etcd).
set -euo pipefail
LW=${1:-bin/leasewrap-etcd}
for b in etcd etcdctl "$LW"; do
  command -v "$b" >/dev/null || { echo "demo: $b not found (apt-get install etcd-server etcd-client; make build)" >&2; exit 1; }
done
export ETCDCTL_API=3
. "$(dirname "$0")/../../etcd/scripts/lib.sh"
trap etcd_stop EXIT
etcd_start
export ETCDCTL_ENDPOINTS=$EP
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say "$LW lock run demo -- sh -c 'echo holder: key \$ETCD_LOCK_KEY fence \$LEASEWRAP_FENCE; sleep 2' &"
"$LW" -q lock run demo -- sh -c 'echo holder: key $ETCD_LOCK_KEY fence $LEASEWRAP_FENCE; sleep 2' &
HOLDER=$!
sleep 0.5
say "$LW lock holders demo"
"$LW" lock holders demo
say "$LW lock run demo -- true        # try-lock while held: 75"
"$LW" -q lock run demo -- true || echo "exit $?"
say "$LW lock run demo --wait 10s -- echo second holder ran   # queues, runs after the first"
"$LW" -q lock run demo --wait 10s -- echo second holder ran
wait "$HOLDER"

say "$LW once run report-\$(date +%F) -- sh -c 'echo running the report; exit 0'"
"$LW" -q once run "report-$(date +%F)" -- sh -c 'echo running the report; exit 0'
say "$LW once run report-\$(date +%F) -- sh -c 'echo running the report; exit 0'   # replayed, not run"
"$LW" -q once run "report-$(date +%F)" -- sh -c 'echo running the report; exit 0'; echo "exit $?"
say "$LW once lookup report-\$(date +%F)"
"$LW" once lookup "report-$(date +%F)"
