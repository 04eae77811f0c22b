#!/usr/bin/env bash
# leasewrap lock vs etcdctl lock on one Debian etcd started here (loopback):
# hand-over latency (holder's child exits -> waiter's child runs) and
# takeover after SIGKILL of the holder (bounded by the TTL). Prints the
# median of N runs (default 5) in ms. Then the memory every process
# leasewrap adds (the wrapper and its job guard, the leasewrap binary
# beside LEASEWRAP when there is one; the job left out) against etcdctl
# lock's, summed VmRSS sampled every 50 ms over MEM_WINDOW s (default 10)
# of renewals every second: idle (median) and peak, in kB.
# Usage: bench.sh [LEASEWRAP] [N]
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

# Memory: VmRSS summed over a process and its descendants, the job (sleep)
# left out, sampled while the holder renews every second.
tree_rss() {
  local total=0 p comm
  local -a todo=("$1")
  while [ ${#todo[@]} -gt 0 ]; do
    p=${todo[0]}; todo=("${todo[@]:1}")
    comm=$(cat /proc/$p/comm 2>/dev/null || true)
    if [ -n "$comm" ] && [ "$comm" != sleep ]; then
      total=$(( total + $(awk '/^VmRSS:/ {print $2}' /proc/$p/status 2>/dev/null || echo 0) ))
    fi
    for c in $(cat /proc/$p/task/*/children 2>/dev/null); do todo+=("$c"); done
  done
  echo $total
}
memory() { # tool
  local tool=$1 pid
  if [ "$tool" = lw ]; then "$LW" -q lock run "m$tool" --endpoints "$EP" --ttl 5s --kill-grace 1s --renew-every 1s -- sleep 600 &
  else etcdctl --endpoints "$EP" lock --ttl 5 "m$tool" -- sleep 600 & fi
  pid=$!
  sleep 2
  local end=$(( $(date +%s) + ${MEM_WINDOW:-10} ))
  while [ "$(date +%s)" -lt "$end" ]; do tree_rss $pid; sleep 0.05; done | sort -n |
    awk -v t="$tool" '{a[NR]=$1} END {printf "memory_rss_kB %s idle %d peak %d (%d samples)\n", t, a[int((NR+1)/2)], a[NR], NR}'
  local kids; kids=$(cat /proc/$pid/task/*/children 2>/dev/null || true)
  kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  for k in $kids; do kill -9 "$k" 2>/dev/null || true; done  # etcdctl leaves its child
}
memory lw
memory etcdctl
