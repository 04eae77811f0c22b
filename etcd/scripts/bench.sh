#!/usr/bin/env bash
# leasewrap lock vs etcdctl lock on one Debian etcd started here (loopback):
# hand-over latency (holder's child exits -> waiter's child runs) and
# takeover after SIGKILL of the holder (bounded by the TTL). Prints the
# median of N runs (default 5) in ms. Usage: bench.sh [LEASEWRAP] [N]
set -euo pipefail
LW=${1:-bin/leasewrap-etcd}; N=${2:-5}
export ETCDCTL_API=3
. "$(dirname "$0")/lib.sh"
trap etcd_stop EXIT
etcd_start
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print int(a[int((NR+1)/2)]/1e6)}'; }
holder() { # tool name cmd...
  local tool=$1 name=$2; shift 2
  if [ "$tool" = lw ]; then exec "$LW" -q lock run "$name" --endpoints "$EP" --ttl "${TTL:-5}s" --kill-grace 1s --renew-every 1s --wait 20s -- "$@"
  else exec etcdctl --endpoints "$EP" lock --ttl 5 "$name" -- "$@"; fi
}
for tool in lw etcdctl; do
  for i in $(seq "$N"); do
    holder $tool "h$tool$i" sh -c "sleep 0.5; date +%s%N > $T/a" &
    h=$!; sleep 0.2
    (holder $tool "h$tool$i" sh -c "date +%s%N > $T/b")
    wait $h
    echo $(( $(cat $T/b) - $(cat $T/a) ))
  done | median | sed "s/^/handover_ms $tool /"
  for i in $(seq "$N"); do
    holder $tool "k$tool$i" sleep 30 &
    h=$!; sleep 0.5
    # The waiter's own TTL is 10 s: until the supervisor measures a queued
    # lease's fence from its last keep-alive, a wait longer than the fence
    # (TTL - grace - margin) fences the waiter at once.
    TTL=10 holder $tool "k$tool$i" sh -c "date +%s%N > $T/b" &
    w=$!; sleep 0.3
    k=$(now); kill -9 $h; wait $w
    echo $(( $(cat $T/b) - k ))
    pkill -9 -f "sleep 30" 2>/dev/null || true  # etcdctl's orphaned child
  done | median | sed "s/^/takeover_after_sigkill_ms(ttl 5s) $tool /"
done
