#!/usr/bin/env bash
# leasewrap lock vs etcdctl lock on one Debian etcd started here (loopback):
# hand-over latency (holder's child exits -> waiter's child runs) and
# takeover after SIGKILL of the holder (bounded by the TTL). Prints the
# median of N runs (default 5) in ms. Then the memory every process
# leasewrap adds (the wrapper and its job guard, the leasewrap binary
# beside LEASEWRAP when there is one; the job left out) against etcdctl
# lock's, summed VmRSS sampled every 50 ms over MEM_WINDOW s (default 10)
# of renewals every second: idle (median) and peak, in kB.
# The hand-over rounds are interleaved (leasewrap, etcdctl, and BEFORE
# when set: another leasewrap-etcd, e.g. main's build, order rotating each
# round) and reported as p50/p95 with the median of per-round ratios over
# etcdctl's, so a loaded machine's noise hits every variant alike.
# Usage: [BEFORE=path] [HANDOVER_N=20] [SECTIONS=handover,takeover,memory] bench.sh [LEASEWRAP] [N]
set -euo pipefail
LW=${1:-bin/leasewrap-etcd}; N=${2:-5}; HN=${HANDOVER_N:-20}
SECTIONS=${SECTIONS:-handover,takeover,memory}
want() { case ",$SECTIONS," in *",$1,"*) return 0;; esac; return 1; }
export ETCDCTL_API=3
. "$(dirname "$0")/lib.sh"
trap etcd_stop EXIT
etcd_start
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print int(a[int((NR+1)/2)]/1e6)}'; }
holder() { # tool name cmd...
  local tool=$1 name=$2 exe=$LW; shift 2
  [ "$tool" = before ] && exe=$BEFORE
  if [ "$tool" != etcdctl ]; then exec "$exe" -q lock run "$name" --endpoints "$EP" --ttl "${TTL:-5}s" --kill-grace 1s --renew-every 1s --wait 20s -- "$@"
  else exec etcdctl --endpoints "$EP" lock --ttl 5 "$name" -- "$@"; fi
}
# One hand-over: the holder's child writes its end time and exits; the
# waiter's child writes its start time. Prints the gap in ns.
handover() { # tool name
  local tool=$1 name=$2 h
  holder "$tool" "$name" sh -c "sleep 0.5; date +%s%N > $T/a" &
  h=$!; sleep 0.2
  (holder "$tool" "$name" sh -c "date +%s%N > $T/b")
  wait $h
  echo $(( $(cat "$T/b") - $(cat "$T/a") ))
}
if want handover; then
  tools=(lw etcdctl); [ -n "${BEFORE:-}" ] && tools=(lw before etcdctl)
  : > "$T/ho"
  for i in $(seq "$HN"); do
    k=$(( i % ${#tools[@]} ))
    for tool in "${tools[@]:k}" "${tools[@]:0:k}"; do
      echo "$i $tool $(handover "$tool" "h$tool$i")" >> "$T/ho"
    done
  done
  # p50/p95 per tool (ms), and the median over rounds of tool ÷ etcdctl.
  for tool in "${tools[@]}"; do
    awk -v t="$tool" '$2 == t {print $3}' "$T/ho" | sort -n |
      awk -v t="$tool" '{a[NR]=$1/1e6} END {printf "handover_ms %s p50 %.2f p95 %.2f (%d rounds)", t, a[int((NR+1)/2)], a[int(NR*0.95+0.5)], NR}'
    if [ "$tool" != etcdctl ]; then
      awk -v t="$tool" '$2 == t {x[$1]=$3} $2 == "etcdctl" {e[$1]=$3} END {for (r in x) if (e[r] > 0) print x[r]/e[r]}' "$T/ho" | sort -n |
        awk '{a[NR]=$1} END {printf " per-round ratio to etcdctl %.2f", a[int((NR+1)/2)]}'
    fi
    echo
  done
fi
if want takeover; then
for tool in lw etcdctl; do
  for i in $(seq "$N"); do
    holder $tool "k$tool$i" sleep 30 &
    h=$!; sleep 0.5
    # The waiter's own TTL is 10 s: until the supervisor measures a queued
    # lease's fence from its last keep-alive, a wait longer than the fence
    # (TTL - grace - margin) fences the waiter at once.
    TTL=10 holder $tool "k$tool$i" sh -c "date +%s%N > $T/b" &
    w=$!; sleep 0.3
    kids=$(cat /proc/$h/task/*/children 2>/dev/null || true)
    k=$(now); kill -9 $h; wait $w
    echo $(( $(cat $T/b) - k ))
    for c in $kids; do kill -9 "$c" 2>/dev/null || true; done  # etcdctl's orphaned child
  done | median | sed "s/^/takeover_after_sigkill_ms(ttl 5s) $tool /"
done
fi

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
  kill -TERM $pid 2>/dev/null || true
  for _ in $(seq 20); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true  # etcdctl may linger on TERM
  for k in $kids; do kill -9 "$k" 2>/dev/null || true; done  # etcdctl leaves its child
}
if want memory; then
  memory lw
  memory etcdctl
fi
