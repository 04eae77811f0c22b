#!/usr/bin/env bash
# The load idle wrappers put on one etcd: N `leasewrap lock run` wrappers
# (distinct locks, default TTL 30 s, so one keep-alive each every ~10 s)
# hold for a while; prints the memory per wrapper (its own RSS plus its job
# guard's) and etcd's CPU time and request rate over a window. Usage:
# idle.sh [LEASEWRAP] [N] [SECONDS]
set -euo pipefail
LW=${1:-bin/leasewrap-etcd}; N=${2:-100}; S=${3:-30}
export ETCDCTL_API=3
. "$(dirname "$0")/lib.sh"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait "${pids[@]}" 2>/dev/null || true; etcd_stop; }
trap cleanup EXIT
etcd_start
for i in $(seq "$N"); do
  "$LW" -q lock run "idle$i" --endpoints "$EP" -- sleep $((S + 60)) &
  pids+=($!)
done
for _ in $(seq 1 300); do
  [ "$(etcdctl --endpoints "$EP" get --prefix idle --keys-only | grep -c . || true)" -ge "$N" ] && break
  sleep 0.1
done
cpu() { awk '{print $14 + $15}' "/proc/$EPID/stat"; }
reqs() { curl -s "$EP/metrics" 2>/dev/null | awk '/^grpc_server_handled_total/ {s += $2} END {print s+0}'; }
c0=$(cpu); r0=$(reqs); sleep "$S"; c1=$(cpu); r1=$(reqs)
rss=0
for p in "${pids[@]}"; do
  r=$(awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0); rss=$((rss + r))
  for g in $(pgrep -P "$p" || true); do   # the job guard and the job
    [ "$(tr '\0' ' ' < /proc/$g/cmdline | cut -d' ' -f1)" = sleep ] && continue
    r=$(awk '/VmRSS/ {print $2}' "/proc/$g/status" 2>/dev/null || echo 0); rss=$((rss + r))
  done
done
tck=$(getconf CLK_TCK)
echo "wrappers $N window ${S}s"
echo "rss_per_wrapper_kib $((rss / N)) (leasewrap-etcd + its job guard)"
echo "etcd_cpu_percent $(awk -v c=$((c1 - c0)) -v t="$tck" -v s="$S" 'BEGIN {printf "%.2f", 100 * c / t / s}')"
echo "etcd_grpc_requests_per_s $(awk -v r=$((r1 - r0)) -v s="$S" 'BEGIN {printf "%.1f", r / s}')"
